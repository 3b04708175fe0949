/**
 * Creating or editing one rule: its type's conditions, the channels it is sent to, the cooldown
 * and quiet hours. A system rule keeps its `system` condition; only the general fields show.
 */
import { useState, type FormEvent } from 'react';
import { useRuleMutations, type AlertChannel, type AlertRule, type RuleBody, type RuleConditions } from '../../api/hooks/alert-rules';
import type { Satellite } from '../../api/hooks/satellites';
import { useT } from '../../i18n';
import { ErrorText, Field } from '../ui';
import { LIMITS } from '../../limits';

type RuleType = RuleBody['type'];
type Cond = RuleConditions;

const list = (s: string) =>
  s
    .split(/[,\n]/)
    .map((x) => x.trim())
    .filter(Boolean);
const num = (s: string) => (s.trim() === '' ? undefined : Number(s));

/** The conditions a form of `type` sends: only the members that type takes, empty ones left out. */
function conditionsOf(type: RuleType, c: Cond, text: { species: string; categories: string }): Cond {
  const species = list(text.species);
  const sats = c.satelliteIds?.length ? c.satelliteIds : undefined;
  if (c.system) return c;
  if (type === 'detection') {
    return {
      species: species.length ? species : undefined,
      minConfidence: c.minConfidence,
      confidenceKind: c.minConfidence !== undefined ? c.confidenceKind : undefined,
      satelliteIds: sats,
      categories: list(text.categories).length ? list(text.categories) : undefined,
      rareOnly: c.rareOnly || undefined,
      firstOfDay: c.firstOfDay || undefined,
      firstOfSeason: c.firstOfSeason || undefined,
      verifiedOnly: c.verifiedOnly || undefined,
    };
  }
  if (type === 'absence') {
    return {
      species: species.length ? species : undefined,
      satelliteIds: sats,
      minutes: c.minutes,
      window: c.window?.start ? c.window : undefined,
    };
  }
  return {
    metric: c.metric ?? 'detections',
    direction: c.direction ?? 'fall',
    percent: c.percent,
    windowMinutes: c.windowMinutes,
    satelliteIds: sats,
    minBaseline: c.minBaseline,
  };
}

