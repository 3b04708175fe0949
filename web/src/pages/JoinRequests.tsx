/** A team's pending join requests (approve with a role, or deny and optionally block) and its blocks. */
import { useBlocks, useJoinRequestMutations, useJoinRequests } from '../api/hooks/joining';
import { useRoleName, useT } from '../i18n';
import { useFormat } from '../session';
import { EmptyNote, ErrorText } from '../components/ui';

export function JoinRequests({ tenantId }: { tenantId: string }) {
  const t = useT();
  const roleName = useRoleName();
  const fmt = useFormat();
  const requests = useJoinRequests(tenantId);
  const blocks = useBlocks(tenantId);
  const { approve, deny, unblock } = useJoinRequestMutations(tenantId);

  return (
    <>
      <h2>{t('team.joinRequests')}</h2>
      <ErrorText error={requests.error} />
      {requests.data && requests.data.requests.length === 0 ? <EmptyNote>{t('joinRequests.empty')}</EmptyNote> : null}
      <ul>
        {requests.data?.requests.map((r) => (
          <li key={r.id} className="card">
            <div className="row">
              <strong>{r.name}</strong> <span>{r.email}</span> <span className="muted small">{fmt.dateTime(r.createdAt)}</span>
            </div>
            {r.message ? <p>{r.message}</p> : null}
            <div className="row">
              <button type="button" onClick={() => approve.mutate({ rid: r.id, role: 'viewer' })}>
                {t('team.approveAs', { role: roleName('viewer') })}
              </button>
              <button type="button" onClick={() => approve.mutate({ rid: r.id, role: 'member' })}>
                {t('team.approveAs', { role: roleName('member') })}
              </button>
              <button type="button" className="secondary" onClick={() => deny.mutate({ rid: r.id, block: false })}>
                {t('team.deny')}
              </button>
              <button type="button" className="danger" onClick={() => deny.mutate({ rid: r.id, block: true })}>
                {t('team.denyBlock')}
              </button>
            </div>
            {approve.error && approve.variables?.rid === r.id ? <ErrorText error={approve.error} /> : null}
            {deny.error && deny.variables?.rid === r.id ? <ErrorText error={deny.error} /> : null}
          </li>
        ))}
      </ul>
      <h2>{t('team.blocks')}</h2>
      <ErrorText error={blocks.error} />
      {blocks.data && blocks.data.blocks.length === 0 ? <EmptyNote>{t('blocks.empty')}</EmptyNote> : null}
      <ul>
        {blocks.data?.blocks.map((b) => (
          <li key={b.userId} className="row">
            <strong>{b.name}</strong> <span>{b.email}</span> <span className="muted small">{fmt.dateTime(b.blockedAt)}</span>
            <button type="button" className="secondary" onClick={() => unblock.mutate(b.userId)}>
              {t('team.unblock')}
            </button>
            {unblock.error && unblock.variables === b.userId ? <ErrorText error={unblock.error} /> : null}
          </li>
        ))}
      </ul>
    </>
  );
}
