import type { Db } from '../../infra/db/index.ts';
import type { Bus } from '../../infra/bus/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { TeamActor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId } from '../../core/crypto.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { createAlertsRepo, type RuleRow } from './repo.ts';
import { STREAM_CHANNEL_TYPES, type RuleConditions, type RuleInput } from './schemas.ts';
import { eventOfRule } from './conditions.ts';

/** Which condition members mean something for each rule type (docs/decisions.md "Alert rule conditions"). */
const ALLOWED: Record<RuleRow['type'], ReadonlyArray<keyof RuleConditions>> = {
  detection: [
    'system',
    'species',
    'minConfidence',
    'confidenceKind',
    'satelliteIds',
    'categories',
    'rareOnly',
    'firstOfDay',
    'firstOfSeason',
    'verifiedOnly',
  ],
  absence: ['system', 'species', 'satelliteIds', 'minutes', 'window'],
  trend: ['metric', 'direction', 'percent', 'windowMinutes', 'satelliteIds', 'minBaseline'],
};

export const presentRule = (r: RuleRow) => ({
  id: r.id,
  tenantId: r.tenantId,
  name: r.name,
  type: r.type,
  enabled: r.enabled,
  conditions: r.conditions,
  channelIds: r.channelIds,
  cooldownMinutes: r.cooldownMinutes,
  cooldownScope: r.cooldownScope,
  quietHours: r.quietHours,
  event: eventOfRule(r),
  createdAt: new Date(r.createdAt).toISOString(),
  updatedAt: new Date(r.updatedAt).toISOString(),
});

/** Refuses conditions that mean nothing for the type, or that the type needs and lacks. */
export function checkConditions(type: RuleRow['type'], c: RuleConditions): void {
  const stray = (Object.keys(c) as Array<keyof RuleConditions>).filter((k) => c[k] !== undefined && !ALLOWED[type].includes(k));
  if (stray.length > 0)
    throw badRequest(`conditions.${stray[0]} does not apply to a ${type} rule`, 'INVALID_CONDITIONS', { fields: stray });
  if (type === 'detection' && c.system === 'satellite_offline') {
    throw badRequest('satellite_offline is an absence rule (type: absence)', 'INVALID_CONDITIONS');
  }
  if (type === 'absence') {
    if (c.system && c.system !== 'satellite_offline')
      throw badRequest(`${c.system} is a detection rule (type: detection)`, 'INVALID_CONDITIONS');
    if (!c.system && c.minutes === undefined) throw badRequest('An absence rule needs conditions.minutes', 'INVALID_CONDITIONS');
    if (c.system && (c.minutes !== undefined || c.species?.length || c.window)) {
      throw badRequest(
        'The satellite_offline rule follows the team offline threshold; it takes no minutes, species or window',
        'INVALID_CONDITIONS',
      );
    }
  }
  if (type === 'trend') {
    const missing = (['metric', 'direction', 'percent', 'windowMinutes'] as const).filter((k) => c[k] === undefined);
    if (missing.length > 0) throw badRequest(`A trend rule needs conditions.${missing.join(', conditions.')}`, 'INVALID_CONDITIONS');
  }
}

export function createRulesService(deps: { db: Db; clock: Clock; audit: AuditWriter; bus: Pick<Bus, 'publish'> }) {
  const { db, clock, audit } = deps;
  const repo = createAlertsRepo(db);

  async function checkRefs(tenantId: string, c: RuleConditions, channelIds: readonly string[]) {
    if (channelIds.length > 0) {
      const known = new Set(await repo.teamChannelIds(tenantId, channelIds));
      const unknown = channelIds.filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw badRequest('channelIds names a channel the team does not have', 'UNKNOWN_CHANNEL', { channelIds: unknown });
      // Stream channels (issue 38) already take every detection; an alert sent there would be refused at each attempt.
      const streams = (await repo.channelsById(channelIds)).filter((ch) => (STREAM_CHANNEL_TYPES as readonly string[]).includes(ch.type));
      if (streams.length > 0)
        throw badRequest(`channel ${streams[0].name} carries the detection stream, not alerts`, 'CHANNEL_IS_STREAM', {
          channelIds: streams.map((ch) => ch.id),
        });
    }
    if (c.satelliteIds?.length) {
      const known = new Set(await repo.teamSatelliteIds(tenantId, c.satelliteIds));
      const unknown = c.satelliteIds.filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw badRequest('satelliteIds names a satellite the team does not have', 'UNKNOWN_SATELLITE', { satelliteIds: unknown });
    }
  }

  async function save(actor: TeamActor, id: string, existing: RuleRow | null, input: RuleInput & { name: string; type: RuleRow['type'] }) {
    const tenantId = actor.teamId;
    const conditions = input.conditions ?? {};
    checkConditions(input.type, conditions);
    const channelIds = input.channelIds ?? [];
    await checkRefs(tenantId, conditions, channelIds);
    const now = clock.now();
    const row: RuleRow = {
      id,
      tenantId,
      name: input.name,
      type: input.type,
      enabled: input.enabled ?? true,
      conditions,
      channelIds: [...channelIds].sort(),
      cooldownMinutes: input.cooldownMinutes ?? 0,
      cooldownScope: input.cooldownScope ?? (input.type === 'detection' ? 'species' : 'satellite'),
      quietHours: input.quietHours ?? null,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await db.tx(async (tx) => {
      await repo.saveRule(tx, { ...row, createdBy: actor.userId });
      await audit.write(tx, actor, {
        action: existing ? 'admin.alert_rule_updated' : 'admin.alert_rule_created',
        tenantId,
        targetType: 'alert_rule',
        targetId: id,
        details: { name: row.name, type: row.type, enabled: row.enabled, event: eventOfRule(row) },
      });
    });
    await deps.bus.publish('alerts.rules_changed', { tenantId });
    return presentRule(row);
  }

  return {
    list: async (tenantId: string) => (await repo.listRules(tenantId)).map(presentRule),
    create: (actor: TeamActor, input: RuleInput & { name: string; type: RuleRow['type'] }) => save(actor, newId(), null, input),
    async update(actor: TeamActor, id: string, input: RuleInput & { name: string; type: RuleRow['type'] }) {
      const existing = await repo.findRule(actor.teamId, id);
      if (!existing) throw notFound('No such rule');
      return save(actor, id, existing, input);
    },
    async remove(actor: TeamActor, id: string) {
      const tenantId = actor.teamId;
      const removed = await db.tx(async (tx) => {
        if (!(await repo.deleteRule(tx, tenantId, id))) return false;
        await audit.write(tx, actor, { action: 'admin.alert_rule_deleted', tenantId, targetType: 'alert_rule', targetId: id });
        return true;
      });
      if (!removed) throw notFound('No such rule');
      await deps.bus.publish('alerts.rules_changed', { tenantId });
    },
    teamOfRule: repo.teamOfRule,
  };
}

export type RulesService = ReturnType<typeof createRulesService>;
