import type { Db } from '../../infra/db/types.ts';
import { col, shape } from '../../infra/db/shape.ts';

const Counts = shape({ tenants: col.num(), users: col.num(), chunks: col.num(), listed: col.num(), tentative: col.num() });
const Found = shape({ found: col.int() });

/**
 * Hub-wide counts for GET /system/status: one read-only statement over the tables of several
 * modules (teams, users, chunks, the detection day counts the detections module keeps), the one
 * place that reads them together (docs/decisions.md "System status").
 */
export function createSystemRepo(db: Db) {
  return {
    counts: () =>
      db.one(
        Counts,
        `SELECT (SELECT count(*) FROM tenants) AS tenants,
                (SELECT count(*) FROM users) AS users,
                (SELECT count(*) FROM chunks) AS chunks,
                (SELECT coalesce(sum(listed), 0) FROM detection_day_counts WHERE dim = 'all') AS listed,
                (SELECT coalesce(sum(tentative), 0) FROM detection_day_counts WHERE dim = 'all') AS tentative`,
      ),
    /** Readiness and status: the database answers. */
    ping: async () => void (await db.one(Found, 'SELECT 1 AS found')),
  };
}
