/**
 * Alert rules and channels of the active team (/team/alerts): quick switches for the system
 * rules, custom rules, and the channels alerts are sent through. Admins edit; everyone else in
 * the team reads.
 */
import { Link } from 'react-router';
import { isStreamChannel, useAlertChannels, useAlertRules } from '../api/hooks/alert-rules';
import { useSatellites } from '../api/hooks/satellites';
import { atLeast } from '../roles';
import { useT } from '../i18n';
import { useSession } from '../session';
import { ErrorText, Loading } from '../components/ui';
import { SystemRules } from '../components/alerts/SystemRules';
import { RuleList } from '../components/alerts/RuleList';
import { ChannelList } from '../components/alerts/ChannelList';
import { NoTeam } from '../components/NoTeam';

export default function AlertSettings() {
  const t = useT();
  const { team, role, me } = useSession();
  const tenantId = team?.id ?? '';
  const editable = atLeast(role, 'admin') || me.user.isAdmin;
  const rules = useAlertRules(tenantId);
  const channels = useAlertChannels(tenantId);
  const satellites = useSatellites(team?.id ?? null);

  if (!team) return <NoTeam />;
  const ruleRows = rules.data?.rules ?? [];
  const channelRows = channels.data?.channels ?? [];
  // Home Assistant and BirdWeather take every detection by themselves: rules cannot pick them.
  const ruleChannels = channelRows.filter((c) => !isStreamChannel(c.type));
  const sats = satellites.data?.satellites ?? [];
  return (
    <section aria-labelledby="alert-settings-title" className="alerts-editor">
      <h1 id="alert-settings-title">
        {t('alertSettings.title')}: {team.name}
      </h1>
      <p className="row">
        <Link to="/alerts">{t('alertSettings.back')}</Link>
      </p>
      {editable ? null : (
        <p className="card banner" role="note">
          {t('alertSettings.readOnly')}
        </p>
      )}
      <ErrorText error={rules.error ?? channels.error} />
      {rules.isLoading || channels.isLoading ? (
        <Loading />
      ) : (
        <>
          <h2>{t('alerts.system.title')}</h2>
          <SystemRules tenantId={tenantId} rules={ruleRows} channels={ruleChannels} editable={editable} />
          <h2>{t('rules.title')}</h2>
          <RuleList tenantId={tenantId} rules={ruleRows} channels={ruleChannels} satellites={sats} editable={editable} />
          <h2>{t('channels.title')}</h2>
          <ChannelList tenantId={tenantId} channels={channelRows} editable={editable} />
        </>
      )}
    </section>
  );
}
