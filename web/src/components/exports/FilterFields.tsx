/**
 * The filters an export takes, as uncontrolled fields of the surrounding form (read back with
 * `readFilters`): the same fields and labels as the Detections page's filters, plus the
 * category. The date window (From, Until and the quick windows) is left out where it does not
 * apply (a scheduled export covers the time since its last run).
 */
import type { ExportFilters, VerificationStatus } from '../../api/hooks/exports';
import type { Satellite } from '../../api/hooks/satellites';
import { useT, type Key } from '../../i18n';
import { PRESETS, type Preset } from '../../dates';
import { Field } from '../ui';
import { LIMITS } from '../../limits';
import { DateInput } from '../DateInput';

/** The hub's detection categories (settings registry CATEGORIES). */
export const CATEGORIES = ['bird', 'amphibian', 'insect', 'anthropogenic', 'human_voice', 'other_animal'] as const;
const STATUSES: VerificationStatus[] = ['unverified', 'pending_review', 'confirmed', 'rejected'];

const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
export const toLocal = (iso: string | undefined) => {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** The filters filled in on `form` (empty fields left out). */
export function readFilters(form: FormData, withWindow: boolean): ExportFilters {
  const s = (k: string) => String(form.get(k) ?? '').trim();
  const out: ExportFilters = {};
  if (s('satelliteId')) out.satelliteId = s('satelliteId');
  if (s('species')) out.species = s('species');
  // People enter a percentage (as on the Detections page); the API takes 0–1.
  const pct = Number(s('minConfidence').replace(',', '.'));
  if (s('minConfidence') && Number.isFinite(pct)) out.minConfidence = Math.min(100, Math.max(0, pct)) / 100;
  if (s('verificationStatus')) out.verificationStatus = s('verificationStatus') as VerificationStatus;
  if (s('category')) out.category = s('category');
  if (withWindow && s('start')) out.start = toIso(s('start'));
  if (withWindow && s('end')) out.end = toIso(s('end'));
  return out;
}

export function FilterFields({
  values,
  satellites,
  onPreset,
}: {
  values: ExportFilters;
  satellites: Pick<Satellite, 'id' | 'name'>[];
  /** With it, the date window and its quick windows are shown. */
  onPreset?: (p: Preset) => void;
}) {
  const t = useT();
  return (
    <>
      <Field label={t('det.satellite')}>
        {(id) => (
          <select id={id} name="satelliteId" defaultValue={values.satelliteId ?? ''}>
            <option value="">{t('det.allSatellites')}</option>
            {satellites.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('det.species')}>{(id) => <input id={id} name="species" defaultValue={values.species} />}</Field>
      <Field label={t('det.minConfidence')}>
        {(id) => (
          <input
            id={id}
            name="minConfidence"
            type="number"
            min={LIMITS.confidencePercent.min}
            max={LIMITS.confidencePercent.max}
            step={1}
            defaultValue={values.minConfidence !== undefined ? Math.round(Number(values.minConfidence) * 1000) / 10 : undefined}
          />
        )}
      </Field>
      <Field label={t('det.status')}>
        {(id) => (
          <select id={id} name="verificationStatus" defaultValue={values.verificationStatus ?? ''}>
            <option value="">{t('det.anyStatus')}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(`det.status.${s}`)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('export.category')}>
        {(id) => (
          <select id={id} name="category" defaultValue={values.category ?? ''}>
            <option value="">{t('export.category.any')}</option>
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {categoryName(t, c)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {onPreset ? (
        <>
          <Field label={t('det.start')}>
            {(id) => <DateInput id={id} name="start" type="datetime-local" defaultValue={toLocal(values.start)} />}
          </Field>
          <Field label={t('det.end')}>
            {(id) => <DateInput id={id} name="end" type="datetime-local" defaultValue={toLocal(values.end)} />}
          </Field>
          <div className="row" role="group" aria-label={t('det.window')}>
            {PRESETS.map((p) => (
              <button key={p} type="button" className="secondary" onClick={() => onPreset(p)}>
                {t(`det.preset.${p}`)}
              </button>
            ))}
          </div>
        </>
      ) : null}
    </>
  );
}

export function categoryName(t: (k: Key) => string, c: string): string {
  return (CATEGORIES as readonly string[]).includes(c) ? t(`export.category.${c as (typeof CATEGORIES)[number]}`) : c;
}
