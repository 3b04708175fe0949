/**
 * The detections list: every filter of GET /detections kept in the URL, sorting, paging (the
 * total is counted once per filter set, later pages skip the count), audio in place, one-click
 * and keyboard review, comments, share links, and new detections arriving over the WebSocket.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { useDetections, useMyVotes, useVote, type Detection, type DetectionList } from '../api/hooks/detections';
import { useSatellites } from '../api/hooks/satellites';
import { atLeast } from '../roles';
import { useT } from '../i18n';
import { useSession } from '../session';
import { useLive } from '../live';
import { EmptyNote, ErrorText, Field, Loading } from '../components/ui';
import { DetectionRow } from './DetectionRow';
import { PRESETS, presetWindow, type Preset } from '../dates';
import { useSpeciesNames } from '../species';
import { useSpeciesPhotos } from '../api/hooks/species-images';
import { FieldNotes } from '../components/notes/FieldNotes';
import { NoTeam } from '../components/NoTeam';
import { LIMITS } from '../limits';
import { DateInput } from '../components/DateInput';
import { DemoModelNote } from '../components/DemoModelNote';

const PAGE = 25;
const FILTERS = [
  'speciesSearch',
  'species',
  'satelliteId',
  'minConfidence',
  'verificationStatus',
  'start',
  'end',
  'includeTentative',
  'outOfRange',
  'sortBy',
  'sortDir',
] as const;
type FilterKey = (typeof FILTERS)[number];
type Filters = Partial<Record<FilterKey, string>>;

const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
const toLocal = (iso: string | undefined) => {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function Detections() {
  const t = useT();
  const { team, role, me } = useSession();
  const tenantId = team?.id ?? null;
  const canVote = atLeast(role, 'member') && me.preferences.showVoting !== false;
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const filters: Filters = useMemo(
    () => Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? undefined]).filter(([, v]) => v)),
    [params],
  );
  const page = Math.max(0, Number(params.get('page') ?? 0) || 0);
  const filterKey = JSON.stringify(filters);

  const [total, setTotal] = useState<{ key: string; n: number | null } | null>(null);
  const list = useDetections(tenantId, filterKey, page, () => {
    const countNeeded = page === 0 || total?.key !== filterKey;
    return {
      tenantId: tenantId!,
      ...filters,
      minConfidence: filters.minConfidence ? Number(filters.minConfidence) : undefined,
      includeTentative: filters.includeTentative === 'true' ? 'true' : undefined,
      outOfRange: filters.outOfRange === 'true' || filters.outOfRange === 'false' ? filters.outOfRange : undefined,
      sortBy: filters.sortBy as 'date' | 'confidence' | 'species' | undefined,
      sortDir: filters.sortDir as 'asc' | 'desc' | undefined,
      verificationStatus: filters.verificationStatus as DetectionList['detections'][number]['verificationStatus'] | undefined,
      limit: PAGE,
      offset: page * PAGE,
      withCount: countNeeded ? 'true' : 'false',
    };
  });
  useEffect(() => {
    if (list.data && list.data.total !== null && !list.isPlaceholderData) setTotal({ key: filterKey, n: list.data.total });
  }, [list.data, list.isPlaceholderData, filterKey]);

  const satellites = useSatellites(tenantId);

  // Review without surprises: rows newer than the newest one on screen wait behind an "N new" bar
  // instead of pushing the card someone is reviewing down the list (votes by position stay on it).
  // Someone reviews once they select, play or vote on a row; until then the list stays live.
  const [reviewing, setReviewing] = useState(false);
  const [shown, setShown] = useState<{ key: string; ids: Set<string>; newest: string } | null>(null);
  const allRows = useMemo(() => list.data?.detections ?? [], [list.data]);
  const viewKey = `${filterKey}|${page}`;
  useEffect(() => {
    if (!list.data || list.isPlaceholderData || (reviewing && shown?.key === viewKey)) return;
    const newest = allRows.reduce((m, r) => (r.detectedAt > m ? r.detectedAt : m), '');
    setShown({ key: viewKey, ids: new Set(allRows.map((r) => r.id)), newest });
  }, [list.data, list.isPlaceholderData, allRows, viewKey, shown?.key, reviewing]);
  useEffect(() => setReviewing(false), [viewKey]);
  const held = reviewing && shown?.key === viewKey ? shown : null;
  const waiting = useMemo(() => (held ? allRows.filter((r) => !held.ids.has(r.id) && r.detectedAt > held.newest) : []), [allRows, held]);
  const rows = useMemo(() => (held ? allRows.filter((r) => held.ids.has(r.id) || r.detectedAt <= held.newest) : allRows), [allRows, held]);
  const showWaiting = () => {
    const keep = rows[selected]?.id;
    const newest = allRows.reduce((m, r) => (r.detectedAt > m ? r.detectedAt : m), '');
    setShown({ key: viewKey, ids: new Set(allRows.map((r) => r.id)), newest });
    const at = allRows.findIndex((r) => r.id === keep);
    setSelected(at >= 0 ? at : 0);
  };
  const speciesName = useSpeciesNames(useMemo(() => rows.map((d) => d.speciesCode), [rows]));
  const photos = useSpeciesPhotos(useMemo(() => rows.map((d) => d.speciesCode), [rows]));
  const ids = rows.map((r) => r.id).join(',');
  const votes = useMyVotes(tenantId, ids, canVote && ids.length > 0);

  // Live: the app shell's socket refreshes the list; new rows are marked as they arrive.
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const { connected: live, subscribe } = useLive();
  useEffect(() => subscribe((d) => setFresh((s) => new Set(s).add(d.id))), [subscribe]);

  // Review state: the selected row, the audio element, the open extras panel.
  const [selected, setSelected] = useState(0);
  const [playing, setPlaying] = useState<string | null>(null);
  const [openId, setOpenId] = useState<string | null>(null);
  const audio = useRef<HTMLAudioElement>(null);
  const rowRefs = useRef<Map<string, HTMLElement>>(new Map());

  const verify = useVote(tenantId, filterKey, page, ids);

  const togglePlay = useCallback(
    (d: Detection) => {
      const el = audio.current;
      if (!el) return;
      if (playing === d.id && !el.paused) {
        el.pause();
        return;
      }
      el.src = `/api/audio/${encodeURIComponent(d.audioChunkId)}`;
      setPlaying(d.id);
      void el.play().catch(() => setPlaying(null));
    },
    [playing],
  );

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      const target = e.target as HTMLElement;
      if (e.ctrlKey || e.metaKey || e.altKey || target.closest('input, textarea, select, [contenteditable]')) return;
      // Space and Enter on a button or link keep their own meaning.
      if ((e.key === ' ' || e.key === 'Enter') && target.closest('button, a, summary')) return;
      if (rows.length === 0) return;
      const d = rows[Math.min(selected, rows.length - 1)];
      const move = (i: number) => {
        const n = Math.max(0, Math.min(rows.length - 1, i));
        setSelected(n);
        rowRefs.current.get(rows[n].id)?.focus();
      };
      if (e.key === 'j') move(selected + 1);
      else if (e.key === 'k') move(selected - 1);
      else if (e.key === ' ') togglePlay(d);
      // Enter on the row itself (not a control in it) opens the detail page.
      else if (e.key === 'Enter' && target === rowRefs.current.get(d.id)) navigate(`/detections/${d.id}`);
      else if (canVote && e.key === 'c') verify.mutate({ id: d.id, vote: 'confirm' });
      else if (canVote && e.key === 'r') verify.mutate({ id: d.id, vote: 'reject' });
      else if (canVote && e.key === 'u') verify.mutate({ id: d.id, vote: 'unsure' });
      else return;
      e.preventDefault();
    }
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [rows, selected, canVote, togglePlay, verify, navigate]);

  const [windowError, setWindowError] = useState<string | null>(null);

  function applyFilters(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const next = new URLSearchParams();
    for (const k of FILTERS) {
      let v = String(form.get(k) ?? '').trim();
      if (k === 'start' || k === 'end') v = toIso(v);
      if (k === 'includeTentative') v = form.get(k) ? 'true' : '';
      // People enter a percentage; the API takes 0–1.
      if (k === 'minConfidence' && v) v = String(Math.min(100, Math.max(0, Number(v.replace(',', '.')))) / 100);
      if (v) next.set(k, v);
    }
    const start = next.get('start');
    const end = next.get('end');
    if (start && end && start >= end) {
      setWindowError(t('det.windowOrder'));
      return;
    }
    setWindowError(null);
    setSelected(0);
    setParams(next);
  }

  /** A quick window replaces From and Until and keeps the other filters in force. */
  function applyPreset(preset: Preset) {
    const { start, end } = presetWindow(preset, new Date(), me.preferences.startOfWeek);
    const next = new URLSearchParams(params);
    next.delete('page');
    next.set('start', start.toISOString());
    if (end) next.set('end', end.toISOString());
    else next.delete('end');
    setSelected(0);
    setParams(next);
  }

  const goPage = (p: number) => {
    const next = new URLSearchParams(params);
    if (p === 0) next.delete('page');
    else next.set('page', String(p));
    setSelected(0);
    setParams(next);
  };

  // The notes of the shown window (and satellite), beside the list; without a window, the latest.
  const notesQuery = useMemo(
    () => ({ satelliteId: filters.satelliteId, from: filters.start, to: filters.end, limit: 20 }),
    [filters.satelliteId, filters.start, filters.end],
  );

  if (!team) return <NoTeam />;
  const knownTotal = total?.key === filterKey ? total.n : null;
  const lastPage = knownTotal !== null ? Math.max(0, Math.ceil(knownTotal / PAGE) - 1) : rows.length < PAGE ? page : page + 1;

  return (
    <section aria-labelledby="det-title">
      <div className="title-row">
        <h1 id="det-title">{t('det.title')}</h1>
        <span className={`pill ${live ? 'ok' : 'off'}`} data-testid="live-state">
          {live ? t('det.live') : t('det.liveOff')}
        </span>
      </div>
      {tenantId ? <DemoModelNote tenantId={tenantId} /> : null}
      <details className="filters" open={Object.keys(filters).length > 0 || undefined}>
        <summary>{t('det.filters')}</summary>
        <form onSubmit={applyFilters} key={filterKey} className="grid">
          <Field label={t('det.speciesSearch')}>
            {(id) => <input id={id} name="speciesSearch" type="search" defaultValue={filters.speciesSearch} />}
          </Field>
          <Field label={t('det.species')}>{(id) => <input id={id} name="species" defaultValue={filters.species} />}</Field>
          <Field label={t('det.satellite')}>
            {(id) => (
              <select id={id} name="satelliteId" defaultValue={filters.satelliteId ?? ''}>
                <option value="">{t('det.allSatellites')}</option>
                {satellites.data?.satellites.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t('det.minConfidence')}>
            {(id) => (
              <span className="row tight">
                <input
                  id={id}
                  name="minConfidence"
                  type="number"
                  min={LIMITS.confidencePercent.min}
                  max={LIMITS.confidencePercent.max}
                  step={1}
                  defaultValue={filters.minConfidence ? Math.round(Number(filters.minConfidence) * 1000) / 10 : undefined}
                />
                <span className="muted">%</span>
              </span>
            )}
          </Field>
          <Field label={t('det.status')}>
            {(id) => (
              <select id={id} name="verificationStatus" defaultValue={filters.verificationStatus ?? ''}>
                <option value="">{t('det.anyStatus')}</option>
                {(['unverified', 'pending_review', 'confirmed', 'rejected'] as const).map((s) => (
                  <option key={s} value={s}>
                    {t(`det.status.${s}`)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t('det.start')}>
            {(id) => <DateInput id={id} name="start" type="datetime-local" defaultValue={toLocal(filters.start)} />}
          </Field>
          <Field label={t('det.end')} error={windowError}>
            {(id, describedBy) => (
              <DateInput id={id} name="end" type="datetime-local" defaultValue={toLocal(filters.end)} aria-describedby={describedBy} />
            )}
          </Field>
          <div className="row" role="group" aria-label={t('det.window')}>
            {PRESETS.map((p) => (
              <button key={p} type="button" className="secondary" onClick={() => applyPreset(p)}>
                {t(`det.preset.${p}`)}
              </button>
            ))}
          </div>
          <Field label={t('det.sortBy')}>
            {(id) => (
              <select id={id} name="sortBy" defaultValue={filters.sortBy ?? 'date'}>
                <option value="date">{t('det.sort.date')}</option>
                <option value="confidence">{t('det.sort.confidence')}</option>
                <option value="species">{t('det.sort.species')}</option>
              </select>
            )}
          </Field>
          <Field label={t('det.sortDir')}>
            {(id) => (
              <select id={id} name="sortDir" defaultValue={filters.sortDir ?? 'desc'}>
                <option value="desc">{t('det.desc')}</option>
                <option value="asc">{t('det.asc')}</option>
              </select>
            )}
          </Field>
          <Field label={t('det.range')}>
            {(id) => (
              <select id={id} name="outOfRange" defaultValue={filters.outOfRange ?? ''}>
                <option value="">{t('det.range.any')}</option>
                <option value="false">{t('det.range.inRange')}</option>
                <option value="true">{t('det.range.outOfRange')}</option>
              </select>
            )}
          </Field>
          <label className="check">
            <input type="checkbox" name="includeTentative" defaultChecked={filters.includeTentative === 'true'} />
            {t('det.includeTentative')}
          </label>
          <div className="row">
            <button type="submit">{t('det.apply')}</button>
            <button type="button" className="secondary" onClick={() => setParams(new URLSearchParams())}>
              {t('det.clear')}
            </button>
          </div>
        </form>
      </details>
      <ErrorText error={list.error} />
      <ErrorText error={satellites.error} />
      <ErrorText error={votes.error} />
      <p className="muted">
        {knownTotal !== null ? t('det.total', { n: knownTotal }) : null} · {t('det.page', { page: page + 1 })} ·{' '}
        <span className="hint">{t('det.keys')}</span>
      </p>
      <audio ref={audio} data-testid="player" preload="none" onPause={() => setPlaying(null)} onEnded={() => setPlaying(null)} />
      {list.isLoading ? <Loading /> : null}
      {!list.isLoading && rows.length === 0 ? <EmptyNote>{t('det.none')}</EmptyNote> : null}
      {waiting.length > 0 ? (
        <button type="button" className="new-bar" data-testid="new-bar" onClick={showWaiting}>
          {t('det.newWaiting', { n: waiting.length })}
        </button>
      ) : null}
      <ol className="detections" aria-label={t('det.title')}>
        {rows.map((d, i) => (
          <DetectionRow
            key={d.id}
            d={d}
            name={speciesName(d.speciesCode, d.commonName)}
            photo={photos.byCode.get(d.speciesCode)}
            selected={i === selected}
            fresh={fresh.has(d.id)}
            playing={playing === d.id}
            mine={votes.data?.votes[d.id]}
            canVote={canVote}
            canComment={atLeast(role, 'member')}
            voting={verify.isPending}
            voteError={verify.error && verify.variables?.id === d.id ? verify.error : null}
            open={openId === d.id}
            rowRef={(el) => {
              if (el) rowRefs.current.set(d.id, el);
              else rowRefs.current.delete(d.id);
            }}
            onFocus={() => {
              setSelected(i);
              setReviewing(true);
            }}
            onPlay={() => togglePlay(d)}
            onVote={(vote) => verify.mutate({ id: d.id, vote })}
            onToggleExtras={() => setOpenId(openId === d.id ? null : d.id)}
          />
        ))}
      </ol>
      <nav className="pager row" aria-label={t('common.pages')}>
        <button type="button" className="secondary" disabled={page === 0} onClick={() => goPage(page - 1)}>
          {t('det.prev')}
        </button>
        <span>{t('det.page', { page: page + 1 })}</span>
        <button type="button" className="secondary" disabled={page >= lastPage} onClick={() => goPage(page + 1)}>
          {t('det.next')}
        </button>
      </nav>
      <aside className="card" data-testid="window-notes">
        <FieldNotes
          tenantId={team.id}
          query={notesQuery}
          title={filters.start || filters.end ? t('notes.windowTitle') : t('notes.title')}
        />
      </aside>
    </section>
  );
}
