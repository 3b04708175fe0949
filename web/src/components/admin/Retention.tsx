/** Hub admins: audio retention runs (storage and retention), with "Run now". */
import { useRetentionRuns, useRunRetention } from '../../api/hooks/retention';
import { useT } from '../../i18n';
import { useFormat } from '../../session';
import { ErrorText } from '../ui';

export function Retention() {
  const t = useT();
  const fmt = useFormat();
  const runs = useRetentionRuns();
  const run = useRunRetention();
  const running = runs.data?.runs.some((r) => r.status === 'running') ?? false;
  return (
    <>
      <p className="muted small">{t('retention.hint')}</p>
      <div className="row">
        <button type="button" onClick={() => run.mutate()} disabled={run.isPending || running}>
          {t('retention.runNow')}
        </button>
        {running ? <span role="status">{t('retention.running')}</span> : null}
      </div>
      <ErrorText error={run.error} />
      <ErrorText error={runs.error} />
      <div className="table-wrap">
        <table aria-label={t('retention.runs')}>
          <thead>
            <tr>
              <th scope="col">{t('retention.started')}</th>
              <th scope="col">{t('retention.trigger')}</th>
              <th scope="col">{t('admin.status')}</th>
              <th scope="col">{t('retention.removed')}</th>
              <th scope="col">{t('retention.freed')}</th>
              <th scope="col">{t('retention.kept')}</th>
            </tr>
          </thead>
          <tbody>
            {runs.data?.runs.length === 0 ? (
              <tr>
                <td colSpan={6} className="muted">
                  {t('retention.none')}
                </td>
              </tr>
            ) : null}
            {runs.data?.runs.map((r) => (
              <tr key={r.id}>
                <td>
                  {fmt.dateTime(r.startedAt)}
                  {r.finishedAt ? <span className="muted small"> → {fmt.dateTime(r.finishedAt)}</span> : null}
                </td>
                <td>{t(`retention.trigger.${r.trigger}`)}</td>
                <td>
                  {t(`retention.status.${r.status}`)}
                  {r.error ? <span className="small"> {r.error}</span> : null}
                </td>
                <td>{r.chunksRemoved}</td>
                <td>{fmt.bytes(r.bytesFreed)}</td>
                <td>{r.chunksKept}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
