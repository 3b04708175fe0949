/**
 * Diversity per satellite (Shannon H′, Gini–Simpson, Pielou evenness) and a side-by-side
 * comparison of chosen satellites: species both heard, species only one heard, and the
 * Jaccard index of the two species sets.
 */
import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { useBiodiversity, useCompare } from '../../api/hooks/stats';
import { useSatellites } from '../../api/hooks/satellites';
import { useT } from '../../i18n';
import { useSession } from '../../session';
import { ErrorText, Loading } from '../../components/ui';
import { BarChart } from '../../components/charts/Chart';
import { StatsFilters, ZoneNote, useStatsFilter, useStatsFormat } from './common';

export function DiversityView() {
  const t = useT();
  const fmt = useStatsFormat();
  const filter = useStatsFilter();
  const bio = useBiodiversity({ ...filter, satelliteId: undefined });
  const rows = bio.data?.satellites;
  const labels = useMemo(() => (rows ?? []).map((r) => r.name), [rows]);
  const shannon = useMemo(() => (rows ?? []).map((r) => r.shannon ?? 0), [rows]);
  return (
    <>
      <StatsFilters satellite={false} />
      <ZoneNote answer={bio.data} />
      <ErrorText error={bio.error} />
      {bio.isLoading ? <Loading /> : null}
      <h2>{t('stats.biodiversity')}</h2>
      <p className="muted small">{t('stats.biodiversity.hint')}</p>
      {rows && rows.length === 0 ? <p>{t('stats.noDetections')}</p> : null}
      {rows && rows.length > 0 ? (
        <>
          <div className="table-wrap">
            <table data-testid="biodiversity">
              <thead>
                <tr>
                  <th scope="col">{t('stats.satellite')}</th>
                  <th scope="col">{t('stats.speciesCount')}</th>
                  <th scope="col">{t('stats.detections')}</th>
                  <th scope="col">{t('stats.shannon')}</th>
                  <th scope="col">{t('stats.simpson')}</th>
                  <th scope="col">{t('stats.evenness')}</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.satelliteId} data-testid="biodiversity-row">
                    <th scope="row">{r.name}</th>
                    <td>{fmt.int(r.speciesCount)}</td>
                    <td>{fmt.int(r.detectionCount)}</td>
                    <td data-testid="shannon">{fmt.dec(r.shannon)}</td>
                    <td data-testid="simpson">{fmt.dec(r.simpson)}</td>
                    <td data-testid="evenness">{fmt.dec(r.evenness)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {rows.length > 1 ? (
            <BarChart
              title={t('stats.shannonBySatellite')}
              labels={labels}
              values={shannon}
              valueLabel={t('stats.shannon')}
              formatY={fmt.dec}
            />
          ) : null}
        </>
      ) : null}
      <Comparison />
    </>
  );
}

function Comparison() {
  const t = useT();
  const fmt = useStatsFormat();
  const { team } = useSession();
  const filter = useStatsFilter();
  const sats = useSatellites(team?.id ?? null);
  const [params, setParams] = useSearchParams();
  const chosen = useMemo(() => (params.get('compare') ?? '').split(',').filter(Boolean), [params]);
  const cmp = useCompare(filter, chosen);
  const nameOf = useMemo(() => {
    const m = new Map<string, string>();
    for (const s of sats.data?.satellites ?? []) m.set(s.id, s.name);
    for (const s of cmp.data?.satellites ?? []) m.set(s.satelliteId, s.name);
    return (id: string) => m.get(id) ?? id;
  }, [sats.data, cmp.data]);

  // From the URL as it is when the change lands: two quick clicks must not undo each other.
  function toggle(id: string, on: boolean) {
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev);
        const list = (prev.get('compare') ?? '').split(',').filter((x) => x && x !== id);
        if (on) list.push(id);
        if (list.length > 0) next.set('compare', list.join(','));
        else next.delete('compare');
        return next;
      },
      { replace: true },
    );
  }

  return (
    <>
      <h2 id="compare-title">{t('stats.compare')}</h2>
      <fieldset aria-labelledby="compare-title">
        <legend className="muted small">{t('stats.compare.choose')}</legend>
        <div className="row">
          {(sats.data?.satellites ?? []).map((s) => (
            <label key={s.id} className="check">
              <input type="checkbox" checked={chosen.includes(s.id)} onChange={(e) => toggle(s.id, e.target.checked)} />
              {s.name}
            </label>
          ))}
        </div>
      </fieldset>
      {chosen.length < 2 ? <p className="muted">{t('stats.compare.needTwo')}</p> : null}
      <ErrorText error={cmp.error} />
      {chosen.length >= 2 && cmp.isLoading ? <Loading /> : null}
      {chosen.length >= 2 && cmp.data ? (
        <div className="table-wrap">
          <table data-testid="compare">
            <thead>
              <tr>
                <th scope="col">{t('stats.compare.a')}</th>
                <th scope="col">{t('stats.compare.b')}</th>
                <th scope="col">{t('stats.compare.shared')}</th>
                <th scope="col">{t('stats.compare.onlyA')}</th>
                <th scope="col">{t('stats.compare.onlyB')}</th>
                <th scope="col">{t('stats.compare.jaccard')}</th>
              </tr>
            </thead>
            <tbody>
              {cmp.data.pairs.map((p) => (
                <tr key={`${p.a}-${p.b}`} data-testid="compare-row">
                  <th scope="row">{nameOf(p.a)}</th>
                  <th scope="row">{nameOf(p.b)}</th>
                  <td data-testid="shared">{fmt.int(p.shared)}</td>
                  <td>{fmt.int(p.onlyA)}</td>
                  <td>{fmt.int(p.onlyB)}</td>
                  <td data-testid="jaccard">{fmt.dec(p.jaccard)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
