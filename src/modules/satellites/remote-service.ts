/**
 * A satellite at a distance: its config (effective values, overrides, the lock) pushed over
 * MQTT, remote update and log requests, and what it reported back (logs, config history,
 * telemetry). Part of the satellites service; the registry and lifecycle live in service.ts.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { type Actor, roleAtLeast } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId } from '../../core/crypto.ts';
import { AppError, forbidden } from '../../core/errors.ts';
import type { SettingsService } from '../settings/service.ts';
import { findSetting, refuseValue } from '../settings/registry.ts';
import { HUB_VERSION } from '../system/version.ts';
import { topicOf } from '../../protocol/topics.ts';
import type { SatelliteRow, SatellitesRepo } from './repo.ts';
import type { DeviceRepo } from './device-repo.ts';

/** The settings a satellite may override for itself (PUT /satellites/:id/config). */
export const OVERRIDE_FIELDS = [
  'filter_enabled',
  'filter_min_rms',
  'classifier_min_bird_prob',
  'outbox_soft_size_mb',
  'outbox_hard_size_mb',
  'outbox_max_age_hours',
  'heartbeat_interval_sec',
  'drop_amphibian_at_satellite',
  'drop_insect_at_satellite',
  'drop_anthropogenic_at_satellite',
  'drop_human_voice_at_satellite',
  'drop_other_animal_at_satellite',
  'device_inference',
] as const;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function createSatelliteRemote(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  settings: Pick<SettingsService, 'write' | 'effective' | 'satelliteConfig'>;
  broker: { publish(topic: string, payload: Buffer | string, opts?: { qos?: 0 | 1 | 2 }): Promise<void> };
  repo: SatellitesRepo;
  devices: DeviceRepo;
  /** The team's satellite, or a 404. */
  require: (tenantId: string, id: string) => Promise<SatelliteRow>;
}) {
  const { db, clock, audit, settings, broker, repo, devices, require } = deps;

  // Pushes to one satellite run one after another, each reading the config when its turn
  // comes: an answer to a config request that read the settings before a change can then never
  // arrive after the push of that change and undo it.
  const pushQueue = new Map<string, Promise<void>>();
  function publishConfig(tenantId: string, satelliteId: string): Promise<void> {
    const previous = pushQueue.get(satelliteId) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        const config = await settings.satelliteConfig(tenantId, satelliteId);
        await broker.publish(topicOf(tenantId, satelliteId, 'config'), JSON.stringify({ satelliteId, tenantId, ...config }), { qos: 2 });
      });
    pushQueue.set(satelliteId, next);
    void next
      .finally(() => {
        if (pushQueue.get(satelliteId) === next) pushQueue.delete(satelliteId);
      })
      .catch(() => {});
    return next;
  }

  async function config(tenantId: string, id: string) {
    const s = await require(tenantId, id);
    const eff = await settings.effective({ level: 'satellite', tenantId, satelliteId: id });
    const pick = (k: string) => eff.settings.find((e) => e.key === k)!;
    const config = await settings.satelliteConfig(tenantId, id);
    return {
      configLocked: s.configLocked,
      recordingProfile: config.recordingProfile,
      effective: Object.fromEntries(OVERRIDE_FIELDS.map((k) => [k, pick(k).value])),
      overrides: Object.fromEntries(OVERRIDE_FIELDS.map((k) => [k, pick(k).own])),
    };
  }

  return {
    config,
    publishConfig,

    /** PUT replaces the whole override row: a field left out is cleared. */
    async putConfig(actor: Actor, tenantId: string, id: string, input: { configLocked?: boolean; overrides?: Record<string, unknown> }) {
      const s = await require(tenantId, id);
      if (input.configLocked !== undefined && input.configLocked !== s.configLocked) {
        if (!roleAtLeast(actor.teamRole, 'admin')) throw forbidden('Only team admins may lock a device config', 'ADMIN_ONLY_SETTING');
        await db.tx(async (tx) => {
          await repo.update(tx, tenantId, id, { configLocked: input.configLocked }, clock.now());
          await audit.write(tx, actor, {
            action: 'admin.satellite_config_changed',
            targetType: 'satellite',
            targetId: id,
            details: { configLocked: input.configLocked },
          });
        });
      }
      if (input.overrides !== undefined) {
        const unknown = Object.keys(input.overrides).filter((k) => !(OVERRIDE_FIELDS as readonly string[]).includes(k));
        if (unknown.length) {
          // One 400 lists every refusal: the unknown fields and the values the writer would refuse.
          const refusals = [
            ...unknown.map((key) => ({ key, reason: 'is not an override field' })),
            ...OVERRIDE_FIELDS.filter((k) => k in input.overrides!).flatMap((key) => {
              const reason = refuseValue(findSetting(key)!, input.overrides![key]);
              return reason ? [{ key, reason }] : [];
            }),
          ];
          throw new AppError(400, 'VALIDATION_FAILED', refusals.map((r) => `${r.key} ${r.reason}`).join('; '), { refusals });
        }
        const values = Object.fromEntries(OVERRIDE_FIELDS.map((k) => [k, input.overrides![k] ?? null]));
        // Fields already cleared need no write; keeping them out avoids refusing a no-op.
        const current = (await config(tenantId, id)).overrides;
        const changed = Object.fromEntries(Object.entries(values).filter(([k, v]) => !(v === null && current[k] === null)));
        await settings.write(actor, { level: 'satellite', tenantId, satelliteId: id }, { values: changed });
      }
      return config(tenantId, id);
    },

    async pushProfile(actor: Actor, tenantId: string, id: string) {
      await require(tenantId, id);
      await publishConfig(tenantId, id);
      await db.tx((tx) => audit.write(tx, actor, { action: 'admin.satellite_profile_changed', targetType: 'satellite', targetId: id }));
      return { pushed: true };
    },

    async requestUpdate(actor: Actor, tenantId: string, id: string, latestOf: (stream: string) => Promise<string | null>) {
      const s = await require(tenantId, id);
      const targetVersion = (s.stream ? await latestOf(s.stream) : null) ?? HUB_VERSION;
      await db.tx(async (tx) => {
        await repo.update(tx, tenantId, id, { updateStatus: 'updating', targetVersion }, clock.now());
        await audit.write(tx, actor, {
          action: 'admin.satellite_update_requested',
          targetType: 'satellite',
          targetId: id,
          details: { targetVersion },
        });
      });
      await broker.publish(topicOf(tenantId, id, 'update'), JSON.stringify({ satelliteId: id, tenantId, targetVersion }), { qos: 1 });
      return { targetVersion, update_status: 'updating' };
    },

    async requestLogs(actor: Actor, tenantId: string, id: string, tail: number) {
      await require(tenantId, id);
      const requestId = newId();
      await db.tx(async (tx) => {
        await repo.insertLogRequest(tx, { id: requestId, tenantId, satelliteId: id, at: clock.now(), by: actor.userId });
        await audit.write(tx, actor, {
          action: 'admin.satellite_logs_requested',
          targetType: 'satellite',
          targetId: id,
          details: { tail },
        });
      });
      await broker.publish(topicOf(tenantId, id, 'log-request'), JSON.stringify({ requestId, tail }), { qos: 1 });
      return { requestId };
    },

    async logs(tenantId: string, id: string) {
      await require(tenantId, id);
      const l = await repo.latestLogs(tenantId, id);
      return l ? { requestId: l.requestId, requestedAt: iso(l.requestedAt), receivedAt: iso(l.receivedAt), lines: l.lines } : null;
    },

    async history(tenantId: string, id: string, limit: number) {
      await require(tenantId, id);
      const rows = await repo.history(tenantId, id, limit);
      return {
        history: rows.map((r) => ({
          id: r.id,
          changedAt: iso(r.changedAt),
          source: r.source,
          changedBy: r.changedBy,
          changes: r.changes,
          config: r.config,
        })),
      };
    },

    /** Recent telemetry samples, oldest first (what a sparkline draws left to right). */
    async telemetry(tenantId: string, id: string, limit: number) {
      await require(tenantId, id);
      const rows = await devices.telemetry(tenantId, id, limit);
      return {
        telemetry: rows.reverse().map((r) => ({
          at: iso(r.at),
          batteryLevel: r.batteryLevel,
          storageFreeBytes: r.storageFreeBytes,
          cpuTemp: r.cpuTemp,
          networkLatencyMs: r.networkLatencyMs,
          packetLossPct: r.packetLossPct,
          uptimeSeconds: r.uptimeSeconds,
        })),
      };
    },
  };
}
