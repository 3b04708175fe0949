/**
 * The team's species over a window (GET /detections/summary and /detections/species-timeline):
 * how often each was detected, how confidently, first and last time, and when (one bar per
 * hour, day or week as the hub buckets the window). A species links to its detections.
 */
import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { Body } from '../api/client';
import { useSpeciesSummary, useSpeciesTimeline } from '../api/hooks/detections';
import { useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { useSpeciesNames } from '../species';
import { PRESETS, presetWindow, type Preset } from '../dates';
import { EmptyNote, ErrorText, Loading } from '../components/ui';
import { NoTeam } from '../components/NoTeam';
import { useSpeciesPhotos } from '../api/hooks/species-images';
import { SpeciesThumb } from '../components/SpeciesPhoto';
import { SpeciesThresholdCell } from '../components/SpeciesThreshold';
import { useSpeciesThresholds } from '../api/hooks/species-thresholds';

type Timeline = Body<'/api/detections/species-timeline', 'get'>;
type Bucket = Timeline['species'][number]['buckets'][number];

const UNIT_MS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;
const MAX_BARS = 400;

/** The first bucket the hub counts for a window: UTC hour, UTC day or UTC Monday. */
function firstBucket(start: Date, unit: Timeline['bucket']): number {
  const t = start.getTime();
  if (unit === 'hour') return Math.floor(t / UNIT_MS.hour) * UNIT_MS.hour;
  const day = Math.floor(t / UNIT_MS.day) * UNIT_MS.day;
  return unit === 'day' ? day : day - ((new Date(day).getUTCDay() + 6) % 7) * UNIT_MS.day;
}

function Activity({
  buckets,
  unit,
  start,
  end,
  label,
}: {
  buckets: Bucket[];
  unit: Timeline['bucket'];
  start: Date;
  end: Date;
  label: string;
}) {
  const from = firstBucket(start, unit);
  const n = Math.min(MAX_BARS, Math.max(1, Math.ceil((end.getTime() - from) / UNIT_MS[unit])));
  const counts = new Array<number>(n).fill(0);
  for (const b of buckets) {
    const i = Math.floor((Date.parse(b.start) - from) / UNIT_MS[unit]);
    if (i >= 0 && i < n) counts[i] += b.count;
  }
  const top = Math.max(1, ...counts);
  return (
    <svg className="activity" viewBox={`0 0 ${n} 20`} preserveAspectRatio="none" role="img" aria-label={label}>
      {counts.map((c, i) =>
        c > 0 ? <rect key={i} x={i + 0.1} width={0.8} y={20 - (18 * c) / top - 2} height={(18 * c) / top + 2} /> : null,
      )}
    </svg>
  );
}

export default function Species() {
  const t = useT();
  const fmt = useFormat();
  const { team, me } = useSession();
  const tenantId = team?.id ?? null;
  const [params, setParams] = useSearchParams();

  // The window lives in the URL; without one, the last seven days up to the moment the page opened.
  const fallback = useMemo(() => {
    const now = new Date();
    return { start: presetWindow('last7', now, 'monday').start.toISOString(), end: now.toISOString() };
  }, []);
  const start = params.get('start') ?? fallback.start;
  const end = params.get('end') ?? fallback.end;
  const choose = (p: Preset) => {
    const w = presetWindow(p, new Date(), me.preferences.startOfWeek);
    setParams({ start: w.start.toISOString(), end: (w.end ?? new Date()).toISOString() });
  };
  const summary = useSpeciesSummary(tenantId, start, end);
  const timeline = useSpeciesTimeline(tenantId, start, end);
  const rows = useMemo(() => summary.data?.species ?? [], [summary.data]);
  const names = useSpeciesNames(useMemo(() => rows.map((r) => r.speciesCode), [rows]));
  const photos = useSpeciesPhotos(useMemo(() => rows.map((r) => r.speciesCode), [rows]));
  const thresholds = useSpeciesThresholds(tenantId);
  const bucketsOf = useMemo(() => new Map((timeline.data?.species ?? []).map((s) => [s.speciesCode, s.buckets])), [timeline.data]);

  if (!team) return <NoTeam />;
  const s = summary.data;
  return (
    <section aria-labelledby="species-title">
      <h1 id="species-title">{t('species.title')}</h1>
      <div className="row" role="group" aria-label={t('det.window')}>
        {PRESETS.map((p) => (
          <button key={p} type="button" className="secondary" onClick={() => choose(p)}>
            {t(`det.preset.${p}`)}
          </button>
        ))}
      </div>
      <p className="muted" data-testid="species-window">
        {fmt.dateTime(start)} – {fmt.dateTime(end)}
        {s ? ` · ${t('species.totals', { n: s.total_detections, species: s.species.length })}` : ''}
        {s && s.tentative_detections > 0 ? ` · ${t('species.tentative', { n: s.tentative_detections, species: s.tentative_species })}` : ''}
      </p>
      <ErrorText error={summary.error ?? timeline.error} />
      {summary.isLoading ? <Loading /> : null}
      {s && rows.length === 0 ? <EmptyNote>{t('species.none')}</EmptyNote> : null}
      {rows.length > 0 ? (
        <div className="table-wrap">
          <table data-testid="species-table">
            <thead>
              <tr>
                <th scope="col">{t('species.name')}</th>
                <th scope="col">{t('species.count')}</th>
                <th scope="col">{t('species.best')}</th>
                <th scope="col">{t('species.first')}</th>
                <th scope="col">{t('species.last')}</th>
                <th scope="col">{t('species.activity')}</th>
                <th scope="col">{t('species.threshold')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => {
                const n = names(r.speciesCode, r.commonName);
                const filter = new URLSearchParams({ species: r.speciesCode, start, end }).toString();
                return (
                  <tr key={r.speciesCode} data-testid="species-row" data-code={r.speciesCode}>
                    <th scope="row">
                      <SpeciesThumb photo={photos.byCode.get(r.speciesCode)} name={n.primary} credit />
                      <Link to={`/detections?${filter}`}>{n.primary}</Link>
                      {n.others.length > 0 ? <span className="muted"> {n.others.join(' · ')}</span> : null}
                      <div>
                        <em className="muted small">{r.scientificName}</em>
                      </div>
                    </th>
                    <td>{r.count}</td>
                    <td>{fmt.pct(r.maxConfidence)}</td>
                    <td>{fmt.dateTime(r.firstDetectedAt)}</td>
                    <td>{fmt.dateTime(r.lastDetectedAt)}</td>
                    <td>
                      {timeline.data ? (
                        <Activity
                          buckets={bucketsOf.get(r.speciesCode) ?? []}
                          unit={timeline.data.bucket}
                          start={new Date(start)}
                          end={new Date(end)}
                          label={t('species.activityOf', { name: n.primary, unit: t(`species.unit.${timeline.data.bucket}`) })}
                        />
                      ) : null}
                    </td>
                    <td>
                      <SpeciesThresholdCell code={r.speciesCode} name={n.primary} summary={thresholds.byCode.get(r.speciesCode)} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
