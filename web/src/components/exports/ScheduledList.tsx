/**
 * The team's scheduled exports: what each sends, when and where, how its last run went, and
 * switching it on or off, editing and deleting it.
 */
import { useState } from 'react';
import { useScheduledMutations, type ExportFilters, type ScheduledExport } from '../../api/hooks/exports';
import type { AlertChannel } from '../../api/hooks/alert-rules';
import type { Satellite } from '../../api/hooks/satellites';
import { useT, type T } from '../../i18n';
import { useFormat } from '../../session';
import { ConfirmDelete, EmptyNote, ErrorText } from '../ui';
import { categoryName } from './FilterFields';
import { ScheduledForm } from './ScheduledForm';

interface Props {
  tenantId: string;
  scheduled: ScheduledExport[];
  channels: AlertChannel[];
  satellites: Pick<Satellite, 'id' | 'name'>[];
  teamTimeZone: string;
}

export function ScheduledList(props: Props) {
  const t = useT();
  const [adding, setAdding] = useState(false);
  return (
    <>
      {props.scheduled.length === 0 ? <EmptyNote>{t('scheduled.none')}</EmptyNote> : null}
      <ul className="plain">
        {props.scheduled.map((s) => (
          <ScheduledItem key={s.id} s={s} {...props} />
        ))}
      </ul>
      {adding ? (
        <ScheduledForm
          tenantId={props.tenantId}
          existing={null}
          channels={props.channels}
          satellites={props.satellites}
          teamTimeZone={props.teamTimeZone}
          onDone={() => setAdding(false)}
        />
      ) : (
        <button type="button" onClick={() => setAdding(true)}>
          {t('scheduled.add')}
        </button>
      )}
    </>
  );
}

function filterSummary(t: T, f: ExportFilters, satellites: Pick<Satellite, 'id' | 'name'>[]): string {
  const parts: string[] = [];
  if (f.satelliteId) parts.push(satellites.find((s) => s.id === f.satelliteId)?.name ?? f.satelliteId);
  if (f.species) parts.push(f.species);
  if (f.minConfidence !== undefined) parts.push(`≥ ${Math.round(f.minConfidence * 1000) / 10} %`);
  if (f.verificationStatus) parts.push(t(`det.status.${f.verificationStatus}`));
  if (f.category) parts.push(categoryName(t, f.category));
  return parts.length > 0 ? parts.join(', ') : t('scheduled.filters.all');
}

function ScheduledItem({ s, tenantId, channels, satellites, teamTimeZone }: Props & { s: ScheduledExport }) {
  const t = useT();
  const fmt = useFormat();
  const [editing, setEditing] = useState(false);
  const { save, remove, runNow } = useScheduledMutations(tenantId);
  const channel = channels.find((c) => c.id === s.channelId);
  const filters = s.filters as ExportFilters;
  if (editing)
    return (
      <li>
        <ScheduledForm
          tenantId={tenantId}
          existing={s}
          channels={channels}
          satellites={satellites}
          teamTimeZone={teamTimeZone}
          onDone={() => setEditing(false)}
        />
      </li>
    );

  function toggle() {
    save.mutate({
      id: s.id,
      body: {
        name: s.name,
        format: s.format,
        schedule: s.schedule,
        timeZone: s.timeZone,
        filters,
        channelId: s.channelId ?? '',
        enabled: !s.enabled,
      },
    });
  }

  return (
    <li className="card" data-testid="scheduled-export" aria-label={s.name}>
      <div className="row">
        <strong>{s.name}</strong>
        <span className="badge">{t(`scheduled.format.${s.format}`)}</span>
        <code className="small">{s.schedule}</code>
        <span className="muted small">{s.timeZone}</span>
        <span className="spacer" />
        <label className="check">
          <input type="checkbox" role="switch" checked={s.enabled} disabled={save.isPending} onChange={toggle} />
          {t('scheduled.enabled')}
        </label>
      </div>
      <p className="small">
        {t('scheduled.channel')}: {channel ? channel.name : t('scheduled.channel.missing')} · {t('scheduled.filters')}:{' '}
        {filterSummary(t, filters, satellites)}
      </p>
      <p className="small" data-testid="scheduled-runs">
        {t('scheduled.next')}: {s.enabled && s.nextRunAt ? fmt.dateTime(s.nextRunAt) : '—'} · {t('scheduled.last')}:{' '}
        {s.lastRunAt ? fmt.dateTime(s.lastRunAt) : t('common.never')}
        {s.lastStatus ? ` · ${lastStatus(t, s.lastStatus)}` : ''}
        {s.lastRows !== null ? ` · ${t('scheduled.rows', { n: s.lastRows })}` : ''}
      </p>
      {s.lastError ? <p className="error small">{s.lastError}</p> : null}
      <div className="row">
        <button type="button" className="secondary" onClick={() => setEditing(true)}>
          {t('channels.editButton')}
        </button>
        <button
          type="button"
          className="secondary"
          disabled={runNow.isPending || !s.channelId}
          title={t('scheduled.runNow.hint')}
          onClick={() => runNow.mutate(s.id)}
        >
          {runNow.isPending ? t('scheduled.runNow.running') : t('scheduled.runNow')}
        </button>
        <ConfirmDelete
          question={t('scheduled.deleteConfirm', { name: s.name })}
          pending={remove.isPending}
          onDelete={() => remove.mutate(s.id)}
        />
      </div>
      <ErrorText error={save.error ?? remove.error ?? runNow.error} />
    </li>
  );
}

function lastStatus(t: T, status: string): string {
  if (status === 'delivered') return t('scheduled.status.delivered');
  if (status === 'failed') return t('scheduled.status.failed');
  if (status === 'running') return t('scheduled.status.running');
  return status;
}
