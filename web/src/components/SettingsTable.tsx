/**
 * The effective settings of one scope (a satellite, a team, or the hub) from GET
 * /settings/effective: the value in force and where it comes from, what the scope would
 * inherit, the lock above it, the scope's own value (save, or inherit again), and — where the
 * scope can lock a setting for the levels below — its "may override" switch.
 */
import { useState, type FormEvent } from 'react';
import {
  useEffectiveSettings,
  useSaveSettings,
  useSettingDefinitions,
  type Scope,
  type SettingDefinition,
  type SettingEntry,
} from '../api/hooks/settings';
import { useLang, useT, type T } from '../i18n';
import { SETTING_HELP_DE, SETTING_LABELS } from '../locales/settings';
import { check, draftOf, SettingEditor, type Draft } from './SettingEditor';
import { ErrorText } from './ui';

const show = (v: unknown, unit?: string) =>
  v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : unit ? `${String(v)} ${unit}` : String(v);

const SOURCES = ['default', 'hub', 'platform', 'team', 'satellite', 'device', 'account', 'web'] as const;
/** Where a value comes from, in the interface language ("team" → "Team" / "Team"). */
export function sourceName(t: T, source: string): string {
  return (SOURCES as readonly string[]).includes(source) ? t(`settings.source.${source as (typeof SOURCES)[number]}`) : source;
}

/** A setting's name for people in the interface language, and its description (the registry's in English). */
export function useSettingText(): (key: string, def?: SettingDefinition) => { label: string; help: string } {
  const lang = useLang();
  return (key, def) => ({
    label: SETTING_LABELS[lang][key] ?? SETTING_LABELS.en[key] ?? key,
    help: (lang === 'de' ? SETTING_HELP_DE[key] : undefined) ?? def?.description ?? '',
  });
}

function SettingRow({
  entry,
  def,
  scope,
  disabled,
  onSaved,
}: {
  entry: SettingEntry;
  def: SettingDefinition | undefined;
  scope: Scope;
  disabled: boolean;
  onSaved?: () => void;
}) {
  const t = useT();
  const text = useSettingText()(entry.key, def);
  const current = entry.own ?? entry.value;
  const [draft, setDraft] = useState<Draft>(() => draftOf(def, current));
  const [checkError, setCheckError] = useState<string | null>(null);
  const save = useSaveSettings(scope, onSaved);
  const locked = entry.lockedBy !== null;
  const inputId = `set-${entry.key}`;
  const range =
    def && (def.type === 'integer' || def.type === 'number') && def.min !== undefined
      ? t('settings.rangeHint', { min: def.min, max: def.max ?? '', unit: def.unit ?? '' }).trim()
      : null;

  function submit(e: FormEvent) {
    e.preventDefault();
    const checked = check(t, def, draft);
    if ('error' in checked) {
      setCheckError(checked.error);
      return;
    }
    setCheckError(null);
    save.mutate({ values: { [entry.key]: checked.value } });
  }

  return (
    <tr data-testid={`setting-${entry.key}`}>
      <th scope="row" className="setting-name">
        <label htmlFor={inputId}>{text.label}</label> <code className="muted small">{entry.key}</code>
        {text.help ? <div className="muted small">{text.help}</div> : null}
        {range ? <div className="muted small">{range}</div> : null}
      </th>
      <td data-testid="value">
        {show(entry.value, def?.unit)} <span className="muted small">({sourceName(t, entry.source)})</span>
      </td>
      <td className="muted">
        {show(entry.inherited.value, def?.unit)} <span className="small">({sourceName(t, entry.inherited.from)})</span>
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
        <form onSubmit={submit} className="row tight" noValidate>
          <SettingEditor
            t={t}
            def={def}
            id={inputId}
            draft={draft}
            disabled={disabled || locked}
            describedBy={`${inputId}-err`}
            onChange={(d) => {
              setDraft(d);
              setCheckError(null);
            }}
          />
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
        <ErrorText error={checkError ? new Error(checkError) : save.error} id={`${inputId}-err`} />
      </td>
    </tr>
  );
}

export function SettingsTable({ scope, disabled, onSaved }: { scope: Scope; disabled: boolean; onSaved?: () => void }) {
  const t = useT();
  const eff = useEffectiveSettings(scope);
  const defs = useSettingDefinitions();
  const byKey = new Map((defs.data?.settings ?? []).map((d) => [d.key, d]));
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
            {defs.data
              ? eff.data?.settings.map((e) => (
                  <SettingRow
                    key={`${e.key}:${JSON.stringify(e.own)}`}
                    entry={e}
                    def={byKey.get(e.key)}
                    scope={scope}
                    disabled={disabled}
                    onSaved={onSaved}
                  />
                ))
              : null}
          </tbody>
        </table>
      </div>
    </>
  );
}
