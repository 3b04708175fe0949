import type { Db } from '../../infra/db/index.ts';
import type { Bus } from '../../infra/bus/index.ts';
import type { Kv } from '../../infra/kv/index.ts';
import type { Clock } from '../../core/clock.ts';
import { type Actor, roleAtLeast } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import type { AuditAction } from '../../core/audit-actions.ts';
import { newId } from '../../core/crypto.ts';
import { AppError, forbidden, validationFailed } from '../../core/errors.ts';
import { type Level, PREFERENCE_KEYS, findSetting, refuseValue, settingsAt } from './registry.ts';
import { type Layer, type Layers, effectiveValues, inherit, resolveEntry } from './resolve.ts';
import { HUB_SCOPE, createSettingsRepo } from './repo.ts';
import { satelliteConfig } from './satellite-config.ts';
import { type SettingKey, type SettingValue, settingValue } from './values.ts';

export type Scope =
  | { level: 'hub' }
  | { level: 'team'; tenantId: string }
  | { level: 'satellite'; tenantId: string; satelliteId: string }
  | { level: 'account'; userId: string };

export interface Refusal {
  key: string;
  reason: string;
}

export interface SettingsWrite {
  values?: Record<string, unknown>;
  mayOverride?: Record<string, unknown>;
}

export type HistorySource = 'web' | 'device' | 'team' | 'hub';

const HUB_CACHE_MS = 5_000;
const TEAM_CACHE_MAX = 10_000;
/** Counts committed hub, team and satellite saves, in the store every process shares. */
const GENERATION_KEY = 'settings:generation';
// Long enough that nothing cached from settings (public pages: 10 minutes) outlives a reset of the counter.
const GENERATION_TTL_S = 30 * 86_400;

const AUDIT_BY_LEVEL: Record<Level, AuditAction> = {
  hub: 'admin.platform_settings_updated',
  team: 'admin.tenant_settings_updated',
  satellite: 'admin.satellite_config_changed',
  account: 'user.preferences_updated',
};

/** JSON with sorted keys: jsonb reorders object keys, so equality compares this. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

function scopeId(scope: Scope): string {
  switch (scope.level) {
    case 'hub':
      return HUB_SCOPE;
    case 'team':
      return scope.tenantId;
    case 'satellite':
      return scope.satelliteId;
    case 'account':
      return scope.userId;
  }
}

function layerScope(scope: Scope) {
  return {
    team: scope.level === 'team' || scope.level === 'satellite' ? scope.tenantId : null,
    satellite: scope.level === 'satellite' ? scope.satelliteId : null,
    account: scope.level === 'account' ? scope.userId : null,
  };
}

function applyTo(layer: Layer | undefined, values: Record<string, unknown>, locks: Record<string, boolean>): Layer {
  const next: Layer = new Map([...(layer ?? new Map())].map(([k, v]) => [k, { ...v }]));
  for (const [key, value] of Object.entries(values)) next.set(key, { value, mayOverride: next.get(key)?.mayOverride ?? null });
  for (const [key, may] of Object.entries(locks)) next.set(key, { value: next.get(key)?.value ?? null, mayOverride: may ? null : false });
  return next;
}

function diff(before: Record<string, unknown>, after: Record<string, unknown>) {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const key of Object.keys(after)) {
    if (canonical(before[key]) !== canonical(after[key])) changes[key] = { from: before[key], to: after[key] };
  }
  return changes;
}

/** The team's aggregation rule as the API shows it (spec §2 Team "aggregation rule"). */
export interface AggregationRule {
  enabled: boolean;
  count: number;
  windowMinutes: number;
  confidenceHigh: number;
  /** null while the hub switch retention_enabled is off. */
  retentionHours: number | null;
}

/** GET /teams/settings: every team setting by key, and the aggregation rule. */
export type TeamSettings = Record<string, unknown> & {
  tenantId: string;
  visible_categories: SettingValue<'visible_categories'>;
  aggregation: AggregationRule;
};

/** A satellite a settings change reaches. */
export interface ReachedSatellite {
  id: string;
  tenantId: string;
}

/** One row of a satellite's config history, written with the change that made it. */
export interface ConfigHistoryEntry {
  id: string;
  satelliteId: string;
  tenantId: string;
  changedAt: Date;
  source: HistorySource;
  changedBy: string | null;
  changes: Record<string, { from: unknown; to: unknown }>;
  config: Record<string, unknown>;
}

/** What the settings writer needs of the satellites module (satellites/config-history.ts, built before settings). */
export interface SatelliteConfigHistory {
  /** The satellites a change at this scope reaches: one, a team's, or all. */
  reach(tx: Db, scope: { tenantId: string | null; satelliteId: string | null }): Promise<ReachedSatellite[]>;
  insertHistory(tx: Db, rows: ConfigHistoryEntry[]): Promise<void>;
}

