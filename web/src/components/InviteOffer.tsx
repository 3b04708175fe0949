/**
 * What an invite link offers, in one sentence: the team, who invites and with which role
 * (issue 23). Shown on the registration page and on the page a signed-in person lands on.
 */
import { ApiError } from '../api/client';
import { useInviteSummary } from '../api/hooks/invites';
import { useRoleName, useT } from '../i18n';
import { useFormat } from '../session';
import { ErrorText } from './ui';

function Expiry({ iso }: { iso: string }) {
  const t = useT();
  const fmt = useFormat();
  return <small>{t('invite.expires', { when: fmt.dateTime(iso) })}</small>;
}

export function InviteOffer({ token, signedIn }: { token: string; signedIn: boolean }) {
  const t = useT();
  const roleName = useRoleName();
  const q = useInviteSummary(token);
  if (q.error instanceof ApiError && q.error.status === 404) {
    return (
      <p className="error" role="alert" data-testid="invite-offer">
        {t('invite.invalid')}
      </p>
    );
  }
  if (q.error) return <ErrorText error={q.error} />;
  if (!q.data) return <p aria-busy="true">{t('register.invite')}</p>;
  const vars = { team: q.data.teamName, inviter: q.data.inviterName ?? t('invite.someone'), role: roleName(q.data.role) };
  return (
    <div data-testid="invite-offer">
      <p className="wrap">{t('invite.offer', vars)}</p>
      <p className="small">{t(`invite.roleMeans.${q.data.role}`)}</p>
      {signedIn ? <Expiry iso={q.data.expiresAt} /> : null}
    </div>
  );
}
