/**
 * Quick switches for the four system rules: each toggle creates the team's rule on first use,
 * then enables or disables it; its channel boxes choose where it is sent.
 */
import { useState } from 'react';
import { useRuleMutations, type AlertChannel, type AlertRule, type RuleBody, type SystemRule } from '../../api/hooks/alert-rules';
import { useT } from '../../i18n';
import { ErrorText } from '../ui';

const SYSTEM: SystemRule[] = ['rare_species', 'first_of_day', 'first_of_season', 'satellite_offline'];

/** A stored rule as a PUT body (PUT replaces the whole rule). */
export function ruleBody(r: AlertRule): Omit<RuleBody, 'tenantId'> {
  return {
    name: r.name,
    type: r.type,
    enabled: r.enabled,
    conditions: r.conditions as RuleBody['conditions'],
    channelIds: r.channelIds,
    cooldownMinutes: r.cooldownMinutes,
    cooldownScope: r.cooldownScope,
    quietHours: r.quietHours,
  };
}

export const systemOf = (r: AlertRule) => (r.conditions as { system?: SystemRule }).system;

export function SystemRules(props: { tenantId: string; rules: AlertRule[]; channels: AlertChannel[]; editable: boolean }) {
  const t = useT();
  return (
    <ul className="plain" aria-label={t('alerts.system.title')}>
      {SYSTEM.map((sys) => (
        <SystemSwitch key={sys} system={sys} rule={props.rules.find((r) => systemOf(r) === sys) ?? null} {...props} />
      ))}
    </ul>
  );
}

function SystemSwitch({
  tenantId,
  system,
  rule,
  channels,
  editable,
}: {
  tenantId: string;
  system: SystemRule;
  rule: AlertRule | null;
  channels: AlertChannel[];
  editable: boolean;
}) {
  const t = useT();
  const { save } = useRuleMutations(tenantId);
  // Before the rule exists the boxes are a draft; afterwards they edit the rule.
  const [draft, setDraft] = useState<string[]>([]);
  const chosen = rule ? rule.channelIds : draft;
  const on = !!rule?.enabled;

  const write = (enabled: boolean, channelIds: string[]) =>
    save.mutate(
      rule
        ? { id: rule.id, body: { ...ruleBody(rule), enabled, channelIds } }
        : {
            body: {
              name: t(`alerts.system.${system}`),
              type: system === 'satellite_offline' ? 'absence' : 'detection',
              enabled,
              conditions: { system },
              channelIds,
            },
          },
    );

  const toggleChannel = (id: string, checked: boolean) => {
    const next = checked ? [...chosen, id] : chosen.filter((c) => c !== id);
    if (rule) write(rule.enabled, next);
    else setDraft(next);
  };

  return (
    <li className="card" data-testid={`system-rule-${system}`}>
      <label className="inline switch">
        <input
          type="checkbox"
          role="switch"
          checked={on}
          disabled={!editable || save.isPending}
          onChange={(e) => write(e.target.checked, chosen)}
        />
        <strong>{t(`alerts.system.${system}`)}</strong>
      </label>
      <p className="muted small">{t(`alerts.system.${system}.hint`)}</p>
      {channels.length > 0 ? (
        <fieldset className="row">
          <legend className="small">{t('rules.sendTo')}</legend>
          {channels.map((c) => (
            <label key={c.id} className="inline small">
              <input
                type="checkbox"
                checked={chosen.includes(c.id)}
                disabled={!editable || save.isPending}
                onChange={(e) => toggleChannel(c.id, e.target.checked)}
              />
              {c.name}
            </label>
          ))}
        </fieldset>
      ) : (
        <p className="muted small">{t('rules.noChannels')}</p>
      )}
      <ErrorText error={save.error} />
    </li>
  );
}