/** Checks of `ref` settings by the module that owns the rows: why an id is refused, or null. */
export type RefCheck = (id: string) => Promise<string | null>;

export function createSettingsService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  bus: Bus;
  /** Where the save counter lives (see generation()). */
  kv: Pick<Kv, 'get' | 'incr'>;
  satellites: SatelliteConfigHistory;
  refs?: Partial<Record<'model', RefCheck>>;
}) {
  const { db, clock, audit, bus, kv, satellites } = deps;
  const repo = createSettingsRepo(db);
  // Hub values are read on hot paths. A local write drops the cache; other instances see a
  // change within HUB_CACHE_MS.
  let hubCache: { layer: Layer; at: number } | null = null;

  async function hubLayer(): Promise<Layer> {
    if (hubCache && Date.now() - hubCache.at < HUB_CACHE_MS) return hubCache.layer;
    const { hub } = await repo.layers({});
    hubCache = { layer: hub, at: Date.now() };
    return hub;
  }

  // Team values are read on every detections list, share and vote; the same rule as the hub's.
  const teamCache = new Map<string, { layers: Layers; at: number }>();
  async function teamLayers(tenantId: string): Promise<Layers> {
    const hit = teamCache.get(tenantId);
    if (hit && Date.now() - hit.at < HUB_CACHE_MS) return hit.layers;
    const layers = await repo.layers({ team: tenantId });
    if (teamCache.size >= TEAM_CACHE_MAX) teamCache.delete(teamCache.keys().next().value!);
    teamCache.set(tenantId, { layers, at: Date.now() });
    return layers;
  }

  function refusalsFor(level: Level, input: SettingsWrite): Refusal[] {
    const refusals: Refusal[] = [];
    for (const [key, value] of Object.entries(input.values ?? {})) {
      const def = findSetting(key);
      if (!def) refusals.push({ key, reason: 'is not a known setting' });
      else if (!def.levels.includes(level)) refusals.push({ key, reason: `cannot be set at the ${level} level` });
      else {
        const reason = refuseValue(def, value);
        if (reason) refusals.push({ key, reason });
      }
    }
    for (const [key, value] of Object.entries(input.mayOverride ?? {})) {
      const def = findSetting(key);
      if (!def) refusals.push({ key, reason: 'is not a known setting' });
      else if (!def.lockableAt?.includes(level)) refusals.push({ key, reason: `cannot be locked at the ${level} level` });
      else if (typeof value !== 'boolean') refusals.push({ key, reason: 'mayOverride must be true or false' });
    }
    return refusals;
  }

  /** Effective configs of the satellites reached, with the scope's own layer optionally replaced. */
  async function configsOf(tx: Db, reached: ReachedSatellite[], layers: Layers, scope: Scope, replaced?: Layer) {
    const teamIds = [...new Set(reached.map((s) => s.tenantId))];
    const teamLayers =
      scope.level === 'team' || scope.level === 'satellite'
        ? new Map([[scope.tenantId, layers.team!]])
        : await repo.layersOf(tx, 'team', teamIds);
    const satLayers =
      scope.level === 'satellite'
        ? new Map([[scope.satelliteId, layers.satellite!]])
        : await repo.layersOf(
            tx,
            'satellite',
            reached.map((s) => s.id),
          );
    const hub = scope.level === 'hub' && replaced ? replaced : layers.hub;
    const out = new Map<string, Record<string, unknown>>();
    for (const s of reached) {
      let team = teamLayers.get(s.tenantId) ?? new Map();
      let satellite = satLayers.get(s.id) ?? new Map();
      if (replaced && scope.level === 'team') team = replaced;
      if (replaced && scope.level === 'satellite') satellite = replaced;
      out.set(s.id, satelliteConfig({ hub, team, satellite }));
    }
    return out;
  }

  const service = {
    /** Effective hub value of a setting: stored, else the registry default. */
    async hubSetting<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
      const stored = (await hubLayer()).get(key);
      return settingValue(key, stored && stored.value !== null ? stored.value : findSetting(key)?.default);
    },

    async hubSettings(): Promise<Record<string, unknown>> {
      const hub = await hubLayer();
      return {
        ...effectiveValues(settingsAt('hub'), 'hub', { hub }),
        device_inference_teams_may_override: hub.get('device_inference')?.mayOverride !== false,
      };
    },

    /** A team's resolved value of one setting (team, else hub, else default; hub lock wins). */
    async teamSetting<K extends SettingKey>(tenantId: string, key: K): Promise<SettingValue<K>> {
      const layers = await teamLayers(tenantId);
      return settingValue(key, resolveEntry(findSetting(key)!, 'team', layers).value);
    },

    /** Every team setting resolved; the fields code reads (the inference worker) come typed. */
    async teamSettings(tenantId: string): Promise<TeamSettings> {
      const layers = await repo.layers({ team: tenantId });
      const v = effectiveValues(settingsAt('team'), 'team', layers);
      const read = <K extends SettingKey>(key: K) => settingValue(key, v[key]);
      const retention = resolveEntry(findSetting('retention_enabled')!, 'hub', layers).value === true;
      return {
        tenantId,
        ...v,
        visible_categories: read('visible_categories'),
        device_inference_devices_may_override: layers.team!.get('device_inference')?.mayOverride !== false,
        aggregation: {
          enabled: read('aggregation_enabled'),
          count: read('aggregation_count'),
          windowMinutes: read('aggregation_window_minutes'),
          confidenceHigh: read('aggregation_confidence_high'),
          retentionHours: retention ? read('aggregation_retention_hours') : null,
        },
      };
    },

    /** The team's aggregation rule, resolved like every setting (team, else hub, else default). */
    async aggregationRule(tenantId: string): Promise<AggregationRule> {
      const layers = await repo.layers({ team: tenantId });
      const v = (key: string) => resolveEntry(findSetting(key)!, 'team', layers).value;
      const retention = resolveEntry(findSetting('retention_enabled')!, 'hub', layers).value === true;
      return {
        enabled: v('aggregation_enabled') === true,
        count: Number(v('aggregation_count')),
        windowMinutes: Number(v('aggregation_window_minutes')),
        confidenceHigh: Number(v('aggregation_confidence_high')),
        retentionHours: retention ? Number(v('aggregation_retention_hours')) : null,
      };
    },

    /** Each preference: the person's own value, else the hub's, else the built-in default. */
    async preferences(userId: string): Promise<Record<string, unknown>> {
      const { account } = await repo.layers({ account: userId });
      const own = Object.fromEntries([...account!].filter(([, s]) => s.value !== null).map(([k, s]) => [k, s.value]));
      return service.resolvePreferences(own);
    },

    /** The same walk over own values already read (the credential lookup brings them along). */
    async resolvePreferences(own: Record<string, unknown>): Promise<Record<string, unknown>> {
      const hub = await hubLayer();
      return Object.fromEntries(
        PREFERENCE_KEYS.map((k) => {
          const h = hub.get(k);
          return [k, k in own ? own[k] : h && h.value !== null ? h.value : findSetting(k)!.default];
        }),
      );
    },

    /** GET /settings/effective: every setting the scope's level can hold, in registry order. */
    async effective(scope: Scope) {
      const layers = await repo.layers(layerScope(scope));
      return {
        level: scope.level,
        ...(scope.level === 'team' || scope.level === 'satellite' ? { tenantId: scope.tenantId } : {}),
        ...(scope.level === 'satellite' ? { satelliteId: scope.satelliteId } : {}),
        settings: settingsAt(scope.level).map((def) => resolveEntry(def, scope.level, layers)),
      };
    },

    async satelliteConfig(tenantId: string, satelliteId: string): Promise<Record<string, unknown>> {
      return satelliteConfig(await repo.layers({ team: tenantId, satellite: satelliteId }));
    },

    /**
     * The one settings writer: all or nothing. 400 lists every refusal; 403 for a new value
     * under a lock (re-sending or clearing the stored value is allowed). Audited, writes config
     * history for each satellite reached, and publishes "config changed" for each satellite
     * whose effective config changed, after commit.
     */
    async write(actor: Actor, scope: Scope, input: SettingsWrite, opts: { source?: HistorySource } = {}) {
      const level = scope.level;
      const values = input.values ?? {};
      const refusals = refusalsFor(level, input);
      for (const [key, value] of Object.entries(values)) {
        const def = findSetting(key);
        if (def?.type !== 'ref' || typeof value !== 'string' || refusals.some((r) => r.key === key)) continue;
        const reason = deps.refs?.[def.ref] ? await deps.refs[def.ref]!(value) : null;
        if (reason) refusals.push({ key, reason });
      }
      if (refusals.length) {
        throw validationFailed(refusals.map((r) => `${r.key} ${r.reason}`).join('; '), { refusals });
      }
      const locks = (input.mayOverride ?? {}) as Record<string, boolean>;
      if (level === 'satellite' && !roleAtLeast(actor.teamRole, 'admin')) {
        const adminOnly = [...Object.keys(values), ...Object.keys(locks)].filter((k) => findSetting(k)?.adminOnlyAtSatellite);
        if (adminOnly.length) throw forbidden(`Only team admins may change ${adminOnly.join(', ')} on a satellite`, 'ADMIN_ONLY_SETTING');
      }

      const changed = await db.tx(async (tx) => {
        const layers = await repo.layers(layerScope(scope), tx);
        const own = layers[level]!;
        const lockedKeys: Array<{ key: string; by: 'hub' | 'team' }> = [];
        for (const [key, value] of Object.entries(values)) {
          if (value === null) continue;
          const { lockedBy } = inherit(findSetting(key)!, level, layers);
          if (lockedBy && canonical(own.get(key)?.value ?? null) !== canonical(value)) lockedKeys.push({ key, by: lockedBy });
        }
        if (lockedKeys.length) {
          const byHub = lockedKeys.some((l) => l.by === 'hub');
          throw new AppError(
            403,
            byHub ? 'LOCKED_BY_PLATFORM' : 'LOCKED_BY_TEAM',
            `Locked by the ${byHub ? 'hub' : 'team'}: ${lockedKeys.map((l) => l.key).join(', ')}`,
            { locked: lockedKeys },
          );
        }

        const reached =
          level === 'account'
            ? []
            : await satellites.reach(tx, {
                tenantId: level === 'hub' ? null : scope.tenantId,
                satelliteId: level === 'satellite' ? scope.satelliteId : null,
              });
        const before = await configsOf(tx, reached, layers, scope);

        const now = clock.now();
        const id = scopeId(scope);
        for (const [key, value] of Object.entries(values)) await repo.putValue(tx, level, id, key, value, now, actor.userId);
        for (const [key, may] of Object.entries(locks)) await repo.putLock(tx, level, id, key, may, now, actor.userId);
        await repo.prune(tx, level, id);

        const after = await configsOf(tx, reached, layers, scope, applyTo(own, values, locks));
        const source: HistorySource = opts.source ?? (level === 'satellite' ? 'web' : level === 'team' ? 'team' : 'hub');
        const history = reached.map((s) => ({
          id: newId(),
          satelliteId: s.id,
          tenantId: s.tenantId,
          changedAt: now,
          source,
          changedBy: actor.userId,
          changes: diff(before.get(s.id)!, after.get(s.id)!),
          config: after.get(s.id)!,
        }));
        await satellites.insertHistory(tx, history);
        await audit.write(tx, actor, {
          action: AUDIT_BY_LEVEL[level],
          tenantId: level === 'team' || level === 'satellite' ? scope.tenantId : null,
          targetType: level === 'satellite' ? 'satellite' : level === 'account' ? 'user' : level === 'team' ? 'tenant' : 'hub',
          targetId: level === 'hub' ? null : id,
          details: { values, ...(Object.keys(locks).length ? { mayOverride: locks } : {}) },
        });
        return history.filter((h) => Object.keys(h.changes).length > 0);
      });

      if (level === 'hub') {
        hubCache = null;
        teamCache.clear();
      } else if (level === 'team') teamCache.delete(scope.tenantId);
      // After commit; a failed count must not turn a saved change into an error (caches built
      // from settings then turn over by their own age).
      if (level !== 'account') await kv.incr(GENERATION_KEY, GENERATION_TTL_S).catch(() => {});
      for (const h of changed) {
        await bus.publish('satellite.config_changed', { tenantId: h.tenantId, satelliteId: h.satelliteId, config: h.config });
      }
      return { changedSatellites: changed.map((h) => h.satelliteId) };
    },

    /** Each satellite's own value of a satellite-level key (null where it holds none), e.g. the towns of a team's satellites. */
    async satelliteValues<K extends SettingKey>(key: K, satelliteIds: string[]): Promise<Map<string, SettingValue<K> | null>> {
      const layers = await repo.layersOf(db, 'satellite', satelliteIds);
      return new Map(
        satelliteIds.map((id) => {
          const own = layers.get(id)?.get(key)?.value ?? null;
          return [id, own === null ? null : settingValue(key, own)];
        }),
      );
    },

    /**
     * The settings generation: a counter of committed hub, team and satellite saves, kept in kv
     * (shared by every process) and raised before the saving request answers. A cache built from
     * settings keys on it (the public pages), so any save drops it at once everywhere, and the
     * settings writer knows no cache.
     */
    generation: async (): Promise<string> => (await kv.get(GENERATION_KEY)) ?? '0',

    /** Teams holding a value of their own for a team setting. */
    teamsWithOwnValue: (key: string) => repo.teamsWithOwnValue(key),

    /** Removes every setting a scope holds (account deletion, team deletion). */
    deleteScope: (tx: Db, level: Level, id: string) => {
      if (level === 'team') teamCache.delete(id);
      return repo.deleteScope(tx, level, id);
    },
  };
  return service;
}

export type SettingsService = ReturnType<typeof createSettingsService>;
