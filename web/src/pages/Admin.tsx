/** Hub admins only: people (search, block), hub settings, classifier models, storage and retention, mobile app releases and the audit log. */
import { useState } from 'react';
import { Link } from 'react-router';
import { useAdminUsers, useBlockUser, useResetUserMfa, useResetUserPassword } from '../api/hooks/admin';
import { useRoleName, useT } from '../i18n';
import { CopyButton, ErrorText, Field } from '../components/ui';
import { SettingsTable } from '../components/SettingsTable';
import { AuditLog } from '../components/AuditLog';
import { ModelsAdmin } from '../components/ModelsAdmin';
import { Retention } from '../components/admin/Retention';
import { MobileReleases } from '../components/admin/MobileReleases';
import { SystemStatus } from '../components/admin/SystemStatus';
import { SystemStorage } from '../components/admin/SystemStorage';
import { ImageCache } from '../components/admin/ImageCache';

export default function Admin() {
  const t = useT();
  const roleName = useRoleName();
  const [search, setSearch] = useState('');
  const users = useAdminUsers(search);
  const block = useBlockUser();
  const [issued, setIssued] = useState<{ name: string; password: string } | null>(null);
  const resetPassword = useResetUserPassword((u, password) => setIssued({ name: u.name, password }));
  const resetMfa = useResetUserMfa();
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">{t('admin.title')}</h1>
      <h2>{t('admin.users')}</h2>
      <Field label={t('admin.search')}>
        {(id) => <input id={id} type="search" value={search} onChange={(e) => setSearch(e.target.value)} />}
      </Field>
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

      <h2>{t('system.title')}</h2>
      <SystemStatus />
      <h3>{t('storage.title')}</h3>
      <SystemStorage />

      <h2>{t('settings.hub')}</h2>
      <SettingsTable scope={{ level: 'hub' }} disabled={false} />

      <h2 id="models">{t('models.title')}</h2>
      <p>
        <Link to="/admin/models/install" data-testid="install-model-link">
          {t('install.link')}
        </Link>
      </p>
      <ModelsAdmin />

      <h2>{t('retention.title')}</h2>
      <Retention />

      <h2>{t('mobile.title')}</h2>
      <MobileReleases />

      <h2>{t('imageCache.title')}</h2>
      <ImageCache />

      <h2>{t('admin.audit')}</h2>
      <AuditLog label={t('admin.audit')} />
    </section>
  );
}
