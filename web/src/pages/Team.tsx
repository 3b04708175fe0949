/** The active team for its admins: members and roles, invite links, API keys. */
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import type { Role } from '../api/hooks/account';
import { useApiKeys, useCreateApiKey, useRevokeApiKey } from '../api/hooks/api-keys';
import { useCreateInvite, useInvites, useRevokeInvite } from '../api/hooks/invites';
import { useMemberMutations, useMembers, type Member } from '../api/hooks/members';
import { atLeast } from '../roles';
import { useRoleName, useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { CopyButton, EmptyNote, ErrorText, Field, Table } from '../components/ui';
import { JoinRequests } from './JoinRequests';
import { SettingsTable } from '../components/SettingsTable';
import { AuditLog } from '../components/AuditLog';
import { NoTeam } from '../components/NoTeam';
import { LIMITS } from '../limits';

const ASSIGNABLE: Role[] = ['viewer', 'member', 'admin'];

function MemberRow({ m, tenantId, callerIsOwner, self }: { m: Member; tenantId: string; callerIsOwner: boolean; self: boolean }) {
  const t = useT();
  const fmt = useFormat();
  const roleName = useRoleName();
  const [confirming, setConfirming] = useState<'remove' | 'transfer' | null>(null);
  const { changeRole: change, remove, transferOwnership: transfer } = useMemberMutations(tenantId, m.id, () => setConfirming(null));
  // The API: the owner is never removable; an admin is the owner's to change or remove.
  const editable = m.role !== 'owner' && (m.role !== 'admin' || callerIsOwner);
  const removable = editable && !self;
  const transferable = callerIsOwner && m.role !== 'owner' && !self;
  const busy = remove.isPending || transfer.isPending;
  return (
    <tr data-testid="member-row">
      <th scope="row">{m.name}</th>
      <td>{m.email}</td>
      <td>
        {editable ? (
          <select aria-label={`${t('team.role')} ${m.name}`} value={m.role} onChange={(e) => change.mutate(e.target.value as Role)}>
            {ASSIGNABLE.map((r) => (
              <option key={r} value={r}>
                {roleName(r)}
              </option>
            ))}
          </select>
        ) : (
          roleName(m.role)
        )}
        <ErrorText error={change.error} />
      </td>
      <td>{fmt.dateTime(m.joinedAt)}</td>
      <td>
        {confirming ? (
          <div
            className="row tight"
            role="group"
            aria-label={confirming === 'remove' ? t('team.removeConfirm', { name: m.name }) : t('team.transferConfirm', { name: m.name })}
          >
            <span className="small">
              {confirming === 'remove' ? t('team.removeConfirm', { name: m.name }) : t('team.transferConfirm', { name: m.name })}
            </span>
            <button
              type="button"
              className="danger"
              disabled={busy}
              onClick={() => (confirming === 'remove' ? remove.mutate() : transfer.mutate())}
            >
              {confirming === 'remove' ? t('team.remove') : t('team.transfer')}
            </button>
            <button type="button" className="secondary" disabled={busy} onClick={() => setConfirming(null)}>
              {t('common.cancel')}
            </button>
          </div>
        ) : (
          <div className="row tight">
            {removable ? (
              <button
                type="button"
                className="secondary"
                aria-label={`${t('team.remove')} ${m.name}`}
                onClick={() => setConfirming('remove')}
              >
                {t('team.remove')}
              </button>
            ) : null}
            {transferable ? (
              <button
                type="button"
                className="secondary"
                aria-label={`${t('team.transfer')} ${m.name}`}
                onClick={() => setConfirming('transfer')}
              >
                {t('team.transfer')}
              </button>
            ) : null}
          </div>
        )}
        <ErrorText error={remove.error ?? transfer.error} />
      </td>
    </tr>
  );
}

export default function Team() {
  const t = useT();
  const roleName = useRoleName();
  const fmt = useFormat();
  const { team, role, me, setTeamId } = useSession();
  // The join-request mail links to /teams/:id/join-requests: open that team.
  const { id: linkedTeam } = useParams();
  useEffect(() => {
    if (linkedTeam && linkedTeam !== team?.id && me.tenants.some((x) => x.id === linkedTeam)) setTeamId(linkedTeam);
  }, [linkedTeam, team?.id, me.tenants, setTeamId]);
  const tenantId = team?.id ?? '';
  const allowed = atLeast(role, 'admin') || me.user.isAdmin;
  const members = useMembers(tenantId, allowed);
  const invites = useInvites(tenantId, allowed);
  const keys = useApiKeys(tenantId, allowed);

  const [inviteRole, setInviteRole] = useState<Role>('member');
  const [link, setLink] = useState<string | null>(null);
  const createInvite = useCreateInvite(tenantId, (r) => setLink(r.url));
  const revokeInvite = useRevokeInvite(tenantId);

  const [keyName, setKeyName] = useState('');
  const [keyRole, setKeyRole] = useState<Role>('member');
  const [newKey, setNewKey] = useState<string | null>(null);
  const createKey = useCreateApiKey(tenantId, (r) => {
    setNewKey(r.key);
    setKeyName('');
  });
  const revokeKey = useRevokeApiKey(tenantId);

  if (!team) return <NoTeam />;
  if (!allowed) return <p>{t('notFound')}</p>;

  return (
    <section aria-labelledby="team-title">
      <h1 id="team-title">
        {t('team.title')}: {team.name}
      </h1>

      <h2>{t('team.members')}</h2>
      <ErrorText error={members.error} />
      <div className="table-wrap">
        <Table rows={members.data?.members.length} empty={t(me.user.isAdmin ? 'team.members.emptyHubAdmin' : 'team.members.empty')}>
          <thead>
            <tr>
              <th scope="col">{t('register.name')}</th>
              <th scope="col">{t('signIn.email')}</th>
              <th scope="col">{t('team.role')}</th>
              <th scope="col">{t('team.joined')}</th>
              <th scope="col">{t('team.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {members.data?.members.map((m) => (
              <MemberRow
                key={m.id}
                m={m}
                tenantId={tenantId}
                callerIsOwner={role === 'owner' || me.user.isAdmin}
                self={m.userId === me.user.id}
              />
            ))}
          </tbody>
        </Table>
      </div>

      <JoinRequests tenantId={tenantId} />

      <h2>{t('alertSettings.title')}</h2>
      <p>
        {t('team.alertsIntro')} <Link to="/team/alerts">{t('team.alertsLink')}</Link>
      </p>

      <h2>{t('scheduled.title')}</h2>
      <p>
        {t('team.exportsIntro')} <Link to="/team/exports">{t('team.exportsLink')}</Link>
      </p>

      <h2>{t('settings.team')}</h2>
      <p>
        {t('pub.teamIntro')} <Link to={`/t/${team.slug}`}>{`/t/${team.slug}`}</Link>
      </p>
      <SettingsTable scope={{ tenantId }} disabled={false} />

      <h2>{t('team.invites')}</h2>
      <form
        className="row card"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          createInvite.mutate(inviteRole);
        }}
      >
        <Field label={t('team.role')}>
          {(id) => (
            <select id={id} value={inviteRole} onChange={(e) => setInviteRole(e.target.value as Role)}>
              {ASSIGNABLE.map((r) => (
                <option key={r} value={r}>
                  {roleName(r)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">{t('team.invite')}</button>
        <ErrorText error={createInvite.error} />
      </form>
      {link ? (
        <p className="row">
          <input readOnly aria-label={t('team.inviteLink')} value={link} onFocus={(e) => e.target.select()} />
          <CopyButton text={link} />
        </p>
      ) : null}
      <ErrorText error={invites.error} />
      {invites.data?.invites.length === 0 ? <EmptyNote>{t('team.invites.empty')}</EmptyNote> : null}
      <ul>
        {invites.data?.invites.map((i) => (
          <li key={i.id} className="row">
            <span>{roleName(i.role)}</span>
            <span className="muted small">
              {t('team.expires')} {fmt.dateTime(i.expiresAt)}
            </span>
            <button type="button" className="secondary" onClick={() => revokeInvite.mutate(i.id)}>
              {t('common.revoke')}
            </button>
          </li>
        ))}
      </ul>
      <ErrorText error={revokeInvite.error} />

      <h2>{t('team.apiKeys')}</h2>
      <form
        className="row card"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          createKey.mutate({ name: keyName, role: keyRole });
        }}
      >
        <Field label={t('team.keyName')}>
          {(id) => (
            <input id={id} required maxLength={LIMITS.apiKeyName.maxLength} value={keyName} onChange={(e) => setKeyName(e.target.value)} />
          )}
        </Field>
        <Field label={t('team.role')}>
          {(id) => (
            <select id={id} value={keyRole} onChange={(e) => setKeyRole(e.target.value as Role)}>
              {ASSIGNABLE.map((r) => (
                <option key={r} value={r}>
                  {roleName(r)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">{t('common.create')}</button>
        <ErrorText error={createKey.error} />
      </form>
      {newKey ? (
        <p className="row" role="region" aria-label={t('team.keyCreated')}>
          <span>{t('team.keyCreated')}:</span> <code>{newKey}</code> <CopyButton text={newKey} />
        </p>
      ) : null}
      <ErrorText error={keys.error} />
      {keys.data?.apiKeys.length === 0 ? <EmptyNote>{t('team.apiKeys.empty')}</EmptyNote> : null}
      <ul>
        {keys.data?.apiKeys.map((k) => (
          <li key={k.id} className="row">
            <strong>{k.name}</strong>
            <code>{k.prefix}…</code>
            <span>{roleName(k.role)}</span>
            {k.effectiveRole !== k.role ? (
              <span className="muted small" data-testid="key-capped">
                {k.effectiveRole ? t('team.apiKeys.capped', { role: roleName(k.effectiveRole) }) : t('team.apiKeys.stopped')}
              </span>
            ) : null}
            <span className="muted small">{fmt.dateTime(k.lastUsedAt ?? k.createdAt)}</span>
            <button type="button" className="secondary" onClick={() => revokeKey.mutate(k.id)}>
              {t('common.revoke')}
            </button>
          </li>
        ))}
      </ul>
      <ErrorText error={revokeKey.error} />

      <h2>{t('team.activity')}</h2>
      <AuditLog tenantId={tenantId} label={t('team.activity')} />
    </section>
  );
}
