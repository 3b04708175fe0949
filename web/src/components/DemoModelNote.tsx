/**
 * One line on the Detections and Fleet pages while the team's chunks are classified by the
 * built-in demonstration model (docs/model.md): it knows five synthetic calls, not real birds,
 * so people are told so, and how to install a real model. With a real model, the line names it.
 */
import { Link } from 'react-router';
import { useTeamModel } from '../api/hooks/team-model';
import { useT } from '../i18n';
import { useSession } from '../session';

export function DemoModelNote({ tenantId }: { tenantId: string }) {
  const t = useT();
  const { me } = useSession();
  const model = useTeamModel(tenantId);
  if (!model) return null;
  if (!model.builtin) {
    const name = model.version ? `${model.name} ${model.version}` : model.name;
    return (
      <p className="small muted" data-testid="team-model">
        {t('demoModel.identifiedBy', { name })}
      </p>
    );
  }
  return (
    <p className="card banner" role="note" data-testid="demo-model-note">
      {t('demoModel.note')} {me.user.isAdmin ? <Link to="/admin/models/install">{t('demoModel.install')}</Link> : t('demoModel.askAdmin')}
    </p>
  );
}
