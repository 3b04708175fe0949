import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import type { HeartbeatMessage, TelemetryMessage } from '../../protocol/messages.ts';

/**
 * What satellites report about themselves over the broker (satellite protocol §2): heartbeats,
 * telemetry, log responses, and the offline monitor's view of last-seen times. The tables are
 * the satellites module's; the ingester and the monitor write them through device-service.ts.
 */
export const SatellitePosition = shape({
  satelliteId: col.text(),
  tenantId: col.text(),
  name: col.text(),
  stream: col.nullable(col.text()),
  profileLatitude: col.nullable(col.num()),
  profileLongitude: col.nullable(col.num()),
  fixLatitude: col.nullable(col.num()),
  fixLongitude: col.nullable(col.num()),
  fixAt: col.nullable(col.date()),
});
export type SatellitePosition = RowOf<typeof SatellitePosition>;

const Device = shape({ id: col.text(), name: col.text(), archived: col.bool(), configLocked: col.bool() });
const Heartbeat = shape({ unarchived: col.bool(), updated: col.bool() });
const StorageReport = shape({
  id: col.text(),
  name: col.text(),
  archived: col.bool(),
  freeBytes: col.nullable(col.num()),
  reportedAt: col.nullable(col.date()),
});
const TelemetrySample = shape({
  at: col.date(),
  batteryLevel: col.nullable(col.num()),
  storageFreeBytes: col.nullable(col.num()),
  cpuTemp: col.nullable(col.num()),
  networkLatencyMs: col.nullable(col.num()),
  packetLossPct: col.nullable(col.num()),
  uptimeSeconds: col.nullable(col.int()),
});
const Id = shape({ id: col.text() });
const Silent = shape({ id: col.text(), tenantId: col.text(), name: col.text(), lastSeenAt: col.date() });
const MarkedOffline = shape({ id: col.text(), name: col.text(), lastSeenAt: col.date() });

