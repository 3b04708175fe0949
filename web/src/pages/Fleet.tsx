/** The fleet: satellites with state and telemetry, and registration with its one-time credentials. */
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data } from '../api/client';
import { atLeast, type Registration, type Satellite } from '../api/types';
import { useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { CopyButton, ErrorText, Field, Loading } from '../components/ui';

function uptime(s: number | null): string {
  if (s === null) return '—';
  const h = Math.floor(s / 3600);
  return h >= 24 ? `${Math.floor(h / 24)} d ${h % 24} h` : `${h} h ${Math.floor((s % 3600) / 60)} min`;
}

function stats(o: Record<string, number> | null): string {
  if (!o) return '—';
  return Object.entries(o)
    .map(([k, v]) => `${k} ${v}`)
    .join(' · ');
}

export default function Fleet() {
  const t = useT();
  const fmt = useFormat();
  const qc = useQueryClient();
  const { team, role } = useSession();
  const tenantId = team?.id ?? null;
  const [showArchived, setShowArchived] = useState(false);
  const list = useQuery({
    queryKey: ['satellites', tenantId, showArchived],
    enabled: tenantId !== null,
    refetchInterval: 30_000,
    queryFn: () => data<{ satellites: Satellite[] }>(api.GET('/api/satellites', { params: { query: { tenantId: tenantId!, ...(showArchived ? { includeArchived: '1' } : {}) } } })),
  });

  const [name, setName] = useState('');
  const [creds, setCreds] = useState<{ reg: Registration; name: string } | null>(null);
  const register = useMutation({
    mutationFn: (n: string) => data<Registration>(api.POST('/api/satellites', { body: { tenantId: tenantId!, name: n } })),
    onSuccess: (reg, n) => {
      setCreds({ reg, name: n });
      setName('');
      void qc.invalidateQueries({ queryKey: ['satellites', tenantId] });
    },
  });

  if (!team) return <p>{t('common.noTeam')}</p>;
  const mayRegister = atLeast(role, 'member');

  function submit(e: FormEvent) {
    e.preventDefault();
    register.mutate(name.trim());
  }

  const config = creds
    ? JSON.stringify(
        {
          hub: location.origin,
          satelliteId: creds.reg.id,
          tenantId,
          username: creds.reg.mqtt.username,
          password: creds.reg.mqtt.password,
          brokerUrl: creds.reg.mqtt.brokerUrl,
          wsUrl: creds.reg.mqtt.wsUrl ?? null,
          apiKey: creds.reg.apiKey,
          name: creds.name,
        },
        null,
        2,
      )
    : '';

  return (
    <section aria-labelledby="fleet-title">
      <h1 id="fleet-title">{t('fleet.title')}</h1>
      {mayRegister ? (
        <form onSubmit={submit} className="row card" aria-label={t('fleet.register')}>
          <Field label={t('fleet.name')}>{(id) => <input id={id} name="satelliteName" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />}</Field>
          <button type="submit" disabled={register.isPending}>
            {t('fleet.register')}
          </button>
          <ErrorText error={register.error} />
        </form>
      ) : null}
      {creds ? (
        <div className="card credentials" role="region" aria-label={t('fleet.credentials')} data-testid="credentials">
          <h2>{t('fleet.credentials')}</h2>
          <p>{t('fleet.credentialsHint')}</p>
          <dl>
            <dt>{t('fleet.mqttPassword')}</dt>
            <dd>
              <code data-testid="mqtt-password">{creds.reg.mqtt.password}</code> <CopyButton text={creds.reg.mqtt.password} />
            </dd>
            <dt>{t('fleet.apiKey')}</dt>
            <dd>
              <code data-testid="api-key">{creds.reg.apiKey}</code> <CopyButton text={creds.reg.apiKey} />
            </dd>
          </dl>
          <h3>{t('fleet.config')}</h3>
          <pre>{config}</pre>
          <div className="row">
            <CopyButton text={config} />
            <Link to={`/fleet/${creds.reg.id}`}>{creds.name}</Link>
            <button type="button" className="secondary" onClick={() => setCreds(null)}>
              {t('common.close')}
            </button>
          </div>
        </div>
      ) : null}
      <label className="check">
        <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} />
        {t('fleet.showArchived')}
      </label>
      <ErrorText error={list.error} />
      {list.isLoading ? <Loading /> : null}
      {list.data && list.data.satellites.length === 0 ? <p>{t('fleet.none')}</p> : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('fleet.name')}</th>
              <th scope="col">{t('fleet.online')}</th>
              <th scope="col">{t('fleet.lastSeen')}</th>
              <th scope="col">{t('fleet.version')}</th>
              <th scope="col">{t('fleet.uptime')}</th>
              <th scope="col">{t('fleet.noise')}</th>
              <th scope="col">{t('fleet.outbox')}</th>
              <th scope="col">{t('fleet.filter')}</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.satellites.map((s) => (
              <tr key={s.id} data-testid="satellite-row">
                <th scope="row">
                  <Link to={`/fleet/${s.id}`}>{s.name}</Link>
                  {s.archived ? <span className="badge">{t('fleet.archived')}</span> : null}
                </th>
                <td>
                  <span className={`pill ${s.online ? 'ok' : 'off'}`}>{s.online ? t('fleet.online') : t('fleet.offline')}</span>
                </td>
                <td>{s.lastSeenAt ? fmt.dateTime(s.lastSeenAt) : t('common.never')}</td>
                <td>
                  {s.version ?? '—'}
                  {s.update_status ? <span className="muted small"> ({s.update_status})</span> : null}
                </td>
                <td>{uptime(s.uptimeSeconds)}</td>
                <td>{s.noiseFloorRms === null ? '—' : s.noiseFloorRms.toFixed(4)}</td>
                <td className="small">{stats(s.outboxStats)}</td>
                <td className="small">{stats(s.filterStats)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
