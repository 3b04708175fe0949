import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, data } from '../api/client';
import { useT } from '../i18n';
import { useRefreshMe, type MfaChallenge } from '../api/hooks/account';
import { ErrorText, Field, fieldError, formError } from '../components/ui';
import { getAssertion, passkeysSupported } from '../webauthn';
import { useHubInfo } from '../api/hooks/system';

/** Password first; when the account has a second factor, the TOTP or backup-code step. */
export function SignIn() {
  const t = useT();
  const refreshMe = useRefreshMe();
  const info = useHubInfo();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<{ mfaToken: string; hasPasskeys: boolean } | null>(null);
  const [mode, setMode] = useState<'totp' | 'backup'>('totp');
  const [code, setCode] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function done() {
    await refreshMe();
    const next = params.get('next');
    navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/detections', { replace: true });
  }

  async function submitPassword(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const reply = await data(api.POST('/api/auth/login', { body: { email, password } }));
      if ('mfaRequired' in reply) {
        const c = reply as MfaChallenge;
        setChallenge({ mfaToken: c.mfaToken, hasPasskeys: c.hasPasskeys });
      } else await done();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function submitCode(e: FormEvent) {
    e.preventDefault();
    if (!challenge) return;
    setBusy(true);
    setError(null);
    try {
      const body = { mfaToken: challenge.mfaToken, code: code.trim(), rememberDevice: remember };
      await data(mode === 'totp' ? api.POST('/api/auth/login/mfa/totp', { body }) : api.POST('/api/auth/login/mfa/backup', { body }));
      await done();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function signInWithPasskey() {
    if (!challenge) return;
    setBusy(true);
    setError(null);
    try {
      const options = await data<unknown>(api.POST('/api/auth/login/mfa/passkey/begin', { body: { mfaToken: challenge.mfaToken } }));
      const response = await getAssertion(options);
      await data(
        api.POST('/api/auth/login/mfa/passkey/finish', {
          body: { mfaToken: challenge.mfaToken, response: response as never, rememberDevice: remember },
        }),
      );
      await done();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (challenge) {
    return (
      <main className="narrow" id="main">
        <h1>{t('signIn.mfaTitle')}</h1>
        <form onSubmit={submitCode} aria-describedby="signin-error">
          <Field label={mode === 'totp' ? t('signIn.totp') : t('signIn.backup')} error={fieldError(error, 'code')}>
            {(id, describedBy) => (
              <input
                id={id}
                aria-describedby={describedBy}
                name="code"
                autoFocus
                required
                autoComplete="one-time-code"
                inputMode={mode === 'totp' ? 'numeric' : 'text'}
                pattern={mode === 'totp' ? '[0-9]{6}' : undefined}
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            )}
          </Field>
          <label className="check">
            <input type="checkbox" name="remember" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
            {t('signIn.remember')}
          </label>
          <ErrorText error={formError(error, ['code'])} id="signin-error" />
          <div className="row">
            <button type="submit" disabled={busy}>
              {t('signIn.verify')}
            </button>
            <button
              type="button"
              className="link"
              onClick={() => {
                setMode(mode === 'totp' ? 'backup' : 'totp');
                setCode('');
                setError(null);
              }}
            >
              {mode === 'totp' ? t('signIn.useBackup') : t('signIn.useTotp')}
            </button>
            {challenge.hasPasskeys && passkeysSupported() ? (
              <button type="button" className="secondary" disabled={busy} onClick={signInWithPasskey}>
                {t('signIn.usePasskey')}
              </button>
            ) : null}
          </div>
        </form>
      </main>
    );
  }

  return (
    <main className="narrow" id="main">
      <h1>{t('signIn.title')}</h1>
      <form onSubmit={submitPassword} aria-describedby="signin-error">
        <Field label={t('signIn.email')} error={fieldError(error, 'email')}>
          {(id, describedBy) => (
            <input
              id={id}
              aria-describedby={describedBy}
              name="email"
              type="email"
              autoComplete="username"
              required
              autoFocus
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          )}
        </Field>
        <Field label={t('signIn.password')} error={fieldError(error, 'password')}>
          {(id, describedBy) => (
            <input
              id={id}
              aria-describedby={describedBy}
              name="password"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <ErrorText error={formError(error, ['email', 'password'])} id="signin-error" />
        <div className="row">
          <button type="submit" disabled={busy}>
            {t('signIn.submit')}
          </button>
          <Link to="/forgot-password">{t('signIn.forgot')}</Link>
          {info.data?.selfRegistration ? <Link to="/register">{t('signIn.register')}</Link> : null}
        </div>
      </form>
    </main>
  );
}
