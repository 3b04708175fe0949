/** An invite link opened by someone already signed in: join that team with the invite's role. */
import { useNavigate } from 'react-router';
import { useRoleName, useT } from '../i18n';
import { useAcceptInvite } from '../api/hooks/account';
import { useSession } from '../session';
import { ErrorText } from '../components/ui';
import { InviteOffer } from '../components/InviteOffer';

export default function JoinInvite({ token }: { token: string }) {
  const t = useT();
  const roleName = useRoleName();
  const navigate = useNavigate();
  const { me, setTeamId } = useSession();
  const accept = useAcceptInvite(token, (r) => {
    setTeamId(r.tenantId);
    navigate('/detections', { replace: true });
  });
  return (
    <section aria-labelledby="join-title" className="narrow">
      <h1 id="join-title">{t('invite.title')}</h1>
      <p>{t('invite.signedInAs', { name: me.user.name, email: me.user.email })}</p>
      <InviteOffer token={token} signedIn />
      <div className="row">
        <button type="button" disabled={accept.isPending || accept.isSuccess} onClick={() => accept.mutate()}>
          {t('invite.join')}
        </button>
        <button type="button" className="secondary" onClick={() => navigate('/detections', { replace: true })}>
          {t('common.cancel')}
        </button>
      </div>
      <ErrorText error={accept.error} />
      {accept.data ? <p role="status">{t('invite.joined', { role: roleName(accept.data.role) })}</p> : null}
    </section>
  );
}
