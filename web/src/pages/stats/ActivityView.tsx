/** When birds call: detections per local hour, the hour × day heat map, and each satellite's peak hour. */
import { useMemo } from 'react';
import { useActivity, useHeatmap, useSatelliteActivity } from '../../api/hooks/stats';
import { useT } from '../../i18n';
import { ErrorText, Loading } from '../../components/ui';
import { BarChart } from '../../components/charts/Chart';
import { StatsFilters, ZoneNote, useStatsFilter, useStatsFormat, type StatsFormat } from './common';

const HOURS = Array.from({ length: 24 }, (_, h) => h);

export function ActivityView() {
  const t = useT();
  const fmt = useStatsFormat();
  const filter = useStatsFilter();
  const activity = useActivity(filter);
  const heat = useHeatmap(filter);
  const perSat = useSatelliteActivity(filter);
  const labels = useMemo(() => HOURS.map(fmt.hour), [fmt]);
  const values = useMemo(() => (activity.data?.hours ?? []).map((h) => h.count), [activity.data]);
  return (
    <>
      <StatsFilters />
      <ZoneNote answer={activity.data} />
      <ErrorText error={activity.error ?? heat.error ?? perSat.error} />
      {activity.isLoading ? <Loading /> : null}
      {activity.data ? (
        <BarChart
          title={t('stats.hourly')}
          labels={labels}
          values={values}
          valueLabel={t('stats.detections')}
          formatY={fmt.int}
          testId="hourly-chart"
        />
      ) : null}
      <h2>{t('stats.heatmap')}</h2>
      {heat.data ? <Heatmap days={heat.data.days} fmt={fmt} /> : null}
      <h2>{t('stats.peakHours')}</h2>
      {perSat.data ? (
        perSat.data.satellites.length === 0 ? (
          <p>{t('stats.noDetections')}</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="satellite-activity">
              <thead>
                <tr>
                  <th scope="col">{t('stats.satellite')}</th>
                  <th scope="col">{t('stats.detections')}</th>
                  <th scope="col">{t('stats.peakHour')}</th>
                </tr>
              </thead>
              <tbody>
                {perSat.data.satellites.map((s) => (
                  <tr key={s.satelliteId}>
                    <th scope="row">{s.name}</th>
                    <td>{fmt.int(s.detectionCount)}</td>
                    <td>{s.peakHour === null ? '—' : `${fmt.hour(s.peakHour)}:00`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : null}
    </>
  );
}

/**
 * Hours down, local days across; a cell's shade is its count over the busiest cell's. The grid
 * is one image to screen readers, named by its busiest cell and total; each cell's title gives
 * its own count.
 */
function Heatmap({ days, fmt }: { days: Array<{ date: string; hours: number[] }>; fmt: StatsFormat }) {
  const t = useT();
  let max = 0;
  let peak: { date: string; hour: number; count: number } | null = null;
  let total = 0;
  for (const d of days)
    d.hours.forEach((c, h) => {
      total += c;
      if (c > max) {
        max = c;
        peak = { date: d.date, hour: h, count: c };
      }
    });
  const cell = days.length <= 31 ? '1.1rem' : days.length <= 92 ? '0.55rem' : '0.3rem';
  const labelEvery = Math.max(1, Math.ceil(days.length / 12));
  const p = peak as { date: string; hour: number; count: number } | null;
  const summary = p
    ? t('stats.heatmap.summary', { total, day: fmt.day(p.date), hour: fmt.hour(p.hour), n: fmt.int(p.count) })
    : t('stats.noDetections');
  return (
    <figure className="chart">
      <div
        className="heat"
        role="img"
        aria-label={summary}
        data-testid="heatmap"
        style={{ gridTemplateColumns: `auto repeat(${days.length}, minmax(0, ${cell}))` }}
      >
        <span />
        {days.map((d, i) => (
          <span key={d.date} className="col-lab" aria-hidden="true">
            {i % labelEvery === 0 && i < days.length - 2 ? fmt.shortDay(d.date) : ''}
          </span>
        ))}
        {HOURS.map((h) => [
          <span key={`l${h}`} className="lab" aria-hidden="true">
            {h % 3 === 0 ? fmt.hour(h) : ''}
          </span>,
          ...days.map((d) => {
            const c = d.hours[h] ?? 0;
            return (
              <span
                key={`${d.date}-${h}`}
                className="cell"
                data-testid="heat-cell"
                data-day={d.date}
                data-hour={h}
                data-count={c}
                title={t('stats.heatmap.cell', { day: fmt.day(d.date), hour: fmt.hour(h), n: fmt.int(c) })}
                style={{ '--level': max ? (0.15 + (0.85 * c) / max).toFixed(3) : 0 } as React.CSSProperties}
              />
            );
          }),
        ])}
      </div>
      <figcaption className="muted small">{summary}</figcaption>
    </figure>
  );
}
