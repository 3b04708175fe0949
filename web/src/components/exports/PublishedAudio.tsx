/**
 * Publishing recordings with an export (issue 34): the option beside the formats importers fetch
 * media from (Darwin Core, iNaturalist, xeno-canto), which says what it does and why it may be
 * unavailable, and, for team admins, the recordings published so far with their public links,
 * each revocable, and all at once.
 */
import { useState } from 'react';
import { usePublishedRecordings, useRevokePublished, type PublishedRecording } from '../../api/hooks/published-audio';
import { useT } from '../../i18n';
import { useFormat } from '../../session';
import { CopyButton, EmptyNote, ErrorText, Loading } from '../ui';

/** The export option: off, and disabled while the team does not publish (team setting publish_audio). */
export function PublishAudioOption(props: { publishes: boolean | undefined; checked: boolean; onChange: (on: boolean) => void }) {
  const t = useT();
  const off = props.publishes !== true;
  return (
    <div className="card" data-testid="publish-audio">
      <label className="check">
        <input
          type="checkbox"
          checked={props.checked && !off}
          disabled={off}
          aria-describedby="publish-audio-about"
          onChange={(e) => props.onChange(e.target.checked)}
        />
        {t('export.publishAudio')}
      </label>
      <small className="muted" id="publish-audio-about">
        {off ? t('export.publishAudio.off') : t('export.publishAudio.about')}
      </small>
    </div>
  );
}

/** Team admins: every published recording with its link and a Revoke button, and Revoke all. */
export function PublishedRecordings({ tenantId }: { tenantId: string }) {
  const t = useT();
  const list = usePublishedRecordings(tenantId);
  const revoke = useRevokePublished(tenantId);
  const [confirmAll, setConfirmAll] = useState(false);
  const rows = list.data?.recordings ?? [];
  return (
    <section aria-labelledby="published-title">
      <h2 id="published-title">{t('published.title')}</h2>
      <p className="muted small">{t('published.intro')}</p>
      <ErrorText error={list.error ?? revoke.one.error ?? revoke.all.error} />
      {list.isLoading ? <Loading /> : null}
      {list.isSuccess && rows.length === 0 ? <EmptyNote>{t('published.none')}</EmptyNote> : null}
      {rows.length > 0 ? (
        <>
          <p data-testid="published-total">{t('published.total', { n: list.data?.total ?? rows.length })}</p>
          <div className="table-wrap">
            <table aria-label={t('published.title')}>
              <thead>
                <tr>
                  <th scope="col">{t('published.col.recorded')}</th>
                  <th scope="col">{t('published.col.species')}</th>
                  <th scope="col">{t('published.col.published')}</th>
                  <th scope="col">{t('published.col.link')}</th>
                  <th scope="col">
                    <span className="sr-only">{t('published.revoke')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <Row key={r.id} r={r} pending={revoke.one.isPending} onRevoke={() => revoke.one.mutate(r.id)} />
                ))}
              </tbody>
            </table>
          </div>
          <div className="row">
            {confirmAll ? (
              <>
                <span className="small">{t('published.revokeAll.confirm', { n: list.data?.total ?? rows.length })}</span>
                <button
                  type="button"
                  className="danger"
                  disabled={revoke.all.isPending}
                  onClick={() => revoke.all.mutate(undefined, { onSuccess: () => setConfirmAll(false) })}
                >
                  {t('published.revokeAll')}
                </button>
                <button type="button" className="secondary" onClick={() => setConfirmAll(false)}>
                  {t('common.cancel')}
                </button>
              </>
            ) : (
              <button type="button" className="secondary" onClick={() => setConfirmAll(true)}>
                {t('published.revokeAll')}
              </button>
            )}
          </div>
        </>
      ) : null}
    </section>
  );
}

function Row({ r, pending, onRevoke }: { r: PublishedRecording; pending: boolean; onRevoke: () => void }) {
  const t = useT();
  const fmt = useFormat();
  return (
    <tr data-testid="published-row">
      <td>
        {fmt.dateTime(r.recordedAt)} <span className="muted small">{r.satelliteName}</span>
      </td>
      <td>{r.species.join(', ')}</td>
      <td>{fmt.dateTime(r.publishedAt)}</td>
      <td>
        <a href={r.url} target="_blank" rel="noreferrer" data-testid="published-link">
          {t('published.open')}
        </a>{' '}
        <CopyButton text={r.url} label={t('published.copy')} />
      </td>
      <td>
        <button type="button" className="secondary" disabled={pending} onClick={onRevoke}>
          {t('published.revoke')}
        </button>
      </td>
    </tr>
  );
}