export function RuleForm(props: {
  tenantId: string;
  rule: AlertRule | null;
  channels: AlertChannel[];
  satellites: Satellite[];
  onDone: () => void;
}) {
  const t = useT();
  const { rule } = props;
  const { save } = useRuleMutations(props.tenantId);
  const [name, setName] = useState(rule?.name ?? '');
  const [type, setType] = useState<RuleType>(rule?.type ?? 'detection');
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  const [c, setC] = useState<Cond>((rule?.conditions as Cond | undefined) ?? {});
  const [species, setSpecies] = useState((c.species ?? []).join(', '));
  const [categories, setCategories] = useState((c.categories ?? []).join(', '));
  const [channelIds, setChannelIds] = useState<string[]>(rule?.channelIds ?? []);
  const [cooldown, setCooldown] = useState(String(rule?.cooldownMinutes ?? 0));
  const [scope, setScope] = useState(rule?.cooldownScope ?? 'species');
  const [quiet, setQuiet] = useState(rule?.quietHours ?? null);
  const patch = (p: Partial<Cond>) => setC((x) => ({ ...x, ...p }));
  const toggle = (ids: string[], id: string, on: boolean) => (on ? [...ids, id] : ids.filter((x) => x !== id));

  function submit(e: FormEvent) {
    e.preventDefault();
    const body: Omit<RuleBody, 'tenantId'> = {
      name,
      type,
      enabled,
      conditions: conditionsOf(type, c, { species, categories }),
      channelIds,
      cooldownMinutes: Number(cooldown) || 0,
      cooldownScope: scope,
      quietHours: quiet?.start && quiet.end ? quiet : null,
    };
    save.mutate({ id: rule?.id, body }, { onSuccess: props.onDone });
  }

  const check = (key: 'rareOnly' | 'firstOfDay' | 'firstOfSeason' | 'verifiedOnly') => (
    <label className="inline">
      <input type="checkbox" checked={!!c[key]} onChange={(e) => patch({ [key]: e.target.checked })} />
      {t(`rules.${key}`)}
    </label>
  );

  return (
    <form className="card" onSubmit={submit} aria-label={rule ? t('rules.edit') : t('rules.new')}>
      <div className="row">
        <Field label={t('rules.name')}>
          {(id) => (
            <input id={id} required maxLength={LIMITS.alertRuleName.maxLength} value={name} onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        {c.system ? null : (
          <Field label={t('rules.type')}>
            {(id) => (
              <select id={id} value={type} disabled={!!rule} onChange={(e) => setType(e.target.value as RuleType)}>
                <option value="detection">{t('rules.type.detection')}</option>
                <option value="absence">{t('rules.type.absence')}</option>
                <option value="trend">{t('rules.type.trend')}</option>
              </select>
            )}
          </Field>
        )}
        <label className="inline">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          {t('rules.enabled')}
        </label>
      </div>

      {c.system ? <p className="muted small">{t(`alerts.system.${c.system}.hint`)}</p> : null}
      {!c.system && type !== 'trend' ? (
        <Field label={t('rules.species')} hint={t('rules.species.hint')}>
          {(id) => <input id={id} value={species} onChange={(e) => setSpecies(e.target.value)} />}
        </Field>
      ) : null}
      {!c.system && type === 'detection' ? (
        <>
          <div className="row">
            <Field label={t('rules.minConfidence')}>
              {(id) => (
                // Entered in percent, as every confidence the dashboard shows; the API keeps 0–1.
                <input
                  id={id}
                  type="number"
                  min={LIMITS.confidencePercent.min}
                  max={LIMITS.confidencePercent.max}
                  step={1}
                  value={c.minConfidence === undefined ? '' : Math.round(c.minConfidence * 1000) / 10}
                  onChange={(e) => {
                    const v = num(e.target.value);
                    patch({ minConfidence: v === undefined ? undefined : v / 100 });
                  }}
                />
              )}
            </Field>
            <Field label={t('rules.confidenceKind')}>
              {(id) => (
                <select id={id} value={c.confidenceKind ?? 'raw'} onChange={(e) => patch({ confidenceKind: e.target.value as 'raw' })}>
                  <option value="raw">{t('rules.confidenceKind.raw')}</option>
                  <option value="calibrated">{t('rules.confidenceKind.calibrated')}</option>
                </select>
              )}
            </Field>
            <Field label={t('rules.categories')}>
              {(id) => <input id={id} value={categories} onChange={(e) => setCategories(e.target.value)} />}
            </Field>
          </div>
          <div className="row">
            {check('rareOnly')}
            {check('firstOfDay')}
            {check('firstOfSeason')}
            {check('verifiedOnly')}
          </div>
        </>
      ) : null}
      {!c.system && type === 'absence' ? (
        <div className="row">
          <Field label={t('rules.minutes')}>
            {(id) => (
              <input
                id={id}
                type="number"
                required
                min={5}
                max={43200}
                value={c.minutes ?? ''}
                onChange={(e) => patch({ minutes: num(e.target.value) })}
              />
            )}
          </Field>
          <Field label={t('rules.window.start')}>
            {(id) => (
              <input
                id={id}
                type="time"
                value={c.window?.start ?? ''}
                onChange={(e) => patch({ window: { start: e.target.value, end: c.window?.end ?? e.target.value } })}
              />
            )}
          </Field>
          <Field label={t('rules.window.end')}>
            {(id) => (
              <input
                id={id}
                type="time"
                value={c.window?.end ?? ''}
                onChange={(e) => patch({ window: { start: c.window?.start ?? e.target.value, end: e.target.value } })}
              />
            )}
          </Field>
        </div>
      ) : null}
      {!c.system && type === 'trend' ? (
        <div className="row">
          <Field label={t('rules.metric')}>
            {(id) => (
              <select id={id} value={c.metric ?? 'detections'} onChange={(e) => patch({ metric: e.target.value as 'detections' })}>
                <option value="detections">{t('rules.metric.detections')}</option>
                <option value="diversity">{t('rules.metric.diversity')}</option>
              </select>
            )}
          </Field>
          <Field label={t('rules.direction')}>
            {(id) => (
              <select id={id} value={c.direction ?? 'fall'} onChange={(e) => patch({ direction: e.target.value as 'fall' })}>
                <option value="fall">{t('rules.direction.fall')}</option>
                <option value="rise">{t('rules.direction.rise')}</option>
              </select>
            )}
          </Field>
          {(['percent', 'windowMinutes', 'minBaseline'] as const).map((k) => (
            <Field key={k} label={t(`rules.${k}`)}>
              {(id) => (
                <input
                  id={id}
                  type="number"
                  required={k !== 'minBaseline'}
                  min={k === 'windowMinutes' ? 15 : 1}
                  value={c[k] ?? ''}
                  onChange={(e) => patch({ [k]: num(e.target.value) })}
                />
              )}
            </Field>
          ))}
        </div>
      ) : null}
      {!c.system && props.satellites.length > 0 ? (
        <fieldset className="row">
          <legend className="small">{t('rules.satellites')}</legend>
          {props.satellites.map((s) => (
            <label key={s.id} className="inline small">
              <input
                type="checkbox"
                checked={(c.satelliteIds ?? []).includes(s.id)}
                onChange={(e) => patch({ satelliteIds: toggle(c.satelliteIds ?? [], s.id, e.target.checked) })}
              />
              {s.name}
            </label>
          ))}
        </fieldset>
      ) : null}

      <fieldset className="row">
        <legend className="small">{t('rules.sendTo')}</legend>
        {props.channels.length === 0 ? <span className="muted small">{t('rules.noChannels')}</span> : null}
        {props.channels.map((ch) => (
          <label key={ch.id} className="inline small">
            <input
              type="checkbox"
              checked={channelIds.includes(ch.id)}
              onChange={(e) => setChannelIds((ids) => toggle(ids, ch.id, e.target.checked))}
            />
            {ch.name}
          </label>
        ))}
      </fieldset>
      <div className="row">
        <Field label={t('rules.cooldown')}>
          {(id) => (
            <input
              id={id}
              type="number"
              min={LIMITS.cooldownMinutes.min}
              max={LIMITS.cooldownMinutes.max}
              value={cooldown}
              onChange={(e) => setCooldown(e.target.value)}
            />
          )}
        </Field>
        <Field label={t('rules.cooldownScope')}>
          {(id) => (
            <select id={id} value={scope} onChange={(e) => setScope(e.target.value as 'species')}>
              <option value="species">{t('rules.cooldownScope.species')}</option>
              <option value="satellite">{t('rules.cooldownScope.satellite')}</option>
            </select>
          )}
        </Field>
        <label className="inline">
          <input type="checkbox" checked={!!quiet} onChange={(e) => setQuiet(e.target.checked ? { start: '22:00', end: '06:00' } : null)} />
          {t('rules.quietHours')}
        </label>
        {quiet ? (
          <>
            <Field label={t('rules.quietHours.start')}>
              {(id) => (
                <input id={id} type="time" required value={quiet.start} onChange={(e) => setQuiet({ ...quiet, start: e.target.value })} />
              )}
            </Field>
            <Field label={t('rules.quietHours.end')}>
              {(id) => (
                <input id={id} type="time" required value={quiet.end} onChange={(e) => setQuiet({ ...quiet, end: e.target.value })} />
              )}
            </Field>
          </>
        ) : null}
      </div>
      <ErrorText error={save.error} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>
          {t('common.save')}
        </button>
        <button type="button" className="secondary" onClick={props.onDone}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}
