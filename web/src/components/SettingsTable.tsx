/**
 * The effective settings of one scope (a satellite, a team, or the hub) from GET
 * /settings/effective: the value in force and where it comes from, what the scope would
 * inherit, the lock above it, the scope's own value (save, or inherit again), and — where the
 * scope can lock a setting for the levels below — its "may override" switch.
 */
import { useState, type FormEvent } from 'react';
import { useEffectiveSettings, useSaveSettings, type Scope, type SettingEntry } from '../api/hooks/settings';
import { useT, type T } from '../i18n';
import { ErrorText } from './ui';

const show = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

const SOURCES = ['default', 'hub', 'platform', 'team', 'satellite', 'device', 'account', 'web'] as const;
/** Where a value comes from, in the interface language ("team" → "Team" / "Team"). */
export function sourceName(t: T, source: string): string {
  return (SOURCES as readonly string[]).includes(source) ? t(`settings.source.${source as (typeof SOURCES)[number]}`) : source;
}

function parseInput(raw: string, like: unknown): unknown {
  if (typeof like === 'number') return Number(raw);
  if (typeof like === 'boolean') return raw === 'true';
  if (typeof like === 'string') return raw;
  // A setting with no value yet (a satellite's town) takes JSON, or else the text as typed.
  if (like === null) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return JSON.parse(raw);
}

function SettingRow({ entry, scope, disabled, onSaved }: { entry: SettingEntry; scope: Scope; disabled: boolean; onSaved?: () => void }) {
  const t = useT();
  const current = entry.own ?? entry.value;
  const [draft, setDraft] = useState(() => (typeof current === 'object' ? JSON.stringify(current) : String(current)));
  const [parseError, setParseError] = useState<string | null>(null);
  const save = useSaveSettings(scope, onSaved);
  const locked = entry.lockedBy !== null;
  const inputId = `set-${entry.key}`;

  function submit(e: FormEvent) {
    e.preventDefault();
    try {
      const value = parseInput(draft, entry.value);
      setParseError(null);
      save.mutate({ values: { [entry.key]: value } });
    } catch {
      setParseError(t('settings.notJson'));
    }
  }

  return (
    <tr data-testid={`setting-${entry.key}`}>
      <th scope="row">
        <label htmlFor={inputId}>{entry.key}</label>
      </th>
      <td data-testid="value">
        {show(entry.value)} <span className="muted small">({sourceName(t, entry.source)})</span>
      </td>
      <td className="muted">
        {show(entry.inherited.value)} <span className="small">({sourceName(t, entry.inherited.from)})</span>
      </td>
      <td>
        {locked ? <span className="badge rare">{t('fleet.locked', { by: sourceName(t, entry.lockedBy!) })}</span> : null}
        {entry.mayOverride !== undefined ? (
          <label className="check small">
            <input
              type="checkbox"
              checked={entry.mayOverride}
              disabled={disabled || save.isPending}
              onChange={(e) => save.mutate({ mayOverride: { [entry.key]: e.target.checked } })}
            />
            {t('settings.mayOverride')}
          </label>
        ) : null}
      </td>
      <td>
        <form onSubmit={submit} className="row tight">
          {typeof entry.value === 'boolean' ? (
            <select id={inputId} value={draft} disabled={disabled || locked} onChange={(e) => setDraft(e.target.value)}>
              <option value="true">{t('settings.true')}</option>
              <option value="false">{t('settings.false')}</option>
            </select>
          ) : (
            <input
              id={inputId}
              type={typeof entry.value === 'number' ? 'number' : 'text'}
              step="any"
              value={draft}
              disabled={disabled || locked}
              onChange={(e) => setDraft(e.target.value)}
              aria-describedby={`${inputId}-err`}
            />
          )}
          <button type="submit" disabled={disabled || locked || save.isPending}>
            {t('common.save')}
          </button>
          {entry.own !== null && entry.own !== undefined ? (
            <button
              type="button"
              className="secondary"
              disabled={disabled || save.isPending}
              onClick={() => save.mutate({ values: { [entry.key]: null } })}
            >
              {t('fleet.inherit')}
            </button>
          ) : null}
        </form>
        <ErrorText error={parseError ? new Error(parseError) : save.error} id={`${inputId}-err`} />
      </td>
    </tr>
  );
}

export function SettingsTable({ scope, disabled, onSaved }: { scope: Scope; disabled: boolean; onSaved?: () => void }) {
  const t = useT();
  const eff = useEffectiveSettings(scope);
  return (
    <>
      <ErrorText error={eff.error} />
      <div className="table-wrap">
        <table className="settings">
          <thead>
            <tr>
              <th scope="col">{t('fleet.setting')}</th>
              <th scope="col">{t('fleet.value')}</th>
              <th scope="col">{t('fleet.inherited')}</th>
              <th scope="col">{t('fleet.lock')}</th>
              <th scope="col">{t('common.save')}</th>
            </tr>
          </thead>
          <tbody>
            {eff.data?.settings.map((e) => (
              <SettingRow key={`${e.key}:${JSON.stringify(e.own)}`} entry={e} scope={scope} disabled={disabled} onSaved={onSaved} />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
