import type { Db } from '../../infra/db/types.ts';

/**
 * Hub-wide counts for GET /system/status: one read-only statement over the tables of several
 * modules (teams, users, chunks, the detection day counts the detections module keeps), the one
 * place that reads them together (docs/decisions.md "System status").
 */
export function createSystemRepo(db: Db) {
  return {
    async counts(): Promise<{ tenants: number; users: number; chunks: number; listed: number; tentative: number }> {
      const row = await db.one<Record<string, string | number | null>>(
        `SELECT (SELECT count(*) FROM tenants) AS tenants,
                (SELECT count(*) FROM users) AS users,
                (SELECT count(*) FROM chunks) AS chunks,
                (SELECT coalesce(sum(listed), 0) FROM detection_day_counts WHERE dim = 'all') AS listed,
                (SELECT coalesce(sum(tentative), 0) FROM detection_day_counts WHERE dim = 'all') AS tentative`,
      );
      const n = (k: string) => Number(row[k] ?? 0);
      return { tenants: n('tenants'), users: n('users'), chunks: n('chunks'), listed: n('listed'), tentative: n('tentative') };
    },
    /** Readiness and status: the database answers. */
    ping: async () => void (await db.query('SELECT 1')),
  };
}
