import type { Db } from '../../infra/db/index.ts';
import type { DeviceFacts } from '../../core/permissions.ts';

export interface SatelliteRef {
  id: string;
  tenantId: string;
  name: string;
  registeredBy: string | null;
  configLocked: boolean;
}

export interface HistoryRow {
  id: string;
  satelliteId: string;
  tenantId: string;
  changedAt: Date;
  source: 'web' | 'device' | 'team' | 'hub';
  changedBy: string | null;
  changes: Record<string, { from: unknown; to: unknown }>;
  config: Record<string, unknown>;
}

const REF = `id, tenant_id AS "tenantId", name, registered_by AS "registeredBy", config_locked AS "configLocked"`;

export function createSatellitesRepo(db: Db) {
  return {
    /** Device rule facts: the team, the registrant and the team's device_policy (team, else hub, else members). */
    deviceFacts: (satelliteId: string) =>
      db.maybeOne<DeviceFacts>(
        `SELECT s.tenant_id AS "tenantId", s.registered_by AS "registeredBy",
           COALESCE(
             (SELECT value #>> '{}' FROM settings WHERE level = 'team' AND scope_id = s.tenant_id::text AND key = 'device_policy' AND value IS NOT NULL),
             (SELECT value #>> '{}' FROM settings WHERE level = 'hub' AND scope_id = '' AND key = 'device_policy' AND value IS NOT NULL),
             'members') AS "devicePolicy"
         FROM satellites s WHERE s.id = $1`,
        [satelliteId],
      ),

    find: (tenantId: string, id: string, tx: Db = db) =>
      tx.maybeOne<SatelliteRef>(`SELECT ${REF} FROM satellites WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),

    /** The satellites a settings change at this scope reaches: one, a team's, or all. */
    reach: (tx: Db, scope: { tenantId?: string | null; satelliteId?: string | null }) =>
      scope.satelliteId
        ? tx.query<SatelliteRef>(`SELECT ${REF} FROM satellites WHERE id = $1`, [scope.satelliteId])
        : scope.tenantId
          ? tx.query<SatelliteRef>(`SELECT ${REF} FROM satellites WHERE tenant_id = $1 ORDER BY created_at, id`, [scope.tenantId])
          : tx.query<SatelliteRef>(`SELECT ${REF} FROM satellites ORDER BY tenant_id, created_at, id`),

    async insertHistory(tx: Db, rows: HistoryRow[]) {
      if (rows.length === 0) return;
      await tx.query(
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
      db.query<HistoryRow>(
        `SELECT id, satellite_id AS "satelliteId", tenant_id AS "tenantId", changed_at AS "changedAt", source, changed_by AS "changedBy", changes, config
         FROM satellite_config_history WHERE tenant_id = $1 AND satellite_id = $2 ORDER BY changed_at DESC, id DESC LIMIT $3`,
        [tenantId, satelliteId, limit],
      ),
  };
}

export type SatellitesRepo = ReturnType<typeof createSatellitesRepo>;
