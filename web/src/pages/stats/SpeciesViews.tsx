/**
 * The species of the window with their figures, and one species' profile: its counts, daily
 * trend, hours, satellites, confidence histogram and latest detections.
 */
import { useCallback, useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { useSpeciesList, useSpeciesProfile } from '../../api/hooks/stats';
import { useSatellites } from '../../api/hooks/satellites';
import { useT } from '../../i18n';
import { useFormat, useSession } from '../../session';
import { ErrorText, Loading } from '../../components/ui';
import { BarChart, Histogram, LineChart } from '../../components/charts/Chart';
import { SpeciesLink, StatsFilters, Tile, ZoneNote, useFilterSearch, useNamer, useStatsFilter, useStatsFormat } from './common';

export function SpeciesCatalog() {
  const t = useT();
  const fmt = useStatsFormat();
  const filter = useStatsFilter();
  const q = useSpeciesList(filter);
  const rows = q.data?.species;
  const names = useNamer(useMemo(() => (rows ?? []).map((s) => s.code), [rows]));
  return (
    <>
      <StatsFilters />
      <ZoneNote answer={q.data} />
      <ErrorText error={q.error} />
      {q.isLoading ? <Loading /> : null}
      {rows && rows.length === 0 ? <p>{t('stats.noDetections')}</p> : null}
      {rows && rows.length > 0 ? (
        <div className="table-wrap">
          <table data-testid="species-catalog">
            <thead>
              <tr>
                <th scope="col">{t('stats.species')}</th>
                <th scope="col">{t('stats.count')}</th>
                <th scope="col">{t('stats.satellites')}</th>
                <th scope="col">{t('stats.confirmed')}</th>
                <th scope="col">{t('stats.rejected')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.code} data-testid="catalog-row">
                  <th scope="row">
                    <SpeciesLink code={s.code} name={s.commonName} scientific={s.scientificName} names={names} />
                  </th>
                  <td>{fmt.int(s.count)}</td>
                  <td>{fmt.int(s.satelliteCount)}</td>
                  <td>{fmt.int(s.confirmed)}</td>
                  <td>{fmt.int(s.rejected)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

const STATUSES = ['unverified', 'pending_review', 'confirmed', 'rejected'] as const;
const isStatus = (s: string): s is (typeof STATUSES)[number] => (STATUSES as readonly string[]).includes(s);

const HOURS = Array.from({ length: 24 }, (_, h) => h);

export function SpeciesProfileView() {
  const t = useT();
  const fmt = useStatsFormat();
  const when = useFormat();
  const { team } = useSession();
  const code = useParams().code ?? '';
  const filter = useStatsFilter();
  const search = useFilterSearch();
  const q = useSpeciesProfile(filter, code);
  const sats = useSatellites(team?.id ?? null);
  const p = q.data;
  const names = useNamer(useMemo(() => (p ? [p.species.code] : []), [p]));
  const satName = useMemo(() => {
    const m = new Map<string, string>();
    for (const s of sats.data?.satellites ?? []) m.set(s.id, s.name);
    for (const s of p?.satellites ?? []) m.set(s.satelliteId, s.name);
    return (id: string) => m.get(id) ?? '—';
  }, [sats.data, p]);

  const trendXs = useMemo(() => (p?.trend ?? []).map((_, i) => i), [p]);
  const trendSeries = useMemo(() => [{ label: t('stats.detections'), values: (p?.trend ?? []).map((d) => d.count) }], [p, t]);
  const trendX = useCallback((i: number) => (p?.trend[Math.round(i)] ? fmt.day(p.trend[Math.round(i)].date) : ''), [p, fmt]);
  const hourLabels = useMemo(() => HOURS.map(fmt.hour), [fmt]);
  const edge = useCallback((x: number) => `${Math.round(x * 100)}`, []);

  if (q.error) return <ErrorText error={q.error} />;
  if (!p) return <Loading />;
  const n = names(p.species.code, p.species.commonName);
  return (
    <article aria-labelledby="profile-title" data-testid="species-profile">
      <p>
        <Link to={`/stats/species${search}`}>{t('stats.allSpecies')}</Link>
      </p>
      <h2 id="profile-title">
        {n.primary} <em className="muted small">{p.species.scientificName}</em>
      </h2>
      <StatsFilters />
      <ZoneNote answer={p} />
      <div className="stat-tiles">
        <Tile label={t('stats.detections')} value={fmt.int(p.count)} testId="profile-count" />
        <Tile label={t('stats.satellites')} value={fmt.int(p.satelliteCount)} />
        <Tile label={t('stats.confirmed')} value={fmt.int(p.confirmed)} />
        <Tile label={t('stats.rejected')} value={fmt.int(p.rejected)} />
      </div>
      <p>
        {t('stats.firstHeard')}: {when.dateTime(p.firstDetectedAt)} · {t('stats.lastHeard')}: {when.dateTime(p.lastDetectedAt)} ·{' '}
        <Link to={`/detections?${new URLSearchParams({ species: p.species.code }).toString()}`}>{t('stats.openDetections')}</Link>
      </p>
      <div className="grid-2">
        <LineChart title={t('stats.trends')} xs={trendXs} series={trendSeries} formatX={trendX} formatY={fmt.int} time={false} />
        <BarChart title={t('stats.hourly')} labels={hourLabels} values={p.hourly} valueLabel={t('stats.detections')} formatY={fmt.int} />
        <Histogram
          title={t('stats.confidence')}
          bins={p.confidence}
          formatEdge={edge}
          valueLabel={t('stats.detections')}
          testId="confidence-histogram"
        />
        <div>
          <h3>{t('stats.satellites')}</h3>
          <div className="table-wrap">
            <table data-testid="profile-satellites">
              <thead>
                <tr>
                  <th scope="col">{t('stats.satellite')}</th>
                  <th scope="col">{t('stats.detections')}</th>
                </tr>
              </thead>
              <tbody>
                {p.satellites.map((s) => (
                  <tr key={s.satelliteId}>
                    <th scope="row">{s.name}</th>
                    <td>{fmt.int(s.count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      </div>
      <h3>{t('stats.recent')}</h3>
      {p.recent.length === 0 ? <p>{t('stats.noDetections')}</p> : null}
      {p.recent.length > 0 ? (
        <div className="table-wrap">
          <table data-testid="profile-recent">
            <thead>
              <tr>
                <th scope="col">{t('stats.when')}</th>
                <th scope="col">{t('stats.satellite')}</th>
                <th scope="col">{t('stats.confidenceCol')}</th>
                <th scope="col">{t('stats.status')}</th>
              </tr>
            </thead>
            <tbody>
              {p.recent.map((r) => (
                <tr key={r.id}>
                  <th scope="row">
                    <Link to={`/detections/${r.id}`}>{when.dateTime(r.detectedAt)}</Link>
                  </th>
                  <td>{satName(r.satelliteId)}</td>
                  <td>{when.pct(r.confidence)}</td>
                  <td>{isStatus(r.verificationStatus) ? t(`det.status.${r.verificationStatus}`) : r.verificationStatus}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </article>
  );
}
