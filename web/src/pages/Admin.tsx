/** Hub admins only: people (search, block) and the audit log. */
import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data } from '../api/client';
import type { AdminUser, AuditEntry } from '../api/types';
import { useRoleName, useT } from '../i18n';
import { useFormat } from '../session';
import { CopyButton, ErrorText, Field } from '../components/ui';
import { SettingsTable } from '../components/SettingsTable';

const AUDIT_PAGE = 50;

export default function Admin() {
  const t = useT();
  const roleName = useRoleName();
  const fmt = useFormat();
  const qc = useQueryClient();
  const [search, setSearch] = useState('');
  const users = useQuery({
    queryKey: ['admin-users', search],
    placeholderData: keepPreviousData,
    queryFn: () => data<{ users: AdminUser[] }>(api.GET('/api/admin/users', { params: { query: (search ? { search } : {}) } })),
  });
  const block = useMutation({
    mutationFn: (id: string) => data(api.POST('/api/admin/users/{id}/block', { params: { path: { id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['admin-users'] }),
  });
  const [issued, setIssued] = useState<{ name: string; password: string } | null>(null);
  const resetPassword = useMutation({
    mutationFn: (u: AdminUser) => data<{ temporaryPassword?: string }>(api.POST('/api/admin/users/{id}/reset-password', { params: { path: { id: u.id } }, body: {} })),
    onSuccess: (r, u) => r.temporaryPassword && setIssued({ name: u.name, password: r.temporaryPassword }),
  });
  const resetMfa = useMutation({
    mutationFn: (id: string) => data(api.POST('/api/auth/mfa/admin/users/{id}/reset', { params: { path: { id } } })),
  });
  const [offset, setOffset] = useState(0);
  const audit = useQuery({
    queryKey: ['audit', offset],
    placeholderData: keepPreviousData,
    queryFn: () => data<{ entries: AuditEntry[]; total: number }>(api.GET('/api/admin/audit-log', { params: { query: { limit: AUDIT_PAGE, offset } } })),
  });

  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">{t('admin.title')}</h1>
      <h2>{t('admin.users')}</h2>
      <Field label={t('admin.search')}>{(id) => <input id={id} type="search" value={search} onChange={(e) => setSearch(e.target.value)} />}</Field>
      <ErrorText error={users.error} />
      {issued ? (
        <p className="card row" role="region" aria-label={t('admin.tempPassword')}>
          {t('admin.tempPasswordFor', { name: issued.name })}: <code>{issued.password}</code> <CopyButton text={issued.password} />
        </p>
      ) : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('register.name')}</th>
              <th scope="col">{t('signIn.email')}</th>
              <th scope="col">{t('nav.team')}</th>
              <th scope="col">{t('admin.status')}</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {users.data?.users.map((u) => (
              <tr key={u.id}>
                <th scope="row">
                  {u.name} {u.isAdmin ? <span className="badge">{t('admin.badge.admin')}</span> : null}
                </th>
                <td>{u.email}</td>
                <td className="small">{u.tenants.map((x) => `${x.name} (${roleName(x.role)})`).join(', ')}</td>
                <td>{u.status === 'active' || u.status === 'blocked' ? t(`admin.userStatus.${u.status}`) : u.status}</td>
                <td>
                  <div className="row tight">
                    {!u.isAdmin ? (
                      <button type="button" className="secondary" onClick={() => block.mutate(u.id)}>
                        {u.status === 'blocked' ? t('admin.unblock') : t('admin.block')}
                      </button>
                    ) : null}
                    <button type="button" className="secondary" onClick={() => resetPassword.mutate(u)}>
                      {t('admin.resetPassword')}
                    </button>
                    <button type="button" className="secondary" onClick={() => resetMfa.mutate(u.id)}>
                      {t('admin.resetMfa')}
                    </button>
                  </div>
                  {/* Each action's outcome on the row of the person it was for. */}
                  {block.error && block.variables === u.id ? <ErrorText error={block.error} /> : null}
                  {resetPassword.error && resetPassword.variables?.id === u.id ? <ErrorText error={resetPassword.error} /> : null}
                  {resetMfa.error && resetMfa.variables === u.id ? <ErrorText error={resetMfa.error} /> : null}
                  {resetMfa.isSuccess && resetMfa.variables === u.id ? <p role="status">{t('admin.mfaReset')}</p> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <h2>{t('settings.hub')}</h2>
      <SettingsTable scope={{ level: 'hub' }} disabled={false} />

      <h2>{t('admin.audit')}</h2>
      <ErrorText error={audit.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('admin.when')}</th>
              <th scope="col">{t('admin.action')}</th>
              <th scope="col">{t('admin.actor')}</th>
              <th scope="col">{t('admin.target')}</th>
            </tr>
          </thead>
          <tbody>
            {audit.data?.entries.map((e) => (
              <tr key={e.id}>
                <td>{fmt.dateTime(e.at)}</td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>
                  {e.actorEmail ?? '—'} <span className="muted small">{e.ip ?? ''}</span>
                </td>
                <td className="small">
                  {e.targetType ?? ''} {e.targetId ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav className="row" aria-label={t('admin.auditPages')}>
        <button type="button" className="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - AUDIT_PAGE))}>
          {t('det.prev')}
        </button>
        <button type="button" className="secondary" disabled={!audit.data || offset + AUDIT_PAGE >= audit.data.total} onClick={() => setOffset(offset + AUDIT_PAGE)}>
          {t('det.next')}
        </button>
      </nav>
    </section>
  );
}
