/** Recording sessions (consecutive chunks of a satellite) and the timeline of one session. */
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { useSatellites } from '../api/hooks/satellites';
import { sessionKeys, useSessionTimeline, useSessions, type SessionRow } from '../api/hooks/sessions';
import { useT, type T } from '../i18n';
import { useSpeciesNames } from '../species';
import { useFormat, useSession } from '../session';
import { EmptyNote, ErrorText, Field, Loading } from '../components/ui';
import { NoTeam } from '../components/NoTeam';

const PAGE = 25;
type SortBy = 'date' | 'duration' | 'detections' | 'species' | 'chunks';

function minutes(t: T, ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? t('sessions.seconds', { n: s }) : t('sessions.minutes', { n: Math.round(s / 60) });
}

function TimelineView({ tenantId, s }: { tenantId: string; s: SessionRow }) {
  const t = useT();
  const fmt = useFormat();
  // The last chunk starts at `end`; its own length closes the range.
  const to = new Date(new Date(s.end).getTime() + 60_000).toISOString();
  const q = useSessionTimeline(s.id, { tenantId, satelliteId: s.satelliteId, from: s.start, to });
  const speciesName = useSpeciesNames(useMemo(() => (q.data?.detections ?? []).map((d) => d.speciesCode), [q.data]));
  if (q.isLoading) return <Loading />;
  if (!q.data) return <ErrorText error={q.error} />;
  const from = new Date(q.data.from).getTime();
  const span = Math.max(1, new Date(q.data.to).getTime() - from);
  const pct = (iso: string, extra = 0) => `${((new Date(iso).getTime() + extra - from) / span) * 100}%`;
  return (
    <div className="timeline-wrap">
      <div className="timeline" role="img" aria-label={t('sessions.timeline')}>
        {q.data.chunks.map((c) => (
          <span key={c.id} className="tl-chunk" style={{ left: pct(c.recordedAt), width: `${(c.durationMs / span) * 100}%` }} />
        ))}
        {q.data.detections.map((d) => (
          <span
            key={d.id}
            className="tl-det"
            style={{ left: pct(d.detectedAt) }}
            title={speciesName(d.speciesCode, d.commonName).primary}
          />
        ))}
      </div>
      <ul>
        {q.data.detections.map((d) => (
          <li key={d.id}>
            <Link to={`/detections/${d.id}`}>{speciesName(d.speciesCode, d.commonName).primary}</Link>{' '}
            <span className="muted small">
              {fmt.dateTime(d.detectedAt)} · {fmt.pct(d.calibrated_confidence)}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

export default function Sessions() {
  const t = useT();
  const fmt = useFormat();
  const { team } = useSession();
  const tenantId = team?.id ?? '';
  const [satelliteId, setSatelliteId] = useState('');
  const [filter, setFilter] = useState<'' | 'with-detections' | 'empty'>('');
  const [sortBy, setSortBy] = useState<SortBy>('date');
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const sats = useSatellites(tenantId);
  const list = useSessions(sessionKeys.list(tenantId, satelliteId, filter, sortBy, page), () => ({
    tenantId,
    satelliteId: satelliteId || undefined,
    filter: filter || undefined,
    sortBy,
    limit: PAGE,
    offset: page * PAGE,
  }));
  const speciesName = useSpeciesNames(
    useMemo(() => (list.data?.sessions ?? []).flatMap((s) => s.topSpecies.map((x) => x.speciesCode)), [list.data]),
  );
  if (!team) return <NoTeam />;
  const total = list.data?.total ?? 0;

  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">{t('sessions.title')}</h1>
      <div className="grid">
        <Field label={t('det.satellite')}>
          {(id) => (
            <select id={id} value={satelliteId} onChange={(e) => (setSatelliteId(e.target.value), setPage(0))}>
              <option value="">{t('det.allSatellites')}</option>
              {sats.data?.satellites.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('sessions.show')}>
          {(id) => (
            <select id={id} value={filter} onChange={(e) => (setFilter(e.target.value as typeof filter), setPage(0))}>
              <option value="">{t('sessions.all')}</option>
              <option value="with-detections">{t('sessions.withDetections')}</option>
              <option value="empty">{t('sessions.empty')}</option>
            </select>
          )}
        </Field>
        <Field label={t('det.sortBy')}>
          {(id) => (
            <select id={id} value={sortBy} onChange={(e) => (setSortBy(e.target.value as SortBy), setPage(0))}>
              <option value="date">{t('det.sort.date')}</option>
              <option value="duration">{t('sessions.duration')}</option>
              <option value="detections">{t('det.title')}</option>
              <option value="species">{t('det.sort.species')}</option>
              <option value="chunks">{t('sessions.chunks')}</option>
            </select>
          )}
        </Field>
      </div>
      <ErrorText error={sats.error} />
      <ErrorText error={list.error} />
      {list.isLoading ? <Loading /> : null}
      {list.data && list.data.sessions.length === 0 ? <EmptyNote>{t('sessions.none')}</EmptyNote> : null}
      <ol className="detections">
        {list.data?.sessions.map((s) => (
          <li key={s.id} className="det" data-testid="session">
            <div className="row">
              <strong>{fmt.dateTime(s.start)}</strong>
              <span className="muted small">
                {s.satelliteName ?? s.satelliteId} · {minutes(t, s.durationMs)} ·{' '}
                {t('sessions.counts', { chunks: s.chunkCount, detections: s.detectionCount, species: s.speciesCount })}
              </span>
              <span className="small">
                {s.topSpecies.map((x) => `${speciesName(x.speciesCode, x.commonName ?? '').primary} ×${x.count}`).join(', ')}
              </span>
              <span className="spacer" />
              <button
                type="button"
                className="secondary"
                aria-expanded={open === s.id}
                onClick={() => setOpen(open === s.id ? null : s.id)}
              >
                {t('sessions.timeline')}
              </button>
            </div>
            {open === s.id ? <TimelineView tenantId={tenantId} s={s} /> : null}
          </li>
        ))}
      </ol>
      <nav className="pager row" aria-label={t('common.pages')}>
        <button type="button" className="secondary" disabled={page === 0} onClick={() => setPage(page - 1)}>
          {t('det.prev')}
        </button>
        <span>{t('det.page', { page: page + 1 })}</span>
        <button type="button" className="secondary" disabled={(page + 1) * PAGE >= total} onClick={() => setPage(page + 1)}>
          {t('det.next')}
        </button>
      </nav>
    </section>
  );
}
