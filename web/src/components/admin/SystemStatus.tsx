/** Hub admins: the hub's processes (service registry), infrastructure checks with latency, and the data summary; refreshed every 10 s. */
import { useHubInfo, useSystemStatus, type InfraCheck } from '../../api/hooks/system';
import { useT } from '../../i18n';
import { useFormat } from '../../session';
import { ErrorText, Loading } from '../ui';

function uptime(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m ${seconds % 60}s`;
}

/** A service's details (queue depth, MQTT clients, inference jobs) as short "key: value" text. */
function detailsText(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([k, v]) =>
      v && typeof v === 'object'
        ? `${k}: ${Object.entries(v as Record<string, unknown>)
            .map(([kk, vv]) => `${kk} ${String(vv)}`)
            .join(', ')}`
        : `${k}: ${String(v)}`,
    )
    .join(' · ');
}

export function SystemStatus() {
  const t = useT();
  const fmt = useFormat();
  const status = useSystemStatus();
  const info = useHubInfo();
  if (status.isPending) return <Loading />;
  if (!status.data) return <ErrorText error={status.error} />;
  const { services, infrastructure, data } = status.data;
  const checks: Array<[string, InfraCheck]> = [
    [t('system.database'), infrastructure.database],
    [t('system.kv'), infrastructure.kv],
    [t('system.broker'), infrastructure.broker],
    [t('system.storage'), infrastructure.storage],
  ];
  return (
    <div data-testid="system-status">
      <p className="muted small">{t('system.hint')}</p>
      <ErrorText error={status.error} />
      <h3>{t('system.services')}</h3>
      <div className="table-wrap">
        <table aria-label={t('system.services')}>
          <thead>
            <tr>
              <th scope="col">{t('system.mode')}</th>
              <th scope="col">{t('system.version')}</th>
              <th scope="col">{t('system.uptime')}</th>
              <th scope="col">{t('system.memory')}</th>
              <th scope="col">{t('system.host')}</th>
              <th scope="col">{t('system.details')}</th>
            </tr>
          </thead>
          <tbody>
            {services.length === 0 ? (
              <tr>
                <td colSpan={6} className="muted">
                  {t('system.noServices')}
                </td>
              </tr>
            ) : null}
            {services.map((s) => (
              <tr key={s.id}>
                <td>{s.mode}</td>
                <td>{s.version}</td>
                <td title={fmt.dateTime(s.startedAt)}>{uptime(s.uptimeSeconds)}</td>
                <td>
                  {fmt.bytes(s.memory.rss)}{' '}
                  <span className="muted small">
                    ({t('system.heap')} {fmt.bytes(s.memory.heapUsed)})
                  </span>
                </td>
                <td>
                  {s.hostname} <span className="muted small">{s.ip}</span>
                </td>
                <td className="small">{detailsText(s.details)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <h3>{t('system.infrastructure')}</h3>
      <div className="table-wrap">
        <table aria-label={t('system.infrastructure')}>
          <tbody>
            {checks.map(([name, c]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>{c.kind}</td>
                <td>{c.ok ? t('system.ok') : t('system.down')}</td>
                <td>{`${c.latencyMs} ms`}</td>
                <td className="small">{c.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      {info.data ? (
        <p data-testid="system-mail" className={info.data.mail ? 'small' : 'card banner'}>
          <strong>{t('system.mail')}:</strong> {t(info.data.mail ? 'system.mail.on' : 'system.mail.off')}
        </p>
      ) : null}

      <h3>{t('system.data')}</h3>
      <dl>
        <dt>{t('system.detections')}</dt>
        <dd>
          {data.detections.total}{' '}
          <span className="muted small">
            ({t('system.tentative')} {data.detections.tentative})
          </span>
        </dd>
        <dt>{t('system.chunks')}</dt>
        <dd>{data.chunks}</dd>
        <dt>{t('system.queue')}</dt>
        <dd>
          {t('system.queueCounts', {
            waiting: data.inferenceQueue.waiting,
            active: data.inferenceQueue.active,
            delayed: data.inferenceQueue.delayed,
            failed: data.inferenceQueue.failed,
          })}
        </dd>
        <dt>{t('system.speciesImages')}</dt>
        <dd>{data.speciesImages.supported ? data.speciesImages.withImage : t('system.speciesImagesNone')}</dd>
        <dt>{t('system.tenants')}</dt>
        <dd>{data.tenants}</dd>
        <dt>{t('system.users')}</dt>
        <dd>{data.users}</dd>
      </dl>
    </div>
  );
}
