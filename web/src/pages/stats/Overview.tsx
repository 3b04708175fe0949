/** The morning view: headline counts, the daily trend and the most detected species. */
import { useCallback, useMemo } from 'react';
import { useDashboardStats, useTopSpecies, useTrends } from '../../api/hooks/stats';
import { useT } from '../../i18n';
import { ErrorText, Loading } from '../../components/ui';
import { LineChart } from '../../components/charts/Chart';
import { SpeciesLink, StatsFilters, Tile, ZoneNote, useNamer, useStatsFilter, useStatsFormat } from './common';

export function Overview() {
  const t = useT();
  const fmt = useStatsFormat();
  const filter = useStatsFilter();
  const dash = useDashboardStats(filter);
  const trends = useTrends(filter);
  const top = useTopSpecies(filter, 10);
  const d = dash.data;
  return (
    <>
      <StatsFilters />
      <ZoneNote answer={d} />
      <ErrorText error={dash.error ?? trends.error ?? top.error} />
      {dash.isLoading ? <Loading /> : null}
      {d ? (
        <div className="stat-tiles">
          <Tile label={t('stats.detections')} value={fmt.int(d.detectionCount)} testId="tile-detections" />
          <Tile label={t('stats.speciesCount')} value={fmt.int(d.speciesCount)} testId="tile-species" />
          <Tile label={t('stats.today')} value={fmt.int(d.todayCount)} />
          <Tile label={t('stats.confirmed')} value={fmt.int(d.confirmedCount)} />
          <Tile label={t('stats.satellites')} value={fmt.int(d.satelliteCount)} />
          <Tile label={t('stats.chunks')} value={fmt.int(d.chunkCount)} />
        </div>
      ) : null}
      <div className="grid-2">
        <TrendChart days={trends.data?.days} />
        <TopSpeciesTable species={top.data?.species} />
      </div>
    </>
  );
}

function TrendChart({ days }: { days?: Array<{ date: string; count: number }> }) {
  const t = useT();
  const fmt = useStatsFormat();
  const xs = useMemo(() => (days ?? []).map((_, i) => i), [days]);
  const series = useMemo(() => [{ label: t('stats.detections'), values: (days ?? []).map((d) => d.count) }], [days, t]);
  const formatX = useCallback((i: number) => (days && days[Math.round(i)] ? fmt.day(days[Math.round(i)].date) : ''), [days, fmt]);
  if (!days) return null;
  return (
    <LineChart title={t('stats.trends')} xs={xs} series={series} formatX={formatX} formatY={fmt.int} time={false} testId="trend-chart" />
  );
}

export function TopSpeciesTable({
  species,
}: {
  species?: Array<{ code: string; commonName: string; scientificName: string; count: number }>;
}) {
  const t = useT();
  const fmt = useStatsFormat();
  const names = useNamer(useMemo(() => (species ?? []).map((s) => s.code), [species]));
  if (!species) return null;
  return (
    <div>
      <h2>{t('stats.topSpecies')}</h2>
      {species.length === 0 ? (
        <p>{t('stats.noDetections')}</p>
      ) : (
        <div className="table-wrap">
          <table data-testid="top-species">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{t('stats.species')}</th>
                <th scope="col">{t('stats.count')}</th>
              </tr>
            </thead>
            <tbody>
              {species.map((s, i) => (
                <tr key={s.code} data-testid="top-species-row">
                  <td>{i + 1}</td>
                  <th scope="row">
                    <SpeciesLink code={s.code} name={s.commonName} scientific={s.scientificName} names={names} />
                  </th>
                  <td data-testid="count">{fmt.int(s.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
