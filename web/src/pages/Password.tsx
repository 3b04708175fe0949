import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, data } from '../api/client';
import { useT } from '../i18n';
import { ErrorText, Field } from '../components/ui';
import { useHubInfo } from '../api/hooks/system';

export function ForgotPassword() {
  const t = useT();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // Without a mail server a reset link never arrives: say so before anyone waits for it (issue 36 point 6).
  const noMail = useHubInfo().data?.mail === false;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      await data(api.POST('/api/auth/forgot-password', { body: { email } }));
      setSent(true);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>{t('forgot.title')}</h1>
      {noMail ? (
        <p className="card banner" role="alert" data-testid="forgot-no-mail">
          {t('forgot.noMail')}
        </p>
      ) : null}
      {sent ? (
        <p role="status">{t('forgot.sent')}</p>
      ) : (
        <form onSubmit={submit}>
          <Field label={t('signIn.email')}>
            {(id) => <input id={id} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
          </Field>
          <ErrorText error={error} />
          <button type="submit">{t('forgot.submit')}</button>
        </form>
      )}
      <p>
        <Link to="/sign-in">{t('signIn.title')}</Link>
      </p>
    </main>
  );
}

export function ResetPassword() {
  const t = useT();
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      await data(api.POST('/api/auth/reset-password', { body: { token, password } }));
      setDone(true);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>{t('reset.title')}</h1>
      {!token ? <p className="error">{t('reset.noToken')}</p> : null}
      {done ? (
        <p role="status">
          {t('reset.done')} <Link to="/sign-in">{t('signIn.title')}</Link>
        </p>
      ) : (
        <form onSubmit={submit}>
          <Field label={t('signIn.password')} hint={t('password.rule')}>
            {(id) => (
              <input
                id={id}
                type="password"
                autoComplete="new-password"
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
            )}
          </Field>
          <ErrorText error={error} />
          <button type="submit" disabled={!token}>
            {t('reset.submit')}
          </button>
        </form>
      )}
    </main>
  );
}
