/**
 * One setting's input, chosen by its registry type: a switch for a boolean, a select for an enum,
 * checkboxes for a list, a number with its range and unit, rows for a recording schedule, and a
 * JSON box (checked before saving) for anything else. `check` says why a draft cannot be saved,
 * in the person's language, before the server is asked.
 */
import type { SettingDefinition } from '../api/hooks/settings';
import type { T } from '../i18n';

type Window = { reference: 'absolute' | 'sunrise' | 'sunset'; start: string | number; end: string | number };

/** What the editor holds while someone types: numbers and JSON stay text until saved. */
export type Draft = unknown;

export function draftOf(def: SettingDefinition | undefined, value: unknown): Draft {
  if (!def) return JSON.stringify(value);
  if (def.type === 'integer' || def.type === 'number') return value === null || value === undefined ? '' : String(value);
  if (def.type === 'releases') return JSON.stringify(value ?? {}, null, 2);
  if (def.type === 'ref' || def.type === 'text' || def.type === 'urlTemplate') return value ?? '';
  if (def.type === 'speciesList') return Array.isArray(value) ? value.join(', ') : '';
  return value;
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

/** The value to send, or the reason it cannot be sent. */
export function check(t: T, def: SettingDefinition | undefined, draft: Draft): { value: unknown } | { error: string } {
  if (!def) {
    try {
      return { value: JSON.parse(String(draft)) };
    } catch {
      return { error: t('settings.notJson') };
    }
  }
  switch (def.type) {
    case 'integer':
    case 'number': {
      const raw = String(draft).trim().replace(',', '.');
      const n = Number(raw);
      if (raw === '' || !Number.isFinite(n)) return { error: t('settings.needNumber') };
      if (def.type === 'integer' && !Number.isInteger(n)) return { error: t('settings.needWhole') };
      if ((def.min !== undefined && n < def.min) || (def.max !== undefined && n > def.max))
        return { error: t('settings.range', { min: def.min ?? '', max: def.max ?? '', unit: def.unit ?? '' }).trim() };
      return { value: n };
    }
    case 'schedule': {
      const rows = (draft as Window[]) ?? [];
      for (const [i, w] of rows.entries()) {
        if (w.reference === 'absolute') {
          if (!HHMM.test(String(w.start)) || !HHMM.test(String(w.end))) return { error: t('settings.scheduleTime', { n: i + 1 }) };
        } else {
          const s = Number(w.start);
          const e = Number(w.end);
          const ok = (v: number) => Number.isInteger(v) && v >= -720 && v <= 720;
          if (!ok(s) || !ok(e)) return { error: t('settings.scheduleMinutes', { n: i + 1 }) };
          if (s >= e) return { error: t('settings.scheduleOrder', { n: i + 1 }) };
        }
      }
      return {
        value: rows.map((w) => (w.reference === 'absolute' ? w : { reference: w.reference, start: Number(w.start), end: Number(w.end) })),
      };
    }
    case 'releases':
      try {
        const v = JSON.parse(String(draft));
        if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: t('settings.needObject') };
        return { value: v };
      } catch {
        return { error: t('settings.notJson') };
      }
    case 'ref':
    case 'text':
      // An empty box follows the level above.
      return { value: String(draft ?? '').trim() === '' ? null : String(draft).trim() };
    case 'urlTemplate':
      return { value: String(draft ?? '').trim() };
    case 'speciesList':
      return {
        value: String(draft ?? '')
          .split(/[\s,;]+/)
          .map((c) => c.trim())
          .filter(Boolean),
      };
    default:
      return { value: draft };
  }
}

