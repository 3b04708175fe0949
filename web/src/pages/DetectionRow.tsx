/**
 * One row of the detections list (issue 36 point 2), compact so a page scans: play, the call's
 * spectrogram thumbnail (rendered once by the hub), the species photo, name and time on two short
 * lines, the confidence, and the review actions, which show on hover and when the row is focused
 * or selected (always on touch screens). Each action names its key (the list's j/k/c/r/u/space/
 * Enter handler in Detections.tsx), so the keyboard is learnt by looking.
 */
import { useState, type Ref } from 'react';
import { Link } from 'react-router';
import type { Detection } from '../api/hooks/detections';
import type { SpeciesPhoto } from '../api/hooks/species-images';
import { Credit, SpeciesThumb } from '../components/SpeciesPhoto';
import { ErrorText } from '../components/ui';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { DetectionExtras } from './DetectionExtras';
import './detection-row.css';

export type Vote = 'confirm' | 'reject' | 'unsure';
export const VOTE_KEYS: Record<Vote, string> = { confirm: 'c', reject: 'r', unsure: 'u' };

export function DetectionRow({
  d,
  name,
  photo,
  selected,
  fresh,
  playing,
  mine,
  canVote,
  canComment,
  voting,
  voteError,
  open,
  rowRef,
  onFocus,
  onPlay,
  onVote,
  onToggleExtras,
}: {
  d: Detection;
  name: { primary: string; others: string[] };
  photo?: SpeciesPhoto;
  selected: boolean;
  fresh: boolean;
  playing: boolean;
  mine?: Vote;
  canVote: boolean;
  canComment: boolean;
  voting: boolean;
  voteError: unknown;
  open: boolean;
  rowRef: Ref<HTMLLIElement>;
  onFocus: () => void;
  onPlay: () => void;
  onVote: (v: Vote) => void;
  onToggleExtras: () => void;
}) {
  const t = useT();
  const fmt = useFormat();
  // A chunk whose audio is gone has no thumbnail: the slot stays, empty.
  const [thumbGone, setThumbGone] = useState(false);
  const credit = photo && photo.status === 'ready' && photo.author && photo.licence && photo.sourceUrl ? photo : null;
  return (
    <li
      ref={rowRef}
      tabIndex={0}
      className={`det-row${selected ? ' selected' : ''}${fresh ? ' fresh' : ''}`}
      aria-current={selected ? 'true' : undefined}
      data-testid="detection"
      data-id={d.id}
      onFocus={onFocus}
    >
      <div className="det-line">
        <button
          type="button"
          className="play"
          aria-label={`${playing ? t('det.pause') : t('det.play')} ${name.primary}`}
          aria-keyshortcuts="Space"
          onClick={onPlay}
        >
          {playing ? '❚❚' : '▶'}
        </button>
        <span className="det-thumb">
          {thumbGone ? null : (
            <img
              src={`/api/audio/${encodeURIComponent(d.audioChunkId)}/thumbnail.png`}
              width={96}
              height={32}
              alt={t('det.thumb')}
              loading="lazy"
              data-testid="spectrogram-thumb"
              onError={() => setThumbGone(true)}
            />
          )}
        </span>
        <SpeciesThumb photo={photo} name={name.primary} />
        <div className="det-text">
          <div className="det-name">
            <Link to={`/detections/${d.id}`} className="species">
              <strong>{name.primary}</strong>
            </Link>{' '}
            {name.others.length > 0 ? <span className="muted">{name.others.join(' · ')} </span> : null}
            <Link
              to={`/stats/species/${encodeURIComponent(d.speciesCode)}`}
              className="muted"
              title={t('det.speciesStats', { name: name.primary })}
              data-testid="species-stats-link"
            >
              <em>{d.scientificName}</em>
            </Link>
          </div>
          <div className="det-sub muted small">
            <span>
              {fmt.dateTime(d.detectedAt)} · {d.satelliteName ?? d.satelliteId}
            </span>
            {d.isFirstOfSeason ? <span className="badge season">{t('det.badge.firstOfSeason')}</span> : null}
            {d.isRare ? <span className="badge rare">{t('det.badge.rare')}</span> : null}
            {d.tentative ? <span className="badge tentative">{t('det.badge.tentative')}</span> : null}
            {d.recorders > 1 ? (
              <span className="badge recorders" data-testid="recorders">
                {t('det.badge.recorders', { n: d.recorders })}
              </span>
            ) : null}
            {d.outOfRange ? (
              <span
                className="badge out-of-range"
                data-testid="out-of-range"
                title={
                  d.rangeScore !== null
                    ? t('det.badge.outOfRangeScore', { score: fmt.fixed(d.rangeScore, 3) })
                    : d.rangeSource === 'ebird'
                      ? t('det.badge.outOfRangeEbird')
                      : t('det.badge.outOfRangeList')
                }
              >
                {t('det.badge.outOfRange')}
              </span>
            ) : null}
            <span className={`badge status-${d.verificationStatus}`} data-testid="status">
              {t(`det.status.${d.verificationStatus}`)}
            </span>
            {mine ? <span>{t('det.yourVote', { vote: t(`det.${mine}`) })}</span> : null}
            {credit ? (
              <Credit author={credit.author!} licence={credit.licence!} licenceUrl={credit.licenceUrl} sourceUrl={credit.sourceUrl!} />
            ) : null}
          </div>
        </div>
        <div
          className="conf"
          title={`${t('det.raw')} ${fmt.fixed(d.confidence, 3)} · ${t('det.calibrated')} ${fmt.fixed(d.calibrated_confidence, 3)}`}
        >
          <span>{fmt.pct(d.calibrated_confidence)}</span>
          <small className="muted">
            {t('det.raw')} {fmt.pct(d.confidence)}
          </small>
        </div>
        <div className="det-actions" role="group" aria-label={t('det.review')} data-testid="row-actions">
          {canVote
            ? (['confirm', 'reject', 'unsure'] as const).map((v) => (
                <button
                  key={v}
                  type="button"
                  className={`vote vote-${v}${mine === v ? ' chosen' : ''}`}
                  aria-label={t(`det.${v}`)}
                  aria-keyshortcuts={VOTE_KEYS[v]}
                  aria-pressed={mine === v}
                  disabled={voting}
                  onClick={() => onVote(v)}
                >
                  {t(`det.${v}`)} <kbd>{VOTE_KEYS[v]}</kbd>
                </button>
              ))
            : null}
          <button
            type="button"
            className="secondary more"
            aria-expanded={open}
            aria-label={`${t('det.comments')} / ${t('det.share')}`}
            title={`${t('det.comments')} / ${t('det.share')}`}
            onClick={onToggleExtras}
          >
            …
          </button>
        </div>
      </div>
      {voteError ? <ErrorText error={voteError} /> : null}
      {open ? <DetectionExtras detection={d} canComment={canComment} /> : null}
    </li>
  );
}
