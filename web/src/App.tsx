import { lazy, Suspense, useState } from 'react';
import { Navigate, NavLink, Route, Routes, useLocation, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { api, data } from './api/client';
import { atLeast } from './roles';
import { useRoleName, useT } from './i18n';
import { LiveProvider } from './live';
import { clearOfflineData } from './pwa';
import { accountKeys, useMe } from './api/hooks/account';
import { useUnreadAlerts } from './api/hooks/alerts';
import { LanguageProvider, SessionProvider, ToastProvider, useSession, useTheme, type ThemeChoice } from './session';
import { ErrorText, Loading } from './components/ui';
import { OfflineNote } from './components/OfflineNote';
import { SignIn } from './pages/SignIn';
import { ForgotPassword, ResetPassword } from './pages/Password';
import { ConfirmEmail, UndoEmailChange } from './pages/EmailChange';
import { Register } from './pages/Register';
import { Detections } from './pages/Detections';
import { Shared } from './pages/Shared';
import { PublicTeam } from './pages/PublicTeam';

// Pages other than the detections list load on demand, keeping the first load small.
const Fleet = lazy(() => import('./pages/Fleet'));
const DetectionDetail = lazy(() => import('./pages/DetectionDetail'));
const Sessions = lazy(() => import('./pages/Sessions'));
const Species = lazy(() => import('./pages/Species'));
const SpeciesPhotos = lazy(() => import('./pages/SpeciesPhotos'));
const Directory = lazy(() => import('./pages/Directory'));
const SatelliteDetail = lazy(() => import('./pages/SatelliteDetail'));
const Account = lazy(() => import('./pages/Account'));
const Team = lazy(() => import('./pages/Team'));
const Admin = lazy(() => import('./pages/Admin'));
const InstallModel = lazy(() => import('./pages/InstallModel'));
const Alerts = lazy(() => import('./pages/Alerts'));
const AlertSettings = lazy(() => import('./pages/AlertSettings'));
const Export = lazy(() => import('./pages/Export'));
const ScheduledExports = lazy(() => import('./pages/ScheduledExports'));
const JoinInvite = lazy(() => import('./pages/JoinInvite'));
const CreateTeam = lazy(() => import('./pages/CreateTeam'));
const Stats = lazy(() => import('./pages/stats/Stats'));
const Day = lazy(() => import('./pages/Day'));
// Loads the MQTT client: only a device that records needs it.
const Record = lazy(() => import('./pages/Record'));

const PUBLIC_PATHS = ['/sign-in', '/forgot-password', '/reset-password', '/register', '/confirm-email', '/undo-email-change'];

export function App() {
  const me = useMe();
  const location = useLocation();
  const isPublic = PUBLIC_PATHS.includes(location.pathname);

  if (me.isLoading) {
    return (
      <LanguageProvider prefs={null}>
        <Loading />
      </LanguageProvider>
    );
  }
  if (me.error) {
    return (
      <LanguageProvider prefs={null}>
        <main className="narrow">
          <ErrorText error={me.error} />
        </main>
      </LanguageProvider>
    );
  }
  if (!me.data) {
    return (
      <LanguageProvider prefs={null}>
        <ToastProvider>
          <Routes>
            <Route path="/sign-in" element={<SignIn />} />
            <Route path="/forgot-password" element={<ForgotPassword />} />
            <Route path="/reset-password" element={<ResetPassword />} />
            <Route path="/confirm-email" element={<ConfirmEmail />} />
            <Route path="/undo-email-change" element={<UndoEmailChange />} />
            <Route path="/register" element={<Register />} />
            <Route path="/share/detection/:id/:token" element={<Shared />} />
            <Route path="/t/:slug" element={<PublicTeam />} />
            <Route
              path="*"
              element={
                <Navigate to={`/sign-in${isPublic ? '' : `?next=${encodeURIComponent(location.pathname + location.search)}`}`} replace />
              }
            />
          </Routes>
        </ToastProvider>
      </LanguageProvider>
    );
  }
  return (
    <LanguageProvider prefs={me.data.preferences}>
      <SessionProvider me={me.data}>
        <ToastProvider>
          <Shell />
        </ToastProvider>
      </SessionProvider>
    </LanguageProvider>
  );
}

function Shell() {
  const { team } = useSession();
  // One socket for every signed-in page: live detections and the rare-species toast.
  return (
    <LiveProvider tenantId={team?.id ?? null}>
      <ShellPage />
    </LiveProvider>
  );
}

/** The invite link of someone already signed in: join that team instead of registering. */
function RegisterSignedIn() {
  const location = useLocation();
  const invite = new URLSearchParams(location.search).get('invite');
  return invite ? <JoinInvite token={invite} /> : <Navigate to="/detections" replace />;
}

/** "Alerts" in the navigation, with how many nobody acknowledged yet (alert frames refresh it, see live.tsx). */
function AlertsLink() {
  const t = useT();
  const { team } = useSession();
  const unread = useUnreadAlerts(team?.id ?? null).data ?? 0;
  return (
    <NavLink to="/alerts" end data-testid="nav-alerts">
      {t('nav.alerts')}
      {unread > 0 ? (
        <span className="nav-count" data-testid="nav-alerts-count">
          {unread}
          <span className="sr-only"> {t('nav.alerts.unread')}</span>
        </span>
      ) : null}
    </NavLink>
  );
}

function ShellPage() {
  const t = useT();
  const roleName = useRoleName();
  const { me, team, role, setTeamId } = useSession();
  const [theme, setTheme] = useTheme();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const isAdmin = me.user.isAdmin;
  const [menuOpen, setMenuOpen] = useState(false);

  async function signOut() {
    await data(api.POST('/api/auth/logout')).catch(() => {});
    await clearOfflineData();
    // Everything cached belonged to the signed-in person. "Signed out" is recorded after the
    // clear: a cleared `me` would be fetched again, and while it loads the whole app shows its
    // loading screen, unmounting whatever page the person has moved on to (a half-filled form).
    qc.clear();
    qc.setQueryData(accountKeys.me, null);
    navigate('/sign-in');
  }

  return (
    <>
      <a className="skip" href="#main">
        {t('nav.skip')}
      </a>
      {/* On a phone the navigation and the tools fold behind the menu button (styles.css, issue 36). */}
      <header className={menuOpen ? 'top open' : 'top'}>
        <span className="brand">{t('app.name')}</span>
        {me.tenants.length > 0 ? (
          <label className="inline team-switch">
            <span className="sr-only">{t('nav.team.switch')}</span>
            <select aria-label={t('nav.team.switch')} value={team?.id ?? ''} onChange={(e) => setTeamId(e.target.value)}>
              {me.tenants.map((x) => (
                <option key={x.id} value={x.id}>
                  {x.name} ({roleName(x.role)})
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <button
          type="button"
          className="secondary menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          data-testid="menu-toggle"
          onClick={() => setMenuOpen((o) => !o)}
        >
          {t('nav.menu')}
        </button>
        <nav id="main-nav" aria-label={t('nav.main')} onClick={(e) => (e.target as Element).closest('a') && setMenuOpen(false)}>
          <NavLink to="/day" data-testid="nav-day">
            {t('nav.day')}
          </NavLink>
          <NavLink to="/detections">{t('nav.detections')}</NavLink>
          <NavLink to="/species">{t('nav.species')}</NavLink>
          <NavLink to="/stats" data-testid="nav-stats">
            {t('nav.stats')}
          </NavLink>
          <NavLink to="/sessions">{t('nav.sessions')}</NavLink>
          <NavLink to="/fleet">{t('nav.fleet')}</NavLink>
          <NavLink to="/record" data-testid="nav-record">
            {t('nav.record')}
          </NavLink>
          <AlertsLink />
          {atLeast(role, 'member') ? (
            <NavLink to="/export" data-testid="nav-export">
              {t('nav.export')}
            </NavLink>
          ) : null}
          {atLeast(role, 'admin') || isAdmin ? <NavLink to="/team">{t('nav.team')}</NavLink> : null}
          <NavLink to="/teams" end>
            {t('nav.directory')}
          </NavLink>
          <NavLink to="/account">{t('nav.account')}</NavLink>
          {isAdmin ? (
            <NavLink to="/admin" data-testid="nav-admin">
              {t('nav.admin')}
            </NavLink>
          ) : null}
        </nav>
        <div className="tools">
          <label className="inline">
            <span className="sr-only">{t('nav.theme')}</span>
            <select aria-label={t('nav.theme')} value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)}>
              <option value="system">{t('nav.theme.system')}</option>
              <option value="light">{t('nav.theme.light')}</option>
              <option value="dark">{t('nav.theme.dark')}</option>
            </select>
          </label>
          <button type="button" className="secondary" onClick={signOut}>
            {t('nav.signOut')}
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <OfflineNote />
        {me.mfa.enrollmentRequired || (isAdmin && !me.mfa.enabled) ? (
          // Required only when the hub switch require_admin_mfa is on (the hub refuses everything else then); advice otherwise.
          <p className="card banner" role="note" data-testid="mfa-banner">
            {t(me.mfa.enrollmentRequired ? 'account.mfaRequired' : 'account.mfaAdvised')}{' '}
            <NavLink to="/account">{t('account.mfaEnroll')}</NavLink>
          </p>
        ) : null}
        <Suspense fallback={<Loading />}>
          <Routes>
            {/* Home is the day at a glance (pages/Day.tsx says why). */}
            <Route path="/" element={<Navigate to="/day" replace />} />
            <Route path="/day" element={<Day />} />
            <Route path="/sign-in" element={<Navigate to="/detections" replace />} />
            <Route path="/register" element={<RegisterSignedIn />} />
            <Route path="/detections" element={<Detections />} />
            <Route path="/detections/:id" element={<DetectionDetail />} />
            <Route path="/species" element={<Species />} />
            <Route path="/species/:code/photos" element={<SpeciesPhotos />} />
            <Route path="/sessions" element={<Sessions />} />
            <Route path="/teams" element={<Directory />} />
            <Route path="/teams/new" element={<CreateTeam />} />
            <Route path="/fleet" element={<Fleet />} />
            <Route path="/fleet/:id" element={<SatelliteDetail />} />
            <Route path="/record" element={<Record />} />
            <Route path="/account" element={<Account />} />
            <Route path="/alerts" element={<Alerts />} />
            <Route path="/team/alerts" element={<AlertSettings />} />
            <Route path="/export" element={<Export />} />
            <Route path="/team/exports" element={<ScheduledExports />} />
            <Route path="/team" element={<Team />} />
            <Route path="/teams/:id/join-requests" element={<Team />} />
            <Route path="/admin" element={isAdmin ? <Admin /> : <Navigate to="/detections" replace />} />
            <Route path="/admin/models/install" element={isAdmin ? <InstallModel /> : <Navigate to="/detections" replace />} />
            <Route path="/reset-password" element={<ResetPassword />} />
            <Route path="/confirm-email" element={<ConfirmEmail />} />
            <Route path="/undo-email-change" element={<UndoEmailChange />} />
            <Route path="/share/detection/:id/:token" element={<Shared />} />
            <Route path="/t/:slug" element={<PublicTeam />} />
            <Route path="/stats/*" element={<Stats />} />
            <Route path="*" element={<p>{t('notFound')}</p>} />
          </Routes>
        </Suspense>
      </main>
    </>
  );
}
