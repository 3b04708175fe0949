/** The team's rules with what each looks at and where it sends; admins edit, delete and add custom rules. */
import { useState } from 'react';
import { useRuleMutations, type AlertChannel, type AlertRule, type RuleConditions } from '../../api/hooks/alert-rules';
import type { Satellite } from '../../api/hooks/satellites';
import { useT, type T } from '../../i18n';
import { EmptyNote, ErrorText } from '../ui';
import { RuleForm } from './RuleForm';
import { EventBadge } from './labels';

/** A short line of the rule's conditions ("species: a, b · confidence ≥ 0.8 · 60 min"). */
function summary(t: T, r: AlertRule, satName: (id: string) => string): string {
  const c = r.conditions as RuleConditions;
  const parts: string[] = [];
  if (c.species?.length) parts.push(`${t('rules.species')}: ${c.species.join(', ')}`);
  if (c.minConfidence !== undefined) parts.push(t('rules.summary.confidence', { percent: Math.round(c.minConfidence * 1000) / 10 }));
  if (c.categories?.length) parts.push(`${t('rules.categories')}: ${c.categories.join(', ')}`);
  for (const k of ['rareOnly', 'firstOfDay', 'firstOfSeason', 'verifiedOnly'] as const) if (c[k]) parts.push(t(`rules.${k}`));
  if (c.minutes !== undefined) parts.push(t('rules.summary.minutes', { n: c.minutes }));
  if (c.window) parts.push(`${c.window.start}–${c.window.end}`);
  if (c.metric) parts.push(`${t(`rules.metric.${c.metric}`)} ${t(`rules.direction.${c.direction ?? 'fall'}`)} ${c.percent ?? ''}%`);
  if (c.windowMinutes !== undefined) parts.push(t('rules.summary.minutes', { n: c.windowMinutes }));
  if (c.satelliteIds?.length) parts.push(`${t('rules.satellites')}: ${c.satelliteIds.map(satName).join(', ')}`);
  if (r.cooldownMinutes > 0)
    parts.push(t('rules.summary.cooldown', { n: r.cooldownMinutes, scope: t(`rules.cooldownScope.${r.cooldownScope}`) }));
  if (r.quietHours) parts.push(t('rules.summary.quiet', { start: r.quietHours.start, end: r.quietHours.end }));
  return parts.join(' · ');
}

export function RuleList(props: {
  tenantId: string;
  rules: AlertRule[];
  channels: AlertChannel[];
  satellites: Satellite[];
  editable: boolean;
}) {
  const t = useT();
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const { remove } = useRuleMutations(props.tenantId);
  const channelName = (id: string) => props.channels.find((c) => c.id === id)?.name ?? id.slice(0, 8);
  const satName = (id: string) => props.satellites.find((s) => s.id === id)?.name ?? id.slice(0, 8);
  const form = (rule: AlertRule | null) => (
    <RuleForm
      tenantId={props.tenantId}
      rule={rule}
      channels={props.channels}
      satellites={props.satellites}
      onDone={() => setEditing(null)}
    />
  );
  return (
    <>
      {props.rules.length === 0 ? <EmptyNote>{t('rules.none')}</EmptyNote> : null}
      <ul className="plain">
        {props.rules.map((r) =>
          editing === r.id ? (
            <li key={r.id}>{form(r)}</li>
          ) : (
            <li key={r.id} className="card" data-testid="rule" aria-label={r.name}>
              <div className="row">
                <EventBadge event={r.event} />
                <strong>{r.name}</strong>
                <span className={`pill ${r.enabled ? 'ok' : 'off'}`}>{r.enabled ? t('rules.on') : t('rules.off')}</span>
              </div>
              <p className="small">{summary(t, r, satName) || t(`rules.type.${r.type}`)}</p>
              <p className="muted small">
                {t('rules.sendTo')}: {r.channelIds.length ? r.channelIds.map(channelName).join(', ') : t('rules.dashboardOnly')}
              </p>
              {props.editable ? (
                <div className="row">
                  <button type="button" className="secondary" onClick={() => setEditing(r.id)}>
                    {t('rules.editButton')}
                  </button>
                  <button type="button" className="secondary" disabled={remove.isPending} onClick={() => remove.mutate(r.id)}>
                    {t('common.delete')}
                  </button>
                </div>
              ) : null}
            </li>
          ),
        )}
      </ul>
      <ErrorText error={remove.error} />
      {props.editable ? (
        editing === 'new' ? (
          form(null)
        ) : (
          <button type="button" onClick={() => setEditing('new')}>
            {t('rules.add')}
          </button>
        )
      ) : null}
    </>
  );
}