export function createDeviceRepo(db: Db) {
  return {
    /** The satellite a message names, in the team its topic names; null when there is none. */
    find: (tenantId: string, satelliteId: string, tx: Db = db) =>
      tx.maybeOne(Device, `SELECT id, name, archived, config_locked AS "configLocked" FROM satellites WHERE tenant_id = $1 AND id = $2`, [
        tenantId,
        satelliteId,
      ]),

    /**
     * Stores a heartbeat: last seen, reported state and stats; ends an update whose target the
     * reported version reached; unarchives (unless another active entry now holds the device
     * id); clears the offline mark. Returns whether it unarchived, for the audit entry.
     */
    heartbeat: (tx: Db, tenantId: string, satelliteId: string, h: HeartbeatMessage, at: Date) =>
      tx.maybeOne(
        Heartbeat,
        `WITH prev AS (
           SELECT id, archived, target_version FROM satellites WHERE tenant_id = $1 AND id = $2 FOR UPDATE
         ), next AS (
           UPDATE satellites s SET
             last_seen_at = $3, version = $4, stream = $5, state = $6, uptime_seconds = $7, noise_floor_rms = $8,
             filter_stats = COALESCE($9::jsonb, s.filter_stats), outbox_stats = COALESCE($10::jsonb, s.outbox_stats),
             update_status = CASE WHEN s.target_version IS NOT NULL AND s.target_version = $4 THEN NULL ELSE s.update_status END,
             target_version = CASE WHEN s.target_version IS NOT NULL AND s.target_version = $4 THEN NULL ELSE s.target_version END,
             archived = CASE WHEN s.archived AND NOT EXISTS (
                 SELECT 1 FROM satellites o WHERE o.tenant_id = s.tenant_id AND o.device_id = s.device_id AND o.id <> s.id AND NOT o.archived
               ) THEN false ELSE s.archived END,
             offline_alerted_at = NULL,
             stopped_at = NULL,
             updated_at = $3
           FROM prev WHERE s.id = prev.id
           RETURNING s.archived, prev.archived AS "wasArchived", prev.target_version AS "prevTarget", s.target_version
         )
         SELECT ("wasArchived" AND NOT archived) AS unarchived, ("prevTarget" IS NOT NULL AND target_version IS NULL) AS updated FROM next`,
        [
          tenantId,
          satelliteId,
          at,
          h.version,
          h.stream,
          h.state,
          h.uptimeSeconds,
          h.noiseFloorRms,
          h.filterStats ? JSON.stringify(h.filterStats) : null,
          h.outboxStats ? JSON.stringify(h.outboxStats) : null,
        ],
      ),

    insertTelemetry: (tenantId: string, satelliteId: string, t: TelemetryMessage) =>
      db.run(
        `INSERT INTO telemetry (tenant_id, satellite_id, at, battery_level, storage_free_bytes, cpu_temp, network_latency_ms, packet_loss_pct, uptime_seconds, latitude, longitude)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          tenantId,
          satelliteId,
          t.at,
          t.batteryLevel,
          t.storageFreeBytes,
          t.cpuTemp,
          t.networkLatencyMs,
          t.packetLossPct,
          t.uptimeSeconds,
          t.latitude,
          t.longitude,
        ],
      ),

    /**
     * The teams' satellites that are not archived (or the one named; every team's for null), each with its profile
     * position and the latest GPS fix its telemetry carried (the map's positions).
     */
    positions: (tenantIds: readonly string[] | null, satelliteId?: string) =>
      db.query(
        SatellitePosition,
        `SELECT s.id AS "satelliteId", s.tenant_id AS "tenantId", s.name, s.stream, s.latitude AS "profileLatitude", s.longitude AS "profileLongitude",
           f.latitude AS "fixLatitude", f.longitude AS "fixLongitude", f.at AS "fixAt"
         FROM satellites s
         LEFT JOIN LATERAL (
           SELECT t.latitude, t.longitude, t.at FROM telemetry t
           WHERE t.satellite_id = s.id AND t.latitude IS NOT NULL ORDER BY t.at DESC, t.id DESC LIMIT 1
         ) f ON true
         WHERE ($1::uuid[] IS NULL OR s.tenant_id = ANY($1::uuid[])) AND NOT s.archived AND ($2::uuid IS NULL OR s.id = $2::uuid)
         ORDER BY s.name, s.id`,
        [tenantIds ? [...tenantIds] : null, satelliteId ?? null],
      ),

    /**
     * A team's satellites (archived too: their audio still takes room), each with the free space
     * of its latest telemetry sample that reported one (storage panel, issue 23).
     */
    storageReports: (tenantId: string) =>
      db.query(
        StorageReport,
        `SELECT s.id, s.name, s.archived, t.storage_free_bytes AS "freeBytes", t.at AS "reportedAt"
         FROM satellites s
         LEFT JOIN LATERAL (
           SELECT storage_free_bytes, at FROM telemetry
           WHERE satellite_id = s.id AND storage_free_bytes IS NOT NULL ORDER BY at DESC, id DESC LIMIT 1
         ) t ON true
         WHERE s.tenant_id = $1
         ORDER BY s.name, s.id`,
        [tenantId],
      ),

    /** Telemetry samples of one satellite, newest first. */
    telemetry: (tenantId: string, satelliteId: string, limit: number) =>
      db.query(
        TelemetrySample,
        `SELECT at, battery_level AS "batteryLevel", storage_free_bytes AS "storageFreeBytes", cpu_temp AS "cpuTemp",
           network_latency_ms AS "networkLatencyMs", packet_loss_pct AS "packetLossPct", uptime_seconds AS "uptimeSeconds"
         FROM telemetry WHERE tenant_id = $1 AND satellite_id = $2 ORDER BY at DESC, id DESC LIMIT $3`,
        [tenantId, satelliteId, limit],
      ),

    /**
     * Fills the log request a response answers: the one it names when that is still open, else
     * the newest open one. Returns the request id, or null when nothing was waiting.
     */
    async storeLogResponse(
      tenantId: string,
      satelliteId: string,
      requestId: string | null,
      lines: string[],
      at: Date,
    ): Promise<string | null> {
      const row = await db.maybeOne(
        Id,
        `UPDATE satellite_logs SET received_at = $4, lines = $5::jsonb
         WHERE id = (
           SELECT id FROM satellite_logs
           WHERE tenant_id = $1 AND satellite_id = $2 AND received_at IS NULL
           ORDER BY (id = $3::uuid) DESC NULLS LAST, requested_at DESC, id DESC
           LIMIT 1
         ) AND received_at IS NULL
         RETURNING id`,
        [tenantId, satelliteId, requestId, at, JSON.stringify(lines)],
      );
      return row?.id ?? null;
    },

    /**
     * Candidates for the offline monitor, across all teams: not archived, seen at some time,
     * not yet alerted, silent for at least `minSilentSince` (the smallest threshold any team can set).
     */
    silentSince: (minSilentSince: Date) =>
      db.query(
        Silent,
        `SELECT id, tenant_id AS "tenantId", name, last_seen_at AS "lastSeenAt" FROM satellites
         WHERE NOT archived AND offline_alerted_at IS NULL AND stopped_at IS NULL AND last_seen_at IS NOT NULL AND last_seen_at < $1
         ORDER BY tenant_id, last_seen_at, id`,
        [minSilentSince],
      ),

    /**
     * Marks satellites offline, once: only rows still silent since `cutoff`, not archived and
     * not yet marked are claimed, so two monitors (two dispatchers) never alert twice.
     */
    /** The satellite said goodbye (stopped cleanly): offline from now until its next heartbeat. */
    markStopped: (tenantId: string, satelliteId: string, at: Date) =>
      db.run('UPDATE satellites SET stopped_at = $3 WHERE tenant_id = $1 AND id = $2 AND NOT archived', [tenantId, satelliteId, at]),

    markOffline: (tenantId: string, ids: string[], cutoff: Date, at: Date) =>
      db.query(
        MarkedOffline,
        `UPDATE satellites SET offline_alerted_at = $4
         WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND NOT archived AND offline_alerted_at IS NULL AND last_seen_at < $3
         RETURNING id, name, last_seen_at AS "lastSeenAt"`,
        [tenantId, ids, cutoff, at],
      ),
  };
}

export type DeviceRepo = ReturnType<typeof createDeviceRepo>;
