import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/**
 * Stored audio per satellite (0024: audio_storage_totals and audio_storage_hours, kept by
 * triggers on `chunks`): bytes still held, chunks, first arrival, and the net bytes (arrived minus
 * removed by retention) in the hours from `since` on.
 */
export const SatelliteUsageRow = shape({
  tenantId: col.text(),
  satelliteId: col.text(),
  // bigint and numeric sums arrive as numbers (src/infra/db): our sums stay far below 2^53.
  bytes: col.num(),
  chunks: col.num(),
  firstReceivedAt: col.nullable(col.date()),
  recentNetBytes: col.num(),
});
export type SatelliteUsageRow = RowOf<typeof SatelliteUsageRow>;

const SELECT = `SELECT t.tenant_id AS "tenantId", t.satellite_id AS "satelliteId", t.bytes, t.chunks, t.first_received_at AS "firstReceivedAt",
    coalesce(h.net, 0) AS "recentNetBytes"
  FROM audio_storage_totals t`;

export function createUsageRepo(db: Db) {
  return {
    /** One team's satellites that ever stored audio. */
    ofTeam: (tenantId: string, since: Date) =>
      db.query(
        SatelliteUsageRow,
        `${SELECT}
           LEFT JOIN (
             SELECT satellite_id, sum(added_bytes - removed_bytes) AS net FROM audio_storage_hours
             WHERE tenant_id = $1 AND hour >= $2 GROUP BY satellite_id
           ) h ON h.satellite_id = t.satellite_id
           WHERE t.tenant_id = $1
           ORDER BY t.satellite_id`,
        [tenantId, since],
      ),

    /** Every satellite of every team (hub admins' view): a row per satellite, a few thousand at most. */
    ofHub: (since: Date) =>
      db.query(
        SatelliteUsageRow,
        `${SELECT}
           LEFT JOIN (
             SELECT tenant_id, satellite_id, sum(added_bytes - removed_bytes) AS net FROM audio_storage_hours
             WHERE hour >= $1 GROUP BY tenant_id, satellite_id
           ) h ON h.tenant_id = t.tenant_id AND h.satellite_id = t.satellite_id
           ORDER BY t.tenant_id, t.satellite_id`,
        [since],
      ),
  };
}
