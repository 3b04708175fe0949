/**
 * Monthly presence: one row per species, one column per local month of the window, the count
 * in each cell and its shade against the species' busiest month — arrivals and departures read
 * as the row's shape. A real table, so screen readers walk it like one.
 */
import { useMemo } from 'react';
import { useMigration } from '../../api/hooks/stats';
import { useT } from '../../i18n';
import { ErrorText, Loading } from '../../components/ui';
import { SpeciesLink, StatsFilters, ZoneNote, useNamer, useStatsFilter, useStatsFormat } from './common';

export function MigrationView() {
  const t = useT();
  const fmt = useStatsFormat();
  // A migration grid needs months: without a chosen window it looks back a year.
  const filter = useStatsFilter(365);
  const q = useMigration(filter);
  const m = q.data;
  const names = useNamer(useMemo(() => (m?.species ?? []).map((s) => s.code), [m]));
  return (
    <>
      <StatsFilters defaultDays={365} />
      <ZoneNote answer={m} />
      <ErrorText error={q.error} />
      {q.isLoading ? <Loading /> : null}
      <h2>{t('stats.migration')}</h2>
      {m && m.species.length === 0 ? <p>{t('stats.noDetections')}</p> : null}
      {m && m.species.length > 0 ? (
        <div className="table-wrap">
          <table className="migration" data-testid="migration">
            <thead>
              <tr>
                <th scope="col">{t('stats.species')}</th>
                {m.months.map((mo) => (
                  <th key={mo} scope="col" className="small">
                    {fmt.month(mo)}
                  </th>
                ))}
                <th scope="col">{t('stats.total')}</th>
              </tr>
            </thead>
            <tbody>
              {m.species.map((s) => {
                const top = Math.max(1, ...s.counts);
                return (
                  <tr key={s.code} data-testid="migration-row" data-code={s.code}>
                    <th scope="row">
                      <SpeciesLink code={s.code} name={s.commonName} names={names} />
                    </th>
                    {s.counts.map((c, i) => (
                      <td
                        key={m.months[i]}
                        className={`mig-cell${c / top > 0.55 ? ' strong' : ''}`}
                        data-testid="migration-cell"
                        data-month={m.months[i]}
                        data-count={c}
                        style={{ '--level': c ? (0.15 + (0.85 * c) / top).toFixed(3) : 0 } as React.CSSProperties}
                      >
                        {c ? fmt.int(c) : ''}
                      </td>
                    ))}
                    <td>{fmt.int(s.total)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
