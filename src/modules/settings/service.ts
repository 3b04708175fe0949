import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditWriter } from '../../core/audit.ts';
import { validationFailed } from '../../core/errors.ts';
import { type Level, PREFERENCE_KEYS, SETTINGS, findSetting, refuseValue } from './registry.ts';
import { createSettingsRepo } from './repo.ts';

export interface Refusal {
  key: string;
  reason: string;
}

const HUB_SCOPE = '';
const HUB_CACHE_MS = 5_000;

export function createSettingsService(deps: { db: Db; clock: Clock; audit: AuditWriter }) {
  const { db, clock, audit } = deps;
  const repo = createSettingsRepo(db);
  // Hub values are read on hot paths (/auth/me). A local write drops the cache; other
  // instances see a change within HUB_CACHE_MS.
  let hubCache: { values: Map<string, unknown>; at: number } | null = null;

  async function hubValues(): Promise<Map<string, unknown>> {
    if (hubCache && Date.now() - hubCache.at < HUB_CACHE_MS) return hubCache.values;
    const rows = await repo.list('hub', HUB_SCOPE);
    const values = new Map(rows.filter((r) => r.value !== null).map((r) => [r.key, r.value]));
    hubCache = { values, at: Date.now() };
    return values;
  }

  function check(level: Level, values: Record<string, unknown>): Refusal[] {
    const refusals: Refusal[] = [];
    for (const [key, value] of Object.entries(values)) {
      const def = findSetting(key);
      if (!def) refusals.push({ key, reason: 'is not a known setting' });
      else if (!def.levels.includes(level)) refusals.push({ key, reason: `cannot be set at the ${level} level` });
      else {
        const reason = refuseValue(def, value);
        if (reason) refusals.push({ key, reason });
      }
    }
    return refusals;
  }

  async function write(tx: Db, level: Level, scopeId: string, values: Record<string, unknown>, actor: Actor) {
    const refusals = check(level, values);
    if (refusals.length) {
      throw validationFailed(refusals.map((r) => `${r.key} ${r.reason}`).join('; '), { refusals });
    }
    for (const [key, value] of Object.entries(values)) {
      await repo.put(tx, level, scopeId, key, value, clock.now(), actor.userId);
    }
  }

  return {
    /** Effective hub value of a setting: stored, else the registry default. */
    async hubSetting<T>(key: string): Promise<T> {
      const values = await hubValues();
      return (values.has(key) ? values.get(key) : findSetting(key)?.default) as T;
    },

    async hubSettings(): Promise<Record<string, unknown>> {
      const values = await hubValues();
      return Object.fromEntries(
        SETTINGS.filter((s) => s.levels.includes('hub')).map((s) => [s.key, values.has(s.key) ? values.get(s.key) : s.default]),
      );
    },

    async updateHubSettings(actor: Actor, values: Record<string, unknown>) {
      await db.tx(async (tx) => {
        await write(tx, 'hub', HUB_SCOPE, values, actor);
        await audit.write(tx, actor, { action: 'admin.platform_settings_updated', tenantId: null, details: { keys: Object.keys(values) } });
      });
      hubCache = null;
    },

    /** Each preference: the person's own value, else the hub's, else the built-in default. */
    async preferences(userId: string): Promise<Record<string, unknown>> {
      const own = await repo.list('account', userId);
      return this.resolvePreferences(Object.fromEntries(own.filter((r) => r.value !== null).map((r) => [r.key, r.value])));
    },

    /** The same walk over own values already read (the auth lookup brings them along). */
    async resolvePreferences(own: Record<string, unknown>): Promise<Record<string, unknown>> {
      const hub = await hubValues();
      return Object.fromEntries(
        PREFERENCE_KEYS.map((k) => [k, k in own ? own[k] : hub.has(k) ? hub.get(k) : findSetting(k)!.default]),
      );
    },

    async updatePreferences(actor: Actor, userId: string, values: Record<string, unknown>) {
      await db.tx(async (tx) => {
        await write(tx, 'account', userId, values, actor);
        await audit.write(tx, actor, { action: 'user.preferences_updated', tenantId: null, targetType: 'user', targetId: userId, details: { keys: Object.keys(values) } });
      });
    },

    /** Removes every setting a scope holds (account deletion, team deletion). */
    deleteScope: (tx: Db, level: Level, scopeId: string) => repo.deleteScope(tx, level, scopeId),
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
