/** Comments and the share link of one detection, opened under its row. */
import { useState, type FormEvent } from 'react';
import { useAddComment, useComments, useShareLink, type Detection } from '../api/hooks/detections';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { CopyButton, ErrorText, Field } from '../components/ui';
import { LIMITS } from '../limits';

export function DetectionExtras({ detection, canComment }: { detection: Detection; canComment: boolean }) {
  const t = useT();
  const fmt = useFormat();
  const comments = useComments(detection.id);
  const [text, setText] = useState('');
  const add = useAddComment(detection.id, () => setText(''));
  const share = useShareLink(detection.id);

  function submit(e: FormEvent) {
    e.preventDefault();
    if (text.trim()) add.mutate(text.trim());
  }

  return (
    <div className="extras">
      <h3>{t('det.comments')}</h3>
      <ErrorText error={comments.error} />
      <ul className="comments">
        {(comments.data?.comments ?? []).map((c) => (
          <li key={c.id}>
            <strong>{c.authorName ?? ''}</strong> <span className="muted small">{fmt.dateTime(c.createdAt)}</span>
            <p>{c.text}</p>
          </li>
        ))}
      </ul>
      {canComment ? (
        <form onSubmit={submit} className="row">
          <Field label={t('det.addComment')}>
            {(id) => <input id={id} value={text} maxLength={LIMITS.comment.maxLength} onChange={(e) => setText(e.target.value)} />}
          </Field>
          <button type="submit" disabled={add.isPending}>
            {t('det.send')}
          </button>
        </form>
      ) : null}
      <ErrorText error={add.error} />
      <div className="row">
        <button type="button" className="secondary" onClick={() => share.mutate()}>
          {t('det.share')}
        </button>
        {share.data ? (
          <>
            <input readOnly aria-label={t('det.share')} value={share.data.shareUrl} onFocus={(e) => e.target.select()} />
            <CopyButton text={share.data.shareUrl} />
            <span className="muted small">{t('det.shareExpires', { date: fmt.dateTime(share.data.expiresAt) })}</span>
          </>
        ) : null}
      </div>
      <ErrorText error={share.error} />
    </div>
  );
}
