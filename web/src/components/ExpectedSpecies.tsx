/**
 * The species the hub's range model expects at a satellite this week (issue 35, GET
 * /satellites/:id/expected-species): at or above the team's range threshold, most likely first,
 * with the team's always-in-range species added and its always-out-of-range ones taken out.
 */
import { useExpectedAtSatellite } from '../api/hooks/range';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { ErrorText, Loading } from './ui';

const SHOWN = 50;

export function ExpectedSpecies({ satelliteId }: { satelliteId: string }) {
  const t = useT();
  const fmt = useFormat();
  const q = useExpectedAtSatellite(satelliteId);
  const v = q.data;
  return (
    <section className="card" aria-labelledby="expected-title" data-testid="expected-species">
      <h2 id="expected-title">{t('range.title')}</h2>
      {q.isLoading ? <Loading /> : null}
      <ErrorText error={q.error} />
      {v ? (
        <>
          <p className="muted small">
            {t('range.week', { week: v.week, threshold: fmt.pct(v.threshold) })}
            {v.source === 'range_model' && v.model ? ` · ${t('range.model', { name: v.model.name })}` : null}
            {v.source === 'ebird' ? ` · ${t('range.ebird')}` : null}
          </p>
          {!v.available ? (
            <p data-testid="expected-unavailable">
              {t(
                v.reason === 'no_position'
                  ? 'range.noPosition'
                  : v.reason === 'ebird_unavailable'
                    ? 'range.ebirdUnavailable'
                    : 'range.noModel',
              )}
            </p>
          ) : null}
          {v.species.length > 0 ? (
            <ol className="small" data-testid="expected-list">
              {v.species.slice(0, SHOWN).map((s) => (
                <li key={s.code} data-code={s.code}>
                  <strong>{s.commonName}</strong> <em className="muted">{s.scientificName}</em>{' '}
                  <span className="muted">
                    {s.score !== null ? fmt.pct(s.score) : s.reason === 'include_list' ? t('range.included') : null}
                  </span>
                </li>
              ))}
            </ol>
          ) : v.available ? (
            <p className="muted">{t('range.none')}</p>
          ) : null}
          {v.species.length > SHOWN ? <p className="muted small">{t('range.more', { n: v.species.length - SHOWN })}</p> : null}
          {v.excluded.length > 0 ? <p className="muted small">{t('range.excluded', { codes: v.excluded.join(', ') })}</p> : null}
        </>
      ) : null}
    </section>
  );
}
