/**
 * Beyond the team's own data: how detections follow the weather at the satellites (Open-Meteo,
 * through the hub) and which species eBird observers report nearby against what the team heard.
 * Both may be unavailable (no network, no eBird key, no satellite position): the view says so
 * and why, and the rest of the section is unaffected.
 */
import { useMemo } from 'react';
import { useExpectedSpecies, useWeatherCorrelation } from '../../api/hooks/stats';
import { useT, type Key } from '../../i18n';
import { EmptyNote, ErrorText, Loading } from '../../components/ui';
import { SpeciesLink, StatsFilters, ZoneNote, useNamer, useStatsFilter, useStatsFormat } from './common';

const REASONS: Record<string, Key> = {
  not_configured: 'stats.unavailable.not_configured',
  no_position: 'stats.unavailable.no_position',
};

function Unavailable({ reason, detail, testId }: { reason?: string | null; detail?: string | null; testId: string }) {
  const t = useT();
  const known = reason ? REASONS[reason] : undefined;
  return (
    <p className="card unavailable" role="note" data-testid={testId}>
      <strong>{t('stats.unavailable')}</strong> {known ? t(known) : t('stats.unavailable.other')}
      {!known && detail ? <span className="muted small"> ({detail})</span> : null}
    </p>
  );
}

const FIELDS: Array<{ key: 'temperature' | 'precipitation' | 'windSpeed' | 'cloudCover'; label: Key }> = [
  { key: 'temperature', label: 'stats.weather.temperature' },
  { key: 'precipitation', label: 'stats.weather.precipitation' },
  { key: 'windSpeed', label: 'stats.weather.windSpeed' },
  { key: 'cloudCover', label: 'stats.weather.cloudCover' },
];

type CorrelationSet = Partial<Record<(typeof FIELDS)[number]['key'], { pearson: number | null; spearman: number | null; n: number }>>;

function CorrelationTable({ caption, correlations, testId }: { caption: string; correlations: CorrelationSet; testId?: string }) {
  const t = useT();
  const fmt = useStatsFormat();
  return (
    <div className="table-wrap">
      <table data-testid={testId}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('stats.weather.field')}</th>
            <th scope="col">{t('stats.weather.pearson')}</th>
            <th scope="col">{t('stats.weather.spearman')}</th>
            <th scope="col">{t('stats.weather.n')}</th>
          </tr>
        </thead>
        <tbody>
          {FIELDS.map((f) => {
            const c = correlations[f.key];
            return (
              <tr key={f.key}>
                <th scope="row">{t(f.label)}</th>
                <td>{fmt.dec(c?.pearson)}</td>
                <td>{fmt.dec(c?.spearman)}</td>
                <td>{fmt.int(c?.n)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Weather() {
  const t = useT();
  const filter = useStatsFilter();
  const q = useWeatherCorrelation(filter);
  const w = q.data;
  return (
    <section aria-labelledby="weather-title">
      <h2 id="weather-title">{t('stats.weather')}</h2>
      <p className="muted small">{t('stats.weather.hint')}</p>
      <ErrorText error={q.error} />
      {q.isLoading ? <Loading /> : null}
      {w && !w.available ? <Unavailable reason={w.reason} detail={w.detail} testId="weather-unavailable" /> : null}
      {w && w.available && w.overall ? (
        <CorrelationTable
          caption={t('stats.weather.overall', { n: w.overall.hours })}
          correlations={w.overall.correlations}
          testId="weather-overall"
        />
      ) : null}
      {w && w.available
        ? w.satellites.map((s) =>
            s.available && s.correlations ? (
              <CorrelationTable key={s.satelliteId} caption={s.name} correlations={s.correlations} />
            ) : (
              <p key={s.satelliteId} className="muted">
                {s.name}: {t('stats.unavailable')}
              </p>
            ),
          )
        : null}
    </section>
  );
}

interface ExpectedItem {
  code: string;
  commonName: string;
  scientificName: string;
  lastReportedAt: string | null;
  detections: number;
  lastDetectedAt: string | null;
}

function Expected() {
  const t = useT();
  const fmt = useStatsFormat();
  const filter = useStatsFilter();
  const q = useExpectedSpecies(filter);
  const e = q.data;
  const groups = useMemo(
    () =>
      e && e.available
        ? ([
            ['stats.expected.heard', e.expectedAndHeard ?? []],
            ['stats.expected.notHeard', e.expectedNotHeard ?? []],
            ['stats.expected.unexpected', e.heardNotExpected ?? []],
          ] as Array<[Key, ExpectedItem[]]>)
        : [],
    [e],
  );
  const names = useNamer(useMemo(() => groups.flatMap(([, list]) => list.map((x) => x.code)), [groups]));
  return (
    <section aria-labelledby="expected-title">
      <h2 id="expected-title">{t('stats.expected')}</h2>
      <p className="muted small">{t('stats.expected.hint')}</p>
      <ErrorText error={q.error} />
      {q.isLoading ? <Loading /> : null}
      {e && !e.available ? <Unavailable reason={e.reason} detail={e.detail} testId="expected-unavailable" /> : null}
      <div className="grid-2">
        {groups.map(([label, list]) => (
          <div key={label}>
            <h3>
              {t(label)} <span className="badge">{fmt.int(list.length)}</span>
            </h3>
            {list.length === 0 ? <EmptyNote>{t('common.none')}</EmptyNote> : null}
            <ul>
              {list.map((x) => (
                <li key={x.code}>
                  <SpeciesLink code={x.code} name={x.commonName} names={names} />
                  {x.detections > 0 ? <span className="muted small"> · {t('stats.expected.detections', { n: x.detections })}</span> : null}
                  {x.lastReportedAt ? (
                    <span className="muted small"> · {t('stats.expected.reported', { when: x.lastReportedAt })}</span>
                  ) : null}
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
    </section>
  );
}

export function OutlookView() {
  const filter = useStatsFilter();
  const q = useWeatherCorrelation(filter);
  return (
    <>
      <StatsFilters />
      <ZoneNote answer={q.data} />
      <Weather />
      <Expected />
    </>
  );
}
