/**
 * Creating or editing one scheduled export: name, format, a cron expression (with presets),
 * the time zone it is read in (the team's by default), the channel the file goes to (only
 * email and webhook channels carry files) and the filters. The hub checks the expression and
 * the channel; its message is shown as it is.
 */
import { useMemo, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import {
  useScheduledMutations,
  type ScheduledExport,
  type ScheduledFilters,
  type ScheduledFormat,
  type ExportFilters,
} from '../../api/hooks/exports';
import type { AlertChannel } from '../../api/hooks/alert-rules';
import type { Satellite } from '../../api/hooks/satellites';
import { useT } from '../../i18n';
import { ErrorText, Field } from '../ui';
import { channelTypeName } from '../alerts/labels';
import { FilterFields, readFilters } from './FilterFields';
import { LIMITS } from '../../limits';

export const SCHEDULED_FORMATS: ScheduledFormat[] = ['csv', 'json', 'checklist', 'observation'];
export const CRON_PRESETS = [
  { key: 'daily', cron: '0 6 * * *' },
  { key: 'weekly', cron: '0 6 * * 1' },
  { key: 'monthly', cron: '0 6 1 * *' },
] as const;

/** Channels that can carry a file. */
export const fileChannels = (channels: AlertChannel[]) => channels.filter((c) => c.type === 'email' || c.type === 'webhook');

function zones(): string[] {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return [];
  }
}

export function ScheduledForm({
  tenantId,
  existing,
  channels,
  satellites,
  teamTimeZone,
  onDone,
}: {
  tenantId: string;
  existing: ScheduledExport | null;
  channels: AlertChannel[];
  satellites: Pick<Satellite, 'id' | 'name'>[];
  teamTimeZone: string;
  onDone: () => void;
}) {
  const t = useT();
  const { save } = useScheduledMutations(tenantId);
  const usable = fileChannels(channels);
  const [name, setName] = useState(existing?.name ?? '');
  const [format, setFormat] = useState<ScheduledFormat>(existing?.format ?? 'csv');
  const [schedule, setSchedule] = useState(existing?.schedule ?? CRON_PRESETS[0].cron);
  const [timeZone, setTimeZone] = useState(existing?.timeZone ?? teamTimeZone);
  const [channelId, setChannelId] = useState(existing?.channelId ?? usable[0]?.id ?? '');
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const zoneList = useMemo(zones, []);
  const filters = (existing?.filters ?? {}) as ExportFilters;

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const { satelliteId, species, minConfidence, verificationStatus, category } = readFilters(new FormData(e.currentTarget), false);
    const f: ScheduledFilters = { satelliteId, species, minConfidence, verificationStatus, category };
    for (const k of Object.keys(f) as (keyof ScheduledFilters)[]) if (f[k] === undefined) delete f[k];
    save.mutate(
      {
        id: existing?.id,
        body: {
          name: name.trim(),
          format,
          schedule: schedule.trim(),
          timeZone: timeZone.trim() || undefined,
          channelId,
          enabled,
          filters: f,
        },
      },
      { onSuccess: onDone },
    );
  }

  return (
    <form className="card" onSubmit={submit} aria-label={existing ? t('scheduled.edit') : t('scheduled.new')}>
      <div className="row">
        <Field label={t('scheduled.name')}>
          {(id) => (
            <input
              id={id}
              required
              maxLength={LIMITS.scheduledExportName.maxLength}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <Field label={t('scheduled.format')}>
          {(id) => (
            <select id={id} value={format} onChange={(e) => setFormat(e.target.value as ScheduledFormat)}>
              {SCHEDULED_FORMATS.map((f) => (
                <option key={f} value={f}>
                  {t(`scheduled.format.${f}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <div className="row">
        <Field label={t('scheduled.schedule')} hint={t('scheduled.schedule.hint')}>
          {(id) => (
            <input id={id} required className="mono" spellCheck={false} value={schedule} onChange={(e) => setSchedule(e.target.value)} />
          )}
        </Field>
        <div className="row" role="group" aria-label={t('scheduled.presets')}>
          {CRON_PRESETS.map((p) => (
            <button
              key={p.key}
              type="button"
              className="secondary"
              aria-pressed={schedule.trim() === p.cron}
              onClick={() => setSchedule(p.cron)}
            >
              {t(`scheduled.preset.${p.key}`)}
            </button>
          ))}
        </div>
      </div>
      <div className="row">
        <Field label={t('scheduled.timeZone')} hint={t('scheduled.timeZone.hint', { zone: teamTimeZone })}>
          {(id) => (
            <>
              <input id={id} list={`${id}-zones`} value={timeZone} onChange={(e) => setTimeZone(e.target.value)} />
              <datalist id={`${id}-zones`}>
                {zoneList.map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label={t('scheduled.channel')}>
          {(id) => (
            <select id={id} required value={channelId} onChange={(e) => setChannelId(e.target.value)}>
              {usable.length === 0 ? <option value="">{t('scheduled.channel.none')}</option> : null}
              {usable.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} ({channelTypeName(t, c.type)})
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <p className="muted small">
        {t('scheduled.channel.hint')} <Link to="/team/alerts">{t('scheduled.channel.setUp')}</Link>
      </p>
      <fieldset>
        <legend>{t('det.filters')}</legend>
        <div className="grid">
          <FilterFields values={filters} satellites={satellites} />
        </div>
      </fieldset>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        {t('scheduled.enabled')}
      </label>
      <ErrorText error={save.error} />
      <div className="row">
        <button type="submit" disabled={save.isPending || !channelId}>
          {t('common.save')}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}
