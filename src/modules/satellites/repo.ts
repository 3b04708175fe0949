import { col, containsPattern, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import type { DeviceFacts } from '../../core/permissions.ts';

export const SatelliteRef = shape({
  id: col.text(),
  tenantId: col.text(),
  name: col.text(),
  registeredBy: col.nullable(col.text()),
  configLocked: col.bool(),
});
export type SatelliteRef = RowOf<typeof SatelliteRef>;
const REF = `id, tenant_id AS "tenantId", name, registered_by AS "registeredBy", config_locked AS "configLocked"`;

export const HistoryRow = shape({
  id: col.text(),
  satelliteId: col.text(),
  tenantId: col.text(),
  changedAt: col.date(),
  source: col.oneOf(['web', 'device', 'team', 'hub'] as const),
  changedBy: col.nullable(col.text()),
  changes: col.json<Record<string, { from: unknown; to: unknown }>>(),
  config: col.json<Record<string, unknown>>(),
});
export type HistoryRow = RowOf<typeof HistoryRow>;

export const SatelliteRow = shape({
  ...SatelliteRef.properties,
  deviceId: col.nullable(col.text()),
  registeredByName: col.nullable(col.text()),
  archived: col.bool(),
  latitude: col.nullable(col.num()),
  longitude: col.nullable(col.num()),
  lastSeenAt: col.nullable(col.date()),
  version: col.nullable(col.text()),
  stream: col.nullable(col.text()),
  state: col.nullable(col.text()),
  uptimeSeconds: col.nullable(col.int()),
  noiseFloorRms: col.nullable(col.num()),
  filterStats: col.nullable(col.json<Record<string, number>>()),
  outboxStats: col.nullable(col.json<Record<string, number>>()),
  updateStatus: col.nullable(col.text()),
  targetVersion: col.nullable(col.text()),
  /** Set by a goodbye (a clean stop), cleared by the next heartbeat. */
  stoppedAt: col.nullable(col.date()),
  createdAt: col.date(),
});
export type SatelliteRow = RowOf<typeof SatelliteRow>;
const ROW = `s.id, s.tenant_id AS "tenantId", s.name, s.device_id AS "deviceId", s.registered_by AS "registeredBy",
  u.name AS "registeredByName", s.config_locked AS "configLocked", s.archived, s.latitude, s.longitude,
  s.last_seen_at AS "lastSeenAt", s.version, s.stream, s.state, s.uptime_seconds AS "uptimeSeconds",
  s.noise_floor_rms AS "noiseFloorRms", s.filter_stats AS "filterStats", s.outbox_stats AS "outboxStats",
  s.update_status AS "updateStatus", s.target_version AS "targetVersion", s.stopped_at AS "stoppedAt", s.created_at AS "createdAt"`;

export interface SatelliteListFilter {
  tenantIds: string[] | null;
  search?: string;
  includeArchived: boolean;
  registeredBy?: string;
  stream?: string;
  state?: string;
  sortBy: 'name' | 'lastSeen' | 'created';
  sortDir: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const DeviceFactsRow = shape({
  tenantId: col.text(),
  registeredBy: col.nullable(col.text()),
  devicePolicy: col.oneOf(['members', 'admins'] as const),
});
const Credentials = shape({ tenantId: col.text(), passwordHash: col.nullable(col.text()), archived: col.bool() });
const Id = shape({ id: col.text() });
const DeletionFacts = shape({ chunks: col.int(), audioBytes: col.num(), detections: col.int(), promoted: col.int() });
const ChunkKey = shape({ key: col.text() });
const LatestLogs = shape({
  requestId: col.text(),
  requestedAt: col.date(),
  receivedAt: col.nullable(col.date()),
  lines: col.nullable(col.json<string[]>()),
});

const FROM = `FROM satellites s LEFT JOIN users u ON u.id = s.registered_by`;
const SORT: Record<SatelliteListFilter['sortBy'], string> = { name: 's.name', lastSeen: 's.last_seen_at', created: 's.created_at' };

export function createSatellitesRepo(db: Db) {
  return {
    /** Device rule facts: the team, the registrant and the team's device_policy (team, else hub, else members). */
    deviceFacts: (satelliteId: string): Promise<DeviceFacts | null> =>
      db.maybeOne(
        DeviceFactsRow,
        `SELECT s.tenant_id AS "tenantId", s.registered_by AS "registeredBy",
           COALESCE(
             (SELECT value #>> '{}' FROM settings WHERE level = 'team' AND scope_id = s.tenant_id::text AND key = 'device_policy' AND value IS NOT NULL),
             (SELECT value #>> '{}' FROM settings WHERE level = 'hub' AND scope_id = '' AND key = 'device_policy' AND value IS NOT NULL),
             'members') AS "devicePolicy"
         FROM satellites s WHERE s.id = $1`,
        [satelliteId],
      ),

    find: (tenantId: string, id: string, tx: Db = db) =>
      tx.maybeOne(SatelliteRow, `SELECT ${ROW} ${FROM} WHERE s.tenant_id = $1 AND s.id = $2`, [tenantId, id]),

    /** The entry holding a device id: the active one, else the newest archived one. */
    findByDeviceId: (tenantId: string, deviceId: string, tx: Db = db) =>
      tx.maybeOne(
        SatelliteRow,
        `SELECT ${ROW} ${FROM} WHERE s.tenant_id = $1 AND s.device_id = $2 ORDER BY s.archived, s.created_at DESC LIMIT 1`,
        [tenantId, deviceId],
      ),

    /**
     * Adoption candidates for a registration by name: the team's active entries holding no
     * device id whose name is exactly `name`, newest first.
     */
    adoptableByName: (tenantId: string, name: string, tx: Db = db) =>
      tx.query(
        SatelliteRow,
        `SELECT ${ROW} ${FROM} WHERE s.tenant_id = $1 AND s.name = $2 AND s.device_id IS NULL AND NOT s.archived ORDER BY s.created_at DESC, s.id`,
        [tenantId, name],
      ),

    async list(f: SatelliteListFilter): Promise<{ rows: SatelliteRow[]; total: number }> {
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (sql: string, v: unknown) => {
        params.push(v);
        where.push(sql.replaceAll('?', `$${params.length}`));
      };
      if (f.tenantIds) add('s.tenant_id = ANY(?::uuid[])', f.tenantIds);
      if (!f.includeArchived) where.push('NOT s.archived');
      if (f.search) add('s.name ILIKE ?', containsPattern(f.search));
      if (f.registeredBy) add('s.registered_by = ?', f.registeredBy);
      if (f.stream) add('s.stream = ?', f.stream);
      if (f.state) add('s.state = ?', f.state);
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
      const total = (await db.one(Count, `SELECT count(*)::int AS n FROM satellites s ${clause}`, params)).n;
      const dir = f.sortDir === 'asc' ? 'ASC' : 'DESC';
      const rows = await db.query(
        SatelliteRow,
        `SELECT ${ROW} ${FROM} ${clause} ORDER BY ${SORT[f.sortBy]} ${dir} NULLS LAST, s.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, f.limit, f.offset],
      );
      return { rows, total };
    },

    insert: (
      tx: Db,
      s: {
        id: string;
        tenantId: string;
        name: string;
        deviceId: string | null;
        registeredBy: string | null;
        passwordHash: string;
        latitude: number | null;
        longitude: number | null;
        at: Date;
      },
    ) =>
      tx.run(
        `INSERT INTO satellites (id, tenant_id, name, device_id, registered_by, mqtt_password_hash, latitude, longitude, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
        [s.id, s.tenantId, s.name, s.deviceId, s.registeredBy, s.passwordHash, s.latitude, s.longitude, s.at],
      ),

    async update(tx: Db, tenantId: string, id: string, patch: Record<string, unknown>, at: Date) {
      const columns: Record<string, string> = {
        name: 'name',
        deviceId: 'device_id',
        registeredBy: 'registered_by',
        passwordHash: 'mqtt_password_hash',
        archived: 'archived',
        configLocked: 'config_locked',
        latitude: 'latitude',
        longitude: 'longitude',
        updateStatus: 'update_status',
        targetVersion: 'target_version',
      };
      const sets: string[] = [];
      const params: unknown[] = [tenantId, id];
      for (const [k, v] of Object.entries(patch)) {
        if (v === undefined) continue;
        params.push(v);
        sets.push(`${columns[k]} = $${params.length}`);
      }
      params.push(at);
      sets.push(`updated_at = $${params.length}`);
      await tx.run(`UPDATE satellites SET ${sets.join(', ')} WHERE tenant_id = $1 AND id = $2`, params);
    },

    delete: (tx: Db, tenantId: string, id: string) => tx.run('DELETE FROM satellites WHERE tenant_id = $1 AND id = $2', [tenantId, id]),

    /** Broker login check: the stored hash of the 32-byte secret. */
    credentials: (id: string) =>
      db.maybeOne(
        Credentials,
        `SELECT tenant_id AS "tenantId", mqtt_password_hash AS "passwordHash", archived FROM satellites WHERE id = $1`,
        [id],
      ),

    registeredIn: (tx: Db, tenantId: string, userId: string) =>
      tx.query(Id, 'SELECT id FROM satellites WHERE tenant_id = $1 AND registered_by = $2', [tenantId, userId]),

    /**
     * What a deletion removes: counts for the preview and the audit entry. Detections are every
     * row of the satellite (stitched continuations and tentative ones included); promoted are
     * those of them the aggregation rule let through (`promoted AND NOT tentative`).
     */
    async deletionFacts(tenantId: string, id: string, tx: Db = db) {
      return tx.one(
        DeletionFacts,
        `SELECT c.chunks, c."audioBytes", d.detections, d.promoted
         FROM (SELECT count(*)::int AS chunks, COALESCE(sum(bytes), 0)::bigint AS "audioBytes" FROM chunks WHERE tenant_id = $1 AND satellite_id = $2) c,
              (SELECT count(*)::int AS detections, (count(*) FILTER (WHERE promoted AND NOT tentative))::int AS promoted
               FROM detections WHERE tenant_id = $1 AND satellite_id = $2) d`,
        [tenantId, id],
      );
    },

    chunkKeys: (tx: Db, tenantId: string, id: string) =>
      tx.query(ChunkKey, 'SELECT storage_key AS key FROM chunks WHERE tenant_id = $1 AND satellite_id = $2', [tenantId, id]),

    insertLogRequest: (tx: Db, r: { id: string; tenantId: string; satelliteId: string; at: Date; by: string | null }) =>
      tx.run('INSERT INTO satellite_logs (id, tenant_id, satellite_id, requested_at, requested_by) VALUES ($1, $2, $3, $4, $5)', [
        r.id,
        r.tenantId,
        r.satelliteId,
        r.at,
        r.by,
      ]),

    latestLogs: (tenantId: string, satelliteId: string) =>
      db.maybeOne(
        LatestLogs,
        `SELECT id AS "requestId", requested_at AS "requestedAt", received_at AS "receivedAt", lines FROM satellite_logs
         WHERE tenant_id = $1 AND satellite_id = $2 ORDER BY requested_at DESC, id DESC LIMIT 1`,
        [tenantId, satelliteId],
      ),

    /** The satellites a settings change at this scope reaches: one, a team's, or all. */
    reach: (tx: Db, scope: { tenantId?: string | null; satelliteId?: string | null }) =>
      scope.satelliteId
        ? tx.query(SatelliteRef, `SELECT ${REF} FROM satellites WHERE id = $1`, [scope.satelliteId])
        : scope.tenantId
          ? tx.query(SatelliteRef, `SELECT ${REF} FROM satellites WHERE tenant_id = $1 ORDER BY created_at, id`, [scope.tenantId])
          : tx.query(SatelliteRef, `SELECT ${REF} FROM satellites ORDER BY tenant_id, created_at, id`),

    async insertHistory(tx: Db, rows: HistoryRow[]) {
      if (rows.length === 0) return;
      await tx.run(
        `INSERT INTO satellite_config_history (id, satellite_id, tenant_id, changed_at, source, changed_by, changes, config)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::text[], $6::uuid[], $7::jsonb[], $8::jsonb[])`,
        [
          rows.map((r) => r.id),
          rows.map((r) => r.satelliteId),
          rows.map((r) => r.tenantId),
          rows.map((r) => r.changedAt),
          rows.map((r) => r.source),
          rows.map((r) => r.changedBy),
          rows.map((r) => JSON.stringify(r.changes)),
          rows.map((r) => JSON.stringify(r.config)),
        ],
      );
    },

    history: (tenantId: string, satelliteId: string, limit: number) =>
      db.query(
        HistoryRow,
        `SELECT id, satellite_id AS "satelliteId", tenant_id AS "tenantId", changed_at AS "changedAt", source, changed_by AS "changedBy", changes, config
         FROM satellite_config_history WHERE tenant_id = $1 AND satellite_id = $2 ORDER BY changed_at DESC, id DESC LIMIT $3`,
        [tenantId, satelliteId, limit],
      ),
  };
}

export type SatellitesRepo = ReturnType<typeof createSatellitesRepo>;
