import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, data } from '../api/client';
import { useT } from '../i18n';
import { useRefreshMe } from '../api/hooks/account';
import { ErrorText, Field, fieldError, formError } from '../components/ui';
import { InviteOffer } from '../components/InviteOffer';
import { LIMITS } from '../limits';

/** The invite link (`/register?invite=…`) lands here; the new account signs in right after. */
export function Register() {
  const t = useT();
  const refreshMe = useRefreshMe();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const invite = params.get('invite') ?? undefined;
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      await data(api.POST('/api/auth/register', { body: { name, email, password, ...(invite ? { inviteToken: invite } : {}) } }));
      await data(api.POST('/api/auth/login', { body: { email, password } }));
      await refreshMe();
      navigate('/detections', { replace: true });
    } catch (err) {
      setError(err);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>{t('register.title')}</h1>
      {invite ? <InviteOffer token={invite} signedIn={false} /> : null}
      <form onSubmit={submit}>
        <Field label={t('register.name')} error={fieldError(error, 'name')}>
          {(id, describedBy) => (
            <input
              id={id}
              aria-describedby={describedBy}
              required
              maxLength={LIMITS.personName.maxLength}
              autoComplete="name"
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <Field label={t('signIn.email')} error={fieldError(error, 'email')}>
          {(id, describedBy) => (
            <input
              id={id}
              aria-describedby={describedBy}
              type="email"
              required
              maxLength={LIMITS.email.maxLength}
              autoComplete="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          )}
        </Field>
        <Field label={t('signIn.password')} hint={t('password.rule')} error={fieldError(error, 'password')}>
          {(id, describedBy) => (
            <input
              id={id}
              aria-describedby={describedBy}
              type="password"
              required
              maxLength={LIMITS.password.maxLength}
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <ErrorText error={formError(error, ['name', 'email', 'password'])} />
        <button type="submit">{t('register.submit')}</button>
      </form>
      <p>
        <Link to="/sign-in">{t('signIn.title')}</Link>
      </p>
    </main>
  );
}
