/** Hub admins: the audio the hub stores in total and per team, its growth, and the disk it writes to (issue 23). */
import { useSystemStorage } from '../../api/hooks/system';
import { useT } from '../../i18n';
import { useFormat } from '../../session';
import { ErrorText, Loading } from '../ui';
import { DiskFacts, DiskWarning } from '../Storage';

export function SystemStorage() {
  const t = useT();
  const fmt = useFormat();
  const q = useSystemStorage();
  if (q.isPending) return <Loading />;
  if (!q.data) return <ErrorText error={q.error} />;
  const s = q.data;
  return (
    <div data-testid="system-storage">
      <DiskWarning disk={s.disk} />
      <dl>
        <dt>{t('storage.hubTotal')}</dt>
        <dd data-testid="hub-total">
          {fmt.bytes(s.totalBytes)} <span className="muted small">({t('storage.chunks', { n: s.chunks })})</span>
        </dd>
        <DiskFacts disk={s.disk} windowDays={s.windowDays} minHistoryDays={s.minHistoryDays} />
      </dl>
      {s.teams.length === 0 ? (
        <p className="muted">{t('storage.noAudio')}</p>
      ) : (
        <div className="table-wrap">
          <table aria-label={t('storage.teams')}>
            <thead>
              <tr>
                <th scope="col">{t('storage.team')}</th>
                <th scope="col">{t('storage.stored')}</th>
                <th scope="col">{t('storage.growth')}</th>
                <th scope="col">{t('storage.satellites')}</th>
              </tr>
            </thead>
            <tbody>
              {s.teams.map((team) => (
                <tr key={team.tenantId}>
                  <th scope="row">{team.name}</th>
                  <td>{fmt.bytes(team.storedBytes)}</td>
                  <td>
                    {team.growthBytesPerDay === null
                      ? t('storage.noHistory')
                      : t('storage.perDay', { bytes: fmt.bytes(team.growthBytesPerDay) })}
                  </td>
                  <td>{team.satellites}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
