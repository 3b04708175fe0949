/**
 * What satellites report about themselves over the broker (satellite protocol §2), as the
 * ingester and the offline monitor record it: heartbeats, telemetry, log responses, last-seen
 * times, and the audit entries of what a satellite asks by itself.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditEntry, AuditWriter } from '../audit/writer.ts';
import type { HeartbeatMessage, TelemetryMessage } from '../../protocol/messages.ts';
import { createDeviceRepo, type SatellitePosition } from './device-repo.ts';

export type { SatellitePosition };

export function createDeviceService(deps: { db: Db; clock: Clock; audit: AuditWriter }) {
  const { db, clock, audit } = deps;
  const repo = createDeviceRepo(db);
  return {
    /** The satellite a message names, in the team its topic names; null when there is none. */
    find: (tenantId: string, satelliteId: string) => repo.find(tenantId, satelliteId),

    /** The satellite's name when it is one of the team's, else null (field notes name their satellite). */
    nameOf: async (tenantId: string, satelliteId: string) => (await repo.find(tenantId, satelliteId))?.name ?? null,

    /**
     * Stores a heartbeat (device-repo.ts); when it unarchived the satellite, the entry
     * device.satellite_unarchived_by_heartbeat is written in the same transaction, by `actor`.
     */
    async recordHeartbeat(actor: Actor, tenantId: string, satelliteId: string, hb: HeartbeatMessage): Promise<void> {
      await db.tx(async (tx) => {
        const r = await repo.heartbeat(tx, tenantId, satelliteId, hb, clock.now());
        if (r?.unarchived) {
          await audit.write(tx, actor, {
            action: 'device.satellite_unarchived_by_heartbeat',
            tenantId,
            targetType: 'satellite',
            targetId: satelliteId,
            details: { via: 'heartbeat', version: hb.version },
          });
        }
      });
    },

    recordTelemetry: (tenantId: string, satelliteId: string, t: TelemetryMessage) => repo.insertTelemetry(tenantId, satelliteId, t),

    /** A clean stop (the satellite's goodbye): offline at once, until its next heartbeat. No alert: it said so itself. */
    recordGoodbye: (tenantId: string, satelliteId: string) => repo.markStopped(tenantId, satelliteId, clock.now()).then(() => {}),

    /** Fills the open log request a response answers; returns its id, or null when nothing was waiting. */
    storeLogResponse: (tenantId: string, satelliteId: string, requestId: string | null, lines: string[]) =>
      repo.storeLogResponse(tenantId, satelliteId, requestId, lines, clock.now()),

    /** The audit entry of something a satellite asked by itself (a config request), in its own transaction. */
    async recordDeviceRequest(actor: Actor, entry: AuditEntry): Promise<void> {
      await db.tx((tx) => audit.write(tx, actor, entry));
    },

    silentSince: (minSilentSince: Date) => repo.silentSince(minSilentSince),

    markOffline: (tenantId: string, ids: string[], cutoff: Date, at: Date) => repo.markOffline(tenantId, ids, cutoff, at),

    /** A team's satellites with the free space their latest telemetry reported (storage panel). */
    storageReports: (tenantId: string) => repo.storageReports(tenantId),

    /** Profile position and latest telemetry GPS fix of the teams' active satellites (the stats map). */
    positions: (tenantIds: readonly string[] | null, satelliteId?: string) => repo.positions(tenantIds, satelliteId),
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
