/**
 * "Similar calls" on a detection's page (issue 35 point 4): the team's nearest recordings by
 * sound, each with a play button, and "label all like this": the votes it would cast are listed
 * for the person to keep or drop, and only those kept are cast (each through the review rules).
 */
import { useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useLabelProposals, useLabelSimilar, useSimilarCalls, type BulkVote, type SimilarCall } from '../api/hooks/similarity';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { EmptyNote, ErrorText, Field } from '../components/ui';

const LIMIT = 10;

export function SimilarCalls({ detectionId, canVote }: { detectionId: string; canVote: boolean }) {
  const t = useT();
  const fmt = useFormat();
  const similar = useSimilarCalls(detectionId, LIMIT);
  const player = useRef<HTMLAudioElement>(null);
  const [playing, setPlaying] = useState<string | null>(null);

  function play(c: SimilarCall) {
    const a = player.current;
    if (!a) return;
    a.src = `/api/audio/${encodeURIComponent(c.audioChunkId)}`;
    setPlaying(c.id);
    // A browser may refuse to play (no sound device, autoplay rules); the player stays there to try.
    void a.play().catch(() => {});
  }

  const d = similar.data;
  return (
    <section className="similar-calls" aria-labelledby="similar-calls-h" data-testid="similar-calls">
      <h2 id="similar-calls-h">{t('sim.title')}</h2>
      <ErrorText error={similar.error} />
      {d && !d.searchable ? <EmptyNote>{t('sim.notSearchable')}</EmptyNote> : null}
      {d && d.searchable ? (
        <>
          <p className="muted small">{t('sim.intro', { model: d.modelId ?? '', index: t(`sim.index.${d.index}`) })}</p>
          {d.similar.length === 0 ? (
            <EmptyNote>{t('sim.none')}</EmptyNote>
          ) : (
            <table data-testid="similar-list">
              <thead>
                <tr>
                  <th>{t('det.play')}</th>
                  <th>{t('sim.species')}</th>
                  <th>{t('sim.similarity')}</th>
                  <th>{t('sim.confidence')}</th>
                  <th>{t('sim.votes')}</th>
                  <th>{t('sim.satellite')}</th>
                  <th>{t('sim.time')}</th>
                </tr>
              </thead>
              <tbody>
                {d.similar.map((c) => (
                  <tr key={c.id} data-testid="similar-row" data-id={c.id}>
                    <td>
                      <button
                        type="button"
                        className="secondary"
                        aria-pressed={playing === c.id}
                        aria-label={t('sim.playOne', { species: c.commonName, time: fmt.dateTime(c.detectedAt) })}
                        onClick={() => play(c)}
                      >
                        ▶
                      </button>
                    </td>
                    <td>
                      <Link to={`/detections/${c.id}`}>{c.commonName}</Link>
                    </td>
                    <td data-testid="similarity">{fmt.pct(c.similarity)}</td>
                    <td>{fmt.pct(c.confidence)}</td>
                    <td data-testid="votes">
                      {t('sim.voteCounts', { confirm: c.votes.confirm, reject: c.votes.reject, unsure: c.votes.unsure })}
                    </td>
                    <td>{c.satelliteName ?? '—'}</td>
                    <td>{fmt.dateTime(c.detectedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <audio ref={player} controls preload="none" aria-label={t('sim.player')} data-testid="similar-player" />
          {canVote && d.similar.length > 0 ? <LabelAllLikeThis detectionId={detectionId} /> : null}
        </>
      ) : null}
    </section>
  );
}

/** Propose, review, then cast: nothing is voted that the person did not keep ticked. */
function LabelAllLikeThis({ detectionId }: { detectionId: string }) {
  const t = useT();
  const fmt = useFormat();
  const [vote, setVote] = useState<BulkVote>('confirm');
  const [minPercent, setMinPercent] = useState(80);
  const [kept, setKept] = useState<Set<string>>(new Set());
  const proposals = useLabelProposals(detectionId);
  const label = useLabelSimilar(detectionId, () => proposals.reset());

  function propose(e: FormEvent) {
    e.preventDefault();
    label.reset();
    proposals.mutate({ vote, minSimilarity: minPercent / 100 }, { onSuccess: (p) => setKept(new Set(p.proposals.map((x) => x.id))) });
  }
  const list = proposals.data;

  return (
    <div className="card" data-testid="label-all">
      <h3>{t('sim.labelTitle')}</h3>
      <form className="row" onSubmit={propose} aria-label={t('sim.labelTitle')}>
        <Field label={t('dd.vote')}>
          {(id) => (
            <select id={id} value={vote} onChange={(e) => setVote(e.target.value as BulkVote)}>
              <option value="confirm">{t('det.confirm')}</option>
              <option value="reject">{t('det.reject')}</option>
            </select>
          )}
        </Field>
        <Field label={t('sim.minSimilarity')}>
          {(id) => (
            <input id={id} type="number" min={0} max={100} value={minPercent} onChange={(e) => setMinPercent(Number(e.target.value))} />
          )}
        </Field>
        <button type="submit" disabled={proposals.isPending}>
          {t('sim.propose')}
        </button>
      </form>
      <ErrorText error={proposals.error} />
      {list ? (
        list.proposals.length === 0 ? (
          <EmptyNote>{t('sim.noProposals')}</EmptyNote>
        ) : (
          <>
            <p className="muted small">{t('sim.review', { n: list.proposals.length, vote: t(`det.${list.vote}`) })}</p>
            <ul className="proposals" data-testid="proposals">
              {list.proposals.map((p) => (
                <li key={p.id}>
                  <label>
                    <input
                      type="checkbox"
                      checked={kept.has(p.id)}
                      onChange={(e) => {
                        const next = new Set(kept);
                        if (e.target.checked) next.add(p.id);
                        else next.delete(p.id);
                        setKept(next);
                      }}
                    />{' '}
                    {p.commonName} · {fmt.pct(p.similarity)} · {p.satelliteName ?? '—'} · {fmt.dateTime(p.detectedAt)}
                  </label>
                </li>
              ))}
            </ul>
            <button
              type="button"
              disabled={kept.size === 0 || label.isPending}
              onClick={() => label.mutate({ vote: list.vote as BulkVote, minSimilarity: list.minSimilarity, detectionIds: [...kept] })}
            >
              {t('sim.cast', { n: kept.size })}
            </button>
          </>
        )
      ) : null}
      <ErrorText error={label.error} />
      {label.data ? (
        <p role="status" data-testid="label-result">
          {t('sim.result', { voted: label.data.voted.length, skipped: label.data.skipped.length })}
        </p>
      ) : null}
    </div>
  );
}
