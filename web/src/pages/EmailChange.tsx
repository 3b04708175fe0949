/**
 * The two links of an address change (issue 33 item 3), opened from a mail whether or not anyone
 * is signed in: /confirm-email (sent to the new address) and /undo-email-change (sent to the old
 * one). Each acts only on a button press, so a mail scanner that fetches links changes nothing.
 */
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { api, data } from '../api/client';
import { accountKeys } from '../api/hooks/account';
import { useT } from '../i18n';
import { ErrorText } from '../components/ui';

export function ConfirmEmail() {
  const t = useT();
  const qc = useQueryClient();
  const token = useSearchParams()[0].get('token') ?? '';
  const [email, setEmail] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function confirm() {
    setError(null);
    setBusy(true);
    try {
      const done = await data<{ email: string }>(api.POST('/api/auth/email-change/confirm', { body: { token } }));
      setEmail(done.email);
      // A signed-in person sees the new address at once.
      await qc.invalidateQueries({ queryKey: accountKeys.me });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>{t('emailChange.confirmTitle')}</h1>
      {!token ? <p className="error">{t('emailChange.noToken')}</p> : null}
      {email ? (
        <p role="status">
          {t('emailChange.confirmed', { email })} <Link to="/account">{t('nav.account')}</Link>
        </p>
      ) : (
        <>
          <ErrorText error={error} />
          <button type="button" onClick={confirm} disabled={!token || busy}>
            {t('emailChange.confirm')}
          </button>
        </>
      )}
    </main>
  );
}

export function UndoEmailChange() {
  const t = useT();
  const token = useSearchParams()[0].get('token') ?? '';
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function undo() {
    setError(null);
    setBusy(true);
    try {
      await data(api.POST('/api/auth/email-change/undo', { body: { token } }));
      // Every session ended, this browser's too. The person is not forgotten here (this page would
      // be replaced by the signed-out one and lose its answer); the link below loads a fresh page.
      setDone(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>{t('emailChange.undoTitle')}</h1>
      {!token ? <p className="error">{t('emailChange.noToken')}</p> : null}
      {done ? (
        <p role="status">
          {t('emailChange.undone')} <a href="/forgot-password">{t('signIn.forgot')}</a>
        </p>
      ) : (
        <>
          <p>{t('emailChange.undoText')}</p>
          <ErrorText error={error} />
          <button type="button" onClick={undo} disabled={!token || busy}>
            {t('emailChange.undo')}
          </button>
        </>
      )}
    </main>
  );
}
