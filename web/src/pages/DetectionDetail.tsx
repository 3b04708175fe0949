/**
 * One detection: the chunk's spectrogram with the detection window, a time-frequency box drawn
 * with the pointer (or typed in) to annotate — each annotation carries a vote — the annotation
 * list, and the audio with a playhead moving over the spectrogram.
 */
import { useEffect, useMemo, useRef, useState, type FormEvent, type PointerEvent } from 'react';
import { Link, useParams } from 'react-router';
import { useSpectrogram } from '../api/hooks/audio';
import { useAnnotate, useAnnotations, useDetection, useMyVote, useVoteOnDetail, type Box, type Vote } from '../api/hooks/detections';
import { atLeast } from '../roles';
import { useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { ErrorText, Field, Loading } from '../components/ui';
import { DetectionExtras } from './DetectionExtras';
import { SimilarCalls } from './SimilarCalls';
import { ObservationRecordings } from '../components/ObservationRecordings';
import { useSpeciesNames } from '../species';
import { useSpeciesPhotos } from '../api/hooks/species-images';
import { SpeciesThumb } from '../components/SpeciesPhoto';
import { LIMITS } from '../limits';

export default function DetectionDetail() {
  const { id = '' } = useParams();
  const t = useT();
  const fmt = useFormat();
  const { role, me } = useSession();
  const canAnnotate = atLeast(role, 'member');
  const canVote = canAnnotate && me.preferences.showVoting !== false;
  const myVote = useMyVote(id, canVote);
  const voteHere = useVoteOnDetail(id);
  const det = useDetection(id);
  const chunkId = det.data?.audioChunkId;
  const spec = useSpectrogram(chunkId);
  const annotations = useAnnotations(id);

  const speciesName = useSpeciesNames(useMemo(() => (det.data ? [det.data.speciesCode] : []), [det.data]));
  const photos = useSpeciesPhotos(useMemo(() => (det.data ? [det.data.speciesCode] : []), [det.data]));
  const [box, setBox] = useState<Box | null>(null);
  const [vote, setVote] = useState<Vote>('confirm');
  const [notes, setNotes] = useState('');
  const annotate = useAnnotate(id, () => {
    setBox(null);
    setNotes('');
  });

  // Pointer drag → box in (ms, Hz): x is time from the left, y is frequency from the top (maxHz).
  const area = useRef<HTMLDivElement>(null);
  const drag = useRef<{ x: number; y: number } | null>(null);
  const [live, setLive] = useState<{ x0: number; y0: number; x1: number; y1: number } | null>(null);
  const toBox = (x0: number, y0: number, x1: number, y1: number): Box | null => {
    const s = spec.data;
    if (!s) return null;
    const [l, r] = [Math.min(x0, x1), Math.max(x0, x1)];
    const [top, bottom] = [Math.min(y0, y1), Math.max(y0, y1)];
    const span = s.maxHz - s.minHz;
    return {
      timeStartMs: Math.round(l * s.durationMs),
      timeEndMs: Math.round(r * s.durationMs),
      freqLowHz: Math.round(s.maxHz - bottom * span),
      freqHighHz: Math.round(s.maxHz - top * span),
    };
  };
  const rel = (e: PointerEvent) => {
    const r = area.current!.getBoundingClientRect();
    return { x: Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)), y: Math.min(1, Math.max(0, (e.clientY - r.top) / r.height)) };
  };
  function down(e: PointerEvent<HTMLDivElement>) {
    if (!canAnnotate || !spec.data) return;
    e.currentTarget.setPointerCapture(e.pointerId);
    const p = rel(e);
    drag.current = p;
    setLive({ x0: p.x, y0: p.y, x1: p.x, y1: p.y });
  }
  function move(e: PointerEvent<HTMLDivElement>) {
    if (!drag.current) return;
    const p = rel(e);
    setLive({ x0: drag.current.x, y0: drag.current.y, x1: p.x, y1: p.y });
  }
  function up(e: PointerEvent<HTMLDivElement>) {
    if (!drag.current) return;
    const p = rel(e);
    const b = toBox(drag.current.x, drag.current.y, p.x, p.y);
    drag.current = null;
    setLive(null);
    if (b && b.timeEndMs - b.timeStartMs >= 20) setBox(b);
  }

  // The playhead follows the audio.
  const audio = useRef<HTMLAudioElement>(null);
  const [pos, setPos] = useState(0);
  useEffect(() => {
    let raf = 0;
    const tick = () => {
      const a = audio.current;
      if (a && a.duration) setPos(a.currentTime / a.duration);
      raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, []);

  if (det.isLoading) return <Loading />;
  if (!det.data) return <ErrorText error={det.error} />;
  const d = det.data;
  const name = speciesName(d.speciesCode, d.commonName);
  const s = spec.data;
  const pct = (ms: number) => (s ? `${(ms / s.durationMs) * 100}%` : '0');
  const hzTop = (hz: number) => (s ? `${((s.maxHz - hz) / (s.maxHz - s.minHz)) * 100}%` : '0');
  const boxStyle = (b: Box) => ({
    left: pct(b.timeStartMs),
    width: pct(b.timeEndMs - b.timeStartMs),
    top: hzTop(b.freqHighHz),
    height: s ? `${((b.freqHighHz - b.freqLowHz) / (s.maxHz - s.minHz)) * 100}%` : 0,
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    if (box) annotate.mutate({ box, vote, notes });
  }
  const setField = (k: keyof Box, v: string) =>
    setBox((b) => ({
      ...(b ?? { timeStartMs: 0, timeEndMs: s?.durationMs ?? 3000, freqLowHz: 0, freqHighHz: s?.maxHz ?? 12000 }),
      [k]: Number(v),
    }));

  return (
    <section aria-labelledby="dd-title">
      <p>
        <Link to="/detections">← {t('det.title')}</Link>
      </p>
      <SpeciesThumb photo={photos.byCode.get(d.speciesCode)} name={name.primary} size={128} credit />
      <div className="title-row">
        <h1 id="dd-title">{name.primary}</h1>
        {name.others.length > 0 ? <span className="muted">{name.others.join(' · ')}</span> : null}
        <em className="muted">{d.scientificName}</em>
        <span className={`badge status-${d.verificationStatus}`}>{t(`det.status.${d.verificationStatus}`)}</span>
      </div>
      <p className="muted">
        {fmt.dateTime(d.detectedAt)} · {d.satelliteName ?? d.satelliteId} · {t('det.confidence')} {fmt.pct(d.calibrated_confidence)} (
        {t('det.raw')} {fmt.pct(d.confidence)})
      </p>
      {d.modelAttribution ? (
        <p className="muted small" data-testid="model-attribution">
          {d.modelAttribution}
        </p>
      ) : null}
      {canVote ? (
        <div className="row" role="group" aria-label={t('dd.voteGroup')} data-testid="detail-votes">
          {(['confirm', 'reject', 'unsure'] as const).map((v) => (
            <button
              key={v}
              type="button"
              className={`vote vote-${v}${myVote.data === v ? ' chosen' : ''}`}
              aria-pressed={myVote.data === v}
              disabled={voteHere.isPending}
              onClick={() => voteHere.mutate(v)}
            >
              {t(`det.${v}`)}
            </button>
          ))}
          <ErrorText error={voteHere.error} />
        </div>
      ) : null}
      <ErrorText error={spec.error} />
      <div
        ref={area}
        className={`spectrogram${canAnnotate ? ' drawable' : ''}`}
        data-testid="spectrogram"
        onPointerDown={down}
        onPointerMove={move}
        onPointerUp={up}
        aria-label={t('dd.spectrogram')}
        role="img"
      >
        {s ? <img src={s.url} alt="" draggable={false} /> : <Loading />}
        {s && d.startMs !== undefined && d.endMs !== undefined ? (
          // A window spanning the next chunk (5 s models) ends past this chunk's spectrogram: drawn to its edge.
          <div className="window" style={{ left: pct(d.startMs), width: pct(Math.min(d.endMs, s.durationMs) - d.startMs) }} />
        ) : null}
        {s
          ? annotations.data?.annotations.map((a) =>
              a.freqLowHz !== null && a.freqHighHz !== null ? (
                <div
                  key={a.id}
                  className={`abox vote-${a.vote}`}
                  style={boxStyle({ timeStartMs: a.timeStartMs, timeEndMs: a.timeEndMs, freqLowHz: a.freqLowHz, freqHighHz: a.freqHighHz })}
                />
              ) : null,
            )
          : null}
        {box && s ? <div className="abox pending" style={boxStyle(box)} /> : null}
        {live ? (
          <div
            className="abox pending"
            style={{
              left: `${Math.min(live.x0, live.x1) * 100}%`,
              width: `${Math.abs(live.x1 - live.x0) * 100}%`,
              top: `${Math.min(live.y0, live.y1) * 100}%`,
              height: `${Math.abs(live.y1 - live.y0) * 100}%`,
            }}
          />
        ) : null}
        <div className="playhead" style={{ left: `${pos * 100}%` }} />
      </div>
      {s ? (
        <p className="muted small">
          0–{s.durationMs} ms · {s.minHz}–{s.maxHz} Hz {canAnnotate ? `· ${t('dd.drawHint')}` : ''}
        </p>
      ) : null}
      {/* metadata: the player shows the length before play (the hub answers with Content-Length and byte ranges). */}
      <audio
        ref={audio}
        controls
        preload="metadata"
        src={`/api/audio/${encodeURIComponent(d.audioChunkId)}`}
        aria-label={t('det.play')}
        data-testid="detail-audio"
      />
      <ObservationRecordings recordings={d.recordings ?? []} current={d.id} />

      {canAnnotate ? (
        <form className="card grid" onSubmit={submit} aria-label={t('dd.annotate')}>
          <Field label={t('dd.start')}>
            {(fid) => (
              <input id={fid} type="number" value={box?.timeStartMs ?? ''} onChange={(e) => setField('timeStartMs', e.target.value)} />
            )}
          </Field>
          <Field label={t('dd.end')}>
            {(fid) => <input id={fid} type="number" value={box?.timeEndMs ?? ''} onChange={(e) => setField('timeEndMs', e.target.value)} />}
          </Field>
          <Field label={t('dd.low')}>
            {(fid) => <input id={fid} type="number" value={box?.freqLowHz ?? ''} onChange={(e) => setField('freqLowHz', e.target.value)} />}
          </Field>
          <Field label={t('dd.high')}>
            {(fid) => (
              <input id={fid} type="number" value={box?.freqHighHz ?? ''} onChange={(e) => setField('freqHighHz', e.target.value)} />
            )}
          </Field>
          <Field label={t('dd.vote')}>
            {(fid) => (
              <select id={fid} value={vote} onChange={(e) => setVote(e.target.value as Vote)}>
                <option value="confirm">{t('det.confirm')}</option>
                <option value="reject">{t('det.reject')}</option>
                <option value="unsure">{t('det.unsure')}</option>
              </select>
            )}
          </Field>
          <Field label={t('dd.notes')}>
            {(fid) => (
              <input id={fid} value={notes} maxLength={LIMITS.annotationNotes.maxLength} onChange={(e) => setNotes(e.target.value)} />
            )}
          </Field>
          <div className="row">
            <button type="submit" disabled={!box || annotate.isPending}>
              {t('dd.annotate')}
            </button>
          </div>
          <ErrorText error={annotate.error} />
        </form>
      ) : null}

      <h2>{t('dd.annotations')}</h2>
      <ErrorText error={annotations.error} />
      <ul data-testid="annotations">
        {annotations.data?.annotations.map((a) => (
          <li key={a.id}>
            <strong>{t(`det.${a.vote}`)}</strong> {a.timeStartMs}–{a.timeEndMs} ms
            {a.freqLowHz !== null ? ` · ${a.freqLowHz}–${a.freqHighHz} Hz` : ''} · {a.authorName ?? ''}{' '}
            <span className="muted small">{fmt.dateTime(a.createdAt)}</span>
            {a.notes ? <p>{a.notes}</p> : null}
          </li>
        ))}
      </ul>
      <SimilarCalls detectionId={d.id} canVote={canVote} />
      <DetectionExtras detection={d} canComment={canAnnotate} />
    </section>
  );
}
