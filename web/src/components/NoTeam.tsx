/**
 * What a signed-in person without a team sees on every team page: the way to their own team
 * first (a fresh hub's first admin starts here), then the directory when the hub has one.
 */
import { Link } from 'react-router';
import { useT } from '../i18n';
import { useHubInfo } from '../api/hooks/system';
import { useSession } from '../session';

export function NoTeam() {
  const t = useT();
  const { me } = useSession();
  const info = useHubInfo();
  const mayCreate = me.user.isAdmin || info.data?.teamCreation === true;
  return (
    <section aria-labelledby="no-team-title" className="narrow card" data-testid="no-team">
      <h1 id="no-team-title">{mayCreate ? t('noTeam.createTitle') : t('noTeam.title')}</h1>
      <p>{mayCreate ? t('noTeam.createHint') : t('common.noTeam')}</p>
      <div className="row">
        {mayCreate ? (
          <Link className="button" to="/teams/new">
            {t('noTeam.create')}
          </Link>
        ) : null}
        <Link to="/teams">{t('noTeam.directory')}</Link>
      </div>
    </section>
  );
}
