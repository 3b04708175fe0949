/**
 * Hub admins: mobile app releases. Upload a package (.apk, .aab, .ipa) with its SemVer version,
 * notes and force flag; the 20 most recent uploads with size, SHA-256, download and delete.
 */
import type { FormEvent } from 'react';
import { useMobileReleaseMutations, useMobileReleases } from '../../api/hooks/mobile';
import { useT } from '../../i18n';
import { useFormat } from '../../session';
import { CopyButton, EmptyNote, ErrorText, Field } from '../ui';

export function MobileReleases() {
  const t = useT();
  const fmt = useFormat();
  const releases = useMobileReleases();
  const { add, toggleForce, remove } = useMobileReleaseMutations();

  const onUpload = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    add.mutate(new FormData(form), { onSuccess: () => form.reset() });
  };

  const list = releases.data?.releases ?? [];
  return (
    <>
      <ErrorText error={releases.error} />
      {releases.data && list.length === 0 ? <EmptyNote>{t('mobile.none')}</EmptyNote> : null}
      {list.length > 0 ? (
        <div className="table-wrap">
          <table aria-label={t('mobile.title')}>
            <thead>
              <tr>
                <th scope="col">{t('mobile.version')}</th>
                <th scope="col">{t('mobile.uploadedAt')}</th>
                <th scope="col">{t('mobile.size')}</th>
                <th scope="col">SHA-256</th>
                <th scope="col">{t('mobile.force')}</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {list.map((r) => (
                <tr key={r.id}>
                  <th scope="row">
                    {r.version}
                    {r.notes ? <div className="small">{r.notes}</div> : null}
                  </th>
                  <td className="small">{fmt.dateTime(r.createdAt)}</td>
                  <td>{fmt.bytes(r.fileSize)}</td>
                  <td>
                    <div className="row tight">
                      <code title={r.sha256}>{r.sha256.slice(0, 12)}…</code>
                      <CopyButton text={r.sha256} label={t('mobile.copyHash')} />
                    </div>
                  </td>
                  <td>
                    <label className="row tight">
                      <input
                        type="checkbox"
                        checked={r.forceUpdate}
                        disabled={toggleForce.isPending}
                        onChange={() => toggleForce.mutate(r)}
                        aria-label={t('mobile.forceFor', { version: r.version })}
                      />
                      {r.forceUpdate ? t('mobile.forced') : t('mobile.optional')}
                    </label>
                  </td>
                  <td>
                    <div className="row tight">
                      <a href={r.downloadUrl} download>
                        {t('mobile.download')}
                      </a>
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => window.confirm(t('mobile.confirmDelete', { version: r.version })) && remove.mutate(r.id)}
                      >
                        {t('common.delete')}
                      </button>
                    </div>
                    {toggleForce.error && toggleForce.variables?.id === r.id ? <ErrorText error={toggleForce.error} /> : null}
                    {remove.error && remove.variables === r.id ? <ErrorText error={remove.error} /> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}

      <form className="card" onSubmit={onUpload} aria-label={t('mobile.upload')}>
        <h3>{t('mobile.upload')}</h3>
        <Field label={t('mobile.file')} hint={t('mobile.fileHint')}>
          {(id) => <input id={id} name="file" type="file" accept=".apk,.aab,.ipa" required />}
        </Field>
        <Field label={t('mobile.version')} hint={t('mobile.versionHint')}>
          {(id) => <input id={id} name="version" required maxLength={64} placeholder="1.4.2" />}
        </Field>
        <Field label={t('mobile.notes')}>{(id) => <textarea id={id} name="notes" maxLength={10000} rows={3} />}</Field>
        <label className="row tight">
          <input type="checkbox" name="forceUpdate" value="true" /> {t('mobile.forceUpload')}
        </label>
        <button type="submit" disabled={add.isPending}>
          {t('mobile.uploadButton')}
        </button>
        <ErrorText error={add.error} />
        {add.data ? <p role="status">{t('mobile.uploaded', { version: add.data.version })}</p> : null}
      </form>
    </>
  );
}
