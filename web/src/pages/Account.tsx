/** The person's own account: profile, preferences, two-factor sign-in, remembered devices, passkeys. */
import { useState, type FormEvent } from 'react';
import { LANGS, useLanguageName, useT } from '../i18n';
import { useCancelEmailChange, useChangePassword, useSavePreferences, useSaveProfile } from '../api/hooks/account';
import { useForgetDevice, usePasskeyMutations, useTotpMutations } from '../api/hooks/mfa';
import { useCatalogLanguages } from '../api/hooks/species';
import { useFormat, useSession } from '../session';
import { ErrorText, Field } from '../components/ui';
import { passkeysSupported } from '../webauthn';
import { LIMITS } from '../limits';

const MAX_SECONDARY = 3;
const DATE_FORMATS = ['YYYY-MM-DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'MM/DD/YYYY', 'D MMM YYYY', 'MMM D, YYYY'];

export default function Account() {
  const t = useT();
  const fmt = useFormat();
  const { me } = useSession();

  const [name, setName] = useState(me.user.name);
  const [email, setEmail] = useState(me.user.email);
  const profile = useSaveProfile();
  const cancelEmailChange = useCancelEmailChange();
  const pending = me.emailChange;

  const p = me.preferences;
  const secondary = p.secondaryLanguages ?? [];
  // Species names come in every catalog language; the interface itself in English or German.
  const catalogLanguages = useCatalogLanguages();
  const languages = [...new Set(['en', 'de', ...(catalogLanguages.data?.languages ?? []), p.primaryLanguage, ...secondary])];
  const languageName = useLanguageName();
  const prefs = useSavePreferences();

  const [enroll, setEnroll] = useState<{ qrDataUrl: string; manualKey: string } | null>(null);
  const [code, setCode] = useState('');
  const [backupCodes, setBackupCodes] = useState<string[] | null>(null);
  const [password, setPassword] = useState('');
  const {
    begin,
    confirm,
    cancel,
    disable,
    regenerateBackupCodes: regenerate,
  } = useTotpMutations({
    begun: setEnroll,
    confirmed: (codes) => {
      setBackupCodes(codes);
      setEnroll(null);
      setCode('');
    },
    cancelled: () => setEnroll(null),
    disabled: () => setPassword(''),
    regenerated: (codes) => {
      setBackupCodes(codes);
      setPassword('');
    },
  });
  const forgetDevice = useForgetDevice();

  const [passkeyName, setPasskeyName] = useState('');
  const { add: addPasskey, remove: removePasskey } = usePasskeyMutations(() => setPasskeyName(''));

  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const changePassword = useChangePassword(() => {
    setCurrentPassword('');
    setNewPassword('');
  });

  function saveProfile(e: FormEvent) {
    e.preventDefault();
    // The field goes back to the current address: a new one waits for its link (shown below the form).
    profile.mutate({ name, email }, { onSuccess: () => setEmail(me.user.email) });
  }

  return (
    <section aria-labelledby="acct-title">
      <h1 id="acct-title">{t('account.title')}</h1>

      <h2>{t('account.profile')}</h2>
      <form onSubmit={saveProfile} className="card">
        <Field label={t('register.name')}>{(id) => <input id={id} value={name} onChange={(e) => setName(e.target.value)} />}</Field>
        <Field label={t('signIn.email')}>
          {(id) => <input id={id} type="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <ErrorText error={profile.error} />
        <button type="submit" disabled={profile.isPending}>
          {t('common.save')}
        </button>
        {pending ? (
          <p role="status" data-testid="email-pending">
            {t('account.emailPending', { email: pending.newEmail, date: fmt.dateTime(pending.expiresAt) })}{' '}
            <button type="button" className="secondary" disabled={cancelEmailChange.isPending} onClick={() => cancelEmailChange.mutate()}>
              {t('account.emailCancel')}
            </button>
          </p>
        ) : null}
        <ErrorText error={cancelEmailChange.error} />
      </form>

      <h2>{t('account.password')}</h2>
      <form
        className="card grid"
        onSubmit={(e) => {
          e.preventDefault();
          changePassword.mutate({ currentPassword, newPassword });
        }}
      >
        <Field label={t('account.currentPassword')}>
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="current-password"
              required
              value={currentPassword}
              onChange={(e) => setCurrentPassword(e.target.value)}
            />
          )}
        </Field>
        <Field label={t('account.newPassword')} hint={t('password.rule')}>
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              required
              value={newPassword}
              onChange={(e) => setNewPassword(e.target.value)}
            />
          )}
        </Field>
        <div className="row">
          <button type="submit" disabled={changePassword.isPending}>
            {t('common.save')}
          </button>
        </div>
        <ErrorText error={changePassword.error} />
        {changePassword.isSuccess ? <p role="status">{t('account.passwordChanged')}</p> : null}
      </form>

      <h2>{t('account.preferences')}</h2>
      <div className="card grid">
        {/* Which languages the interface has, and which only name species (issue 36 point 5). */}
        <Field label={t('account.language')} hint={t('account.languageHint', { n: languages.length })}>
          {(id) => (
            <select id={id} value={p.primaryLanguage} onChange={(e) => prefs.mutate({ primaryLanguage: e.target.value })}>
              <optgroup label={t('account.language.interface')}>
                {LANGS.map((l) => (
                  <option key={l} value={l}>
                    {languageName(l)}
                  </option>
                ))}
              </optgroup>
              <optgroup label={t('account.language.speciesOnly')}>
                {languages
                  .filter((l) => !(LANGS as string[]).includes(l))
                  .map((l) => (
                    <option key={l} value={l}>
                      {languageName(l)}
                    </option>
                  ))}
              </optgroup>
            </select>
          )}
        </Field>
        <div className="field wide" role="group" aria-labelledby="secondary-languages">
          <span id="secondary-languages">{t('account.secondaryLanguages')}</span>
          <ul className="chips">
            {secondary.map((l) => (
              <li key={l}>
                {languageName(l)}{' '}
                <button
                  type="button"
                  className="link"
                  aria-label={t('account.removeLanguage', { name: languageName(l) })}
                  onClick={() => prefs.mutate({ secondaryLanguages: secondary.filter((x) => x !== l) })}
                >
                  ✕
                </button>
              </li>
            ))}
          </ul>
          <select
            className="narrow"
            aria-label={t('account.addLanguage')}
            value=""
            disabled={secondary.length >= MAX_SECONDARY}
            onChange={(e) => e.target.value && prefs.mutate({ secondaryLanguages: [...secondary, e.target.value] })}
          >
            <option value="">
              {secondary.length >= MAX_SECONDARY ? t('account.languagesFull', { n: MAX_SECONDARY }) : t('account.addLanguage')}
            </option>
            {languages
              .filter((l) => l !== p.primaryLanguage && !secondary.includes(l))
              .map((l) => (
                <option key={l} value={l}>
                  {languageName(l)}
                </option>
              ))}
          </select>
          <small className="muted">{t('account.languagesHint')}</small>
        </div>
        <Field label={t('account.dateFormat')}>
          {(id) => (
            <select id={id} value={p.dateFormatPrimary} onChange={(e) => prefs.mutate({ dateFormatPrimary: e.target.value })}>
              {DATE_FORMATS.map((f) => (
                <option key={f}>{f}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('account.dateFormatSecondary')}>
          {(id) => (
            <select id={id} value={p.dateFormatSecondary} onChange={(e) => prefs.mutate({ dateFormatSecondary: e.target.value })}>
              <option value="none">{t('account.none')}</option>
              {DATE_FORMATS.map((f) => (
                <option key={f}>{f}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('account.timeFormat')}>
          {(id) => (
            <select id={id} value={p.timeFormat} onChange={(e) => prefs.mutate({ timeFormat: e.target.value })}>
              <option value="24h">24h</option>
              <option value="12h">12h</option>
            </select>
          )}
        </Field>
        <Field label={t('account.startOfWeek')}>
          {(id) => (
            <select id={id} value={p.startOfWeek} onChange={(e) => prefs.mutate({ startOfWeek: e.target.value })}>
              {(['monday', 'sunday', 'saturday'] as const).map((d) => (
                <option key={d} value={d}>
                  {t(`day.${d}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorText error={prefs.error} />
      </div>

      <h2>{t('account.mfa')}</h2>
      <div className="card" data-testid="mfa">
        <p>
          {me.mfa.enabled
            ? t('account.mfaOn', { date: fmt.dateTime(me.mfa.enrolledAt), n: me.mfa.backupCodesRemaining })
            : t('account.mfaOff')}
        </p>
        {backupCodes ? (
          <div role="region" aria-label={t('account.backupCodes')}>
            <p>{t('account.backupCodes')}</p>
            <ul className="codes">
              {backupCodes.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {!me.mfa.enabled && !enroll ? (
          <button type="button" onClick={() => begin.mutate()} disabled={begin.isPending}>
            {t('account.mfaEnroll')}
          </button>
        ) : null}
        <ErrorText error={begin.error} />
        {enroll ? (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              confirm.mutate(code.trim());
            }}
          >
            <p>{t('account.mfaScan')}</p>
            <img src={enroll.qrDataUrl} alt={t('account.qrAlt')} width={196} height={196} />
            <p>
              {t('account.mfaManual')}: <code>{enroll.manualKey}</code>
            </p>
            <Field label={t('account.mfaCode')}>
              {(id) => (
                <input
                  id={id}
                  inputMode="numeric"
                  pattern="[0-9]{6}"
                  autoComplete="one-time-code"
                  required
                  value={code}
                  onChange={(e) => setCode(e.target.value)}
                />
              )}
            </Field>
            <ErrorText error={confirm.error} />
            <div className="row">
              <button type="submit" disabled={confirm.isPending}>
                {t('account.mfaConfirm')}
              </button>
              <button type="button" className="secondary" onClick={() => cancel.mutate()}>
                {t('common.cancel')}
              </button>
            </div>
          </form>
        ) : null}
        {me.mfa.enabled ? (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              // Hub admins cannot turn the second factor off: Enter asks for new codes instead.
              if (me.user.isAdmin) regenerate.mutate(password);
              else disable.mutate(password);
            }}
          >
            <Field label={t('signIn.password')}>
              {(id) => <input id={id} type="password" required value={password} onChange={(e) => setPassword(e.target.value)} />}
            </Field>
            {!me.user.isAdmin ? (
              <button type="submit" className="danger" disabled={disable.isPending}>
                {t('account.mfaDisable')}
              </button>
            ) : null}
            <button
              type="button"
              className="secondary"
              disabled={regenerate.isPending || !password}
              onClick={() => regenerate.mutate(password)}
            >
              {t('account.regenerate')}
            </button>
          </form>
        ) : null}
        <ErrorText error={disable.error ?? regenerate.error} />
      </div>

      {me.mfa.rememberedDevices.length > 0 ? (
        <>
          <h2>{t('account.devices')}</h2>
          <ul className="card">
            {me.mfa.rememberedDevices.map((d) => (
              <li key={d.id} className="row">
                <span>{d.userAgent ?? d.id}</span>
                <span className="muted small">{fmt.dateTime(d.lastUsedAt ?? d.createdAt ?? null)}</span>
                <button type="button" className="secondary" onClick={() => forgetDevice.mutate(d.id)}>
                  {t('common.revoke')}
                </button>
              </li>
            ))}
          </ul>
          <ErrorText error={forgetDevice.error} />
        </>
      ) : null}
      {me.mfa.enabled && passkeysSupported() ? (
        <form
          className="row card"
          onSubmit={(e) => {
            e.preventDefault();
            addPasskey.mutate(passkeyName);
          }}
        >
          <Field label={t('account.passkeyName')}>
            {(id) => (
              <input
                id={id}
                value={passkeyName}
                maxLength={LIMITS.passkeyName.maxLength}
                onChange={(e) => setPasskeyName(e.target.value)}
              />
            )}
          </Field>
          <button type="submit" disabled={addPasskey.isPending}>
            {t('account.addPasskey')}
          </button>
          <ErrorText error={addPasskey.error} />
        </form>
      ) : null}
      {me.mfa.passkeys.length > 0 ? (
        <>
          <h2>{t('account.passkeys')}</h2>
          <ul className="card">
            {me.mfa.passkeys.map((k) => (
              <li key={k.id} className="row">
                <span>{k.name}</span>
                <span className="muted small">{fmt.dateTime(k.lastUsedAt ?? k.createdAt)}</span>
                <button type="button" className="secondary" onClick={() => removePasskey.mutate(k.id)}>
                  {t('common.delete')}
                </button>
              </li>
            ))}
          </ul>
          <ErrorText error={removePasskey.error} />
        </>
      ) : null}
    </section>
  );
}
