/**
 * Scheduled exports of the active team (/team/exports, admins): files sent on a cron schedule
 * through an email or webhook channel, with their next and last runs.
 */
import { Link } from 'react-router';
import { useScheduledExports } from '../api/hooks/exports';
import { useAlertChannels } from '../api/hooks/alert-rules';
import { useSatellites } from '../api/hooks/satellites';
import { useEffectiveSettings } from '../api/hooks/settings';
import { atLeast } from '../roles';
import { useT } from '../i18n';
import { useSession } from '../session';
import { ErrorText, Loading } from '../components/ui';
import { ScheduledList } from '../components/exports/ScheduledList';
import { NoTeam } from '../components/NoTeam';

export default function ScheduledExports() {
  const t = useT();
  const { team, role, me } = useSession();
  const tenantId = team?.id ?? '';
  const admin = atLeast(role, 'admin') || me.user.isAdmin;
  const scheduled = useScheduledExports(team?.id ?? null, admin);
  const channels = useAlertChannels(admin ? tenantId : '');
  const satellites = useSatellites(admin ? (team?.id ?? null) : null);
  const settings = useEffectiveSettings({ tenantId }, admin && !!tenantId);

  if (!team) return <NoTeam />;
  const zone = settings.data?.settings.find((s) => s.key === 'time_zone')?.value;
  const teamTimeZone = typeof zone === 'string' && zone ? zone : 'UTC';
  return (
    <section aria-labelledby="scheduled-title" className="exports-editor">
      <h1 id="scheduled-title">
        {t('scheduled.title')}: {team.name}
      </h1>
      <p className="row">
        <Link to="/team">{t('scheduled.back')}</Link>
        <Link to="/export">{t('scheduled.toExport')}</Link>
      </p>
      <p className="muted">{t('scheduled.intro')}</p>
      {admin ? (
        <>
          <ErrorText error={scheduled.error ?? channels.error ?? satellites.error} />
          {scheduled.isLoading || channels.isLoading || settings.isLoading ? (
            <Loading />
          ) : (
            <ScheduledList
              tenantId={tenantId}
              scheduled={scheduled.data?.scheduled ?? []}
              channels={channels.data?.channels ?? []}
              satellites={satellites.data?.satellites ?? []}
              teamTimeZone={teamTimeZone}
            />
          )}
        </>
      ) : (
        <p className="card banner" role="note">
          {t('scheduled.adminsOnly')}
        </p>
      )}
    </section>
  );
}