export function SettingEditor({
  t,
  def,
  id,
  draft,
  disabled,
  describedBy,
  onChange,
}: {
  t: T;
  def: SettingDefinition | undefined;
  id: string;
  draft: Draft;
  disabled: boolean;
  describedBy: string;
  onChange: (d: Draft) => void;
}) {
  const common = { id, disabled, 'aria-describedby': describedBy };
  if (!def) return <textarea {...common} rows={2} value={String(draft)} onChange={(e) => onChange(e.target.value)} />;
  switch (def.type) {
    case 'boolean':
      return (
        <label className="switch">
          <input {...common} type="checkbox" role="switch" checked={draft === true} onChange={(e) => onChange(e.target.checked)} />
          <span>{draft === true ? t('settings.on') : t('settings.off')}</span>
        </label>
      );
    case 'enum':
      return (
        <select {...common} value={String(draft ?? '')} onChange={(e) => onChange(e.target.value)}>
          {(def.options ?? []).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
    case 'enumList': {
      const chosen = new Set(Array.isArray(draft) ? (draft as string[]) : []);
      return (
        <fieldset className="checklist" id={id} aria-describedby={describedBy} disabled={disabled}>
          {(def.options ?? []).map((o) => (
            <label key={o} className="check small">
              <input
                type="checkbox"
                checked={chosen.has(o)}
                disabled={!chosen.has(o) && def.maxItems !== undefined && chosen.size >= def.maxItems}
                onChange={(e) => {
                  const next = new Set(chosen);
                  if (e.target.checked) next.add(o);
                  else next.delete(o);
                  onChange((def.options ?? []).filter((x) => next.has(x)));
                }}
              />
              {o}
            </label>
          ))}
        </fieldset>
      );
    }
    case 'integer':
    case 'number':
      return (
        <span className="row tight">
          <input
            {...common}
            type="number"
            inputMode="decimal"
            min={def.min}
            max={def.max}
            step={def.type === 'integer' ? 1 : 'any'}
            value={String(draft)}
            onChange={(e) => onChange(e.target.value)}
          />
          {def.unit ? <span className="muted">{def.unit}</span> : null}
        </span>
      );
    case 'schedule':
      return (
        <ScheduleEditor t={t} id={id} rows={(draft as Window[]) ?? []} max={def.maxItems ?? 12} disabled={disabled} onChange={onChange} />
      );
    case 'releases':
      return <textarea {...common} rows={3} spellCheck={false} value={String(draft)} onChange={(e) => onChange(e.target.value)} />;
    case 'speciesList':
      return (
        <textarea
          {...common}
          rows={3}
          spellCheck={false}
          placeholder={t('settings.speciesListHint')}
          value={String(draft)}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    case 'text':
      return (
        <input {...common} type="text" maxLength={def.maxLength} value={String(draft ?? '')} onChange={(e) => onChange(e.target.value)} />
      );
    default:
      return <input {...common} type="text" value={String(draft ?? '')} onChange={(e) => onChange(e.target.value)} />;
  }
}

function ScheduleEditor({
  t,
  id,
  rows,
  max,
  disabled,
  onChange,
}: {
  t: T;
  id: string;
  rows: Window[];
  max: number;
  disabled: boolean;
  onChange: (rows: Window[]) => void;
}) {
  const set = (i: number, w: Window) => onChange(rows.map((r, j) => (j === i ? w : r)));
  return (
    <div id={id} className="schedule" role="group" aria-label={t('settings.schedule')}>
      {rows.map((w, i) => (
        <div key={i} className="row tight" data-testid="schedule-window">
          <select
            aria-label={t('settings.scheduleReference')}
            value={w.reference}
            disabled={disabled}
            onChange={(e) => {
              const reference = e.target.value as Window['reference'];
              set(i, reference === 'absolute' ? { reference, start: '06:00', end: '09:00' } : { reference, start: -30, end: 90 });
            }}
          >
            <option value="absolute">{t('settings.scheduleAbsolute')}</option>
            <option value="sunrise">{t('settings.scheduleSunrise')}</option>
            <option value="sunset">{t('settings.scheduleSunset')}</option>
          </select>
          {(['start', 'end'] as const).map((edge) =>
            w.reference === 'absolute' ? (
              <input
                key={edge}
                type="time"
                aria-label={t(edge === 'start' ? 'settings.scheduleStart' : 'settings.scheduleEnd')}
                value={String(w[edge])}
                disabled={disabled}
                onChange={(e) => set(i, { ...w, [edge]: e.target.value })}
              />
            ) : (
              <input
                key={edge}
                type="number"
                step={1}
                min={-720}
                max={720}
                aria-label={t(edge === 'start' ? 'settings.scheduleStartMin' : 'settings.scheduleEndMin')}
                value={String(w[edge])}
                disabled={disabled}
                onChange={(e) => set(i, { ...w, [edge]: e.target.value })}
              />
            ),
          )}
          <button type="button" className="secondary" disabled={disabled} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            {t('settings.scheduleRemove')}
          </button>
        </div>
      ))}
      {rows.length < max ? (
        <button
          type="button"
          className="secondary"
          disabled={disabled}
          onClick={() => onChange([...rows, { reference: 'absolute', start: '06:00', end: '09:00' }])}
        >
          {t('settings.scheduleAdd')}
        </button>
      ) : null}
    </div>
  );
}
