/**
 * A species' threshold on the Species page (issue 35): the value in force and how it came about,
 * its recomputations (each vote that settles a detection), and for team admins pin / reset / follow
 * the votes again. The history loads when the details are opened.
 */
import { useState } from 'react';
import { useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { atLeast } from '../roles';
import { ErrorText, Loading } from './ui';
import { useSetSpeciesThreshold, useSpeciesThreshold, type SpeciesThreshold } from '../api/hooks/species-thresholds';

export function SpeciesThresholdCell({ code, name, summary }: { code: string; name: string; summary: SpeciesThreshold | undefined }) {
  const t = useT();
  const fmt = useFormat();
  const { team, role } = useSession();
  const tenantId = team?.id ?? null;
  const [open, setOpen] = useState(false);
  const [pin, setPin] = useState('');
  const detail = useSpeciesThreshold(tenantId, code, open);
  const set = useSetSpeciesThreshold(tenantId, code);
  const d = detail.data;
  const mode = d?.mode ?? summary?.mode ?? 'learned';
  const value = d ? d.threshold : (summary?.threshold ?? null);
  const pinValue = Number(pin) / 100;
  const pinValid = pin.trim() !== '' && Number.isFinite(pinValue) && pinValue >= 0 && pinValue <= 1;

  return (
    <details data-testid="threshold" data-code={code} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>
        <span data-testid="threshold-value">{value === null ? t('threshold.none') : fmt.pct(value)}</span>
        {mode !== 'learned' ? <span className="muted small"> · {t(`threshold.mode.${mode}`)}</span> : null}
      </summary>
      {detail.isLoading ? <Loading /> : null}
      <ErrorText error={detail.error} />
      {d ? (
        <div className="stack">
          <p className="small" data-testid="threshold-rule">
            {t('threshold.rule', { target: fmt.pct(d.target), votes: d.minVotes, each: d.minEach })}
          </p>
          <p className="small" data-testid="threshold-learned">
            {d.learned === null
              ? t('threshold.notLearned', { votes: d.votes, confirmed: d.confirmed, rejected: d.rejected })
              : t('threshold.learned', { value: fmt.pct(d.learned), votes: d.votes, precision: fmt.pct(d.precision) })}
            {d.mode === 'pinned' ? ` ${t('threshold.pinnedAt', { value: fmt.pct(d.pinned) })}` : null}
          </p>
          {d.history.length > 0 ? (
            <div className="table-wrap">
              <table data-testid="threshold-history">
                <caption className="small">{t('threshold.history', { name })}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('threshold.when')}</th>
                    <th scope="col">{t('threshold.value')}</th>
                    <th scope="col">{t('threshold.votes')}</th>
                    <th scope="col">{t('threshold.precision')}</th>
                  </tr>
                </thead>
                <tbody>
                  {d.history.map((h, i) => (
                    <tr key={`${h.computedAt}-${i}`} data-testid="threshold-history-row">
                      <td>{fmt.dateTime(h.computedAt)}</td>
                      <td>{h.threshold === null ? t('threshold.none') : fmt.pct(h.threshold)}</td>
                      <td>
                        {h.votes} ({h.confirmed} / {h.rejected})
                      </td>
                      <td>{fmt.pct(h.precision)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {atLeast(role, 'admin') ? (
            <div className="row" role="group" aria-label={t('threshold.adminActions', { name })}>
              <label>
                {t('threshold.pinLabel')}
                <input
                  type="number"
                  min={0}
                  max={100}
                  step={1}
                  inputMode="numeric"
                  value={pin}
                  onChange={(e) => setPin(e.target.value)}
                  data-testid="threshold-pin-input"
                />
              </label>
              <button
                type="button"
                disabled={!pinValid || set.isPending}
                onClick={() => set.mutate({ mode: 'pinned', threshold: pinValue })}
              >
                {t('threshold.pin')}
              </button>
              <button
                type="button"
                className="secondary"
                disabled={set.isPending || d.mode === 'none'}
                onClick={() => set.mutate({ mode: 'none' })}
              >
                {t('threshold.reset')}
              </button>
              <button
                type="button"
                className="secondary"
                disabled={set.isPending || d.mode === 'learned'}
                onClick={() => set.mutate({ mode: 'learned' })}
              >
                {t('threshold.follow')}
              </button>
            </div>
          ) : null}
          <ErrorText error={set.error} />
        </div>
      ) : null}
    </details>
  );
}
