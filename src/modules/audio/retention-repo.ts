import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/** Per team: the cutoff fixed when the run started and what the run did there so far. */
export interface RetentionTeam {
  days: number;
  cutoff: string;
  removed: number;
  bytes: number;
  kept: number;
}

export const RetentionRunRow = shape({
  id: col.text(),
  trigger: col.oneOf(['schedule', 'manual'] as const),
  day: col.nullable(col.text()),
  status: col.oneOf(['running', 'finished', 'failed'] as const),
  startedAt: col.date(),
  finishedAt: col.nullable(col.date()),
  startedBy: col.nullable(col.text()),
  teams: col.json<Record<string, RetentionTeam>>(),
  chunksRemoved: col.int(),
  bytesFreed: col.num(),
  chunksKept: col.int(),
  cursorTenantId: col.nullable(col.text()),
  cursorRecordedAt: col.nullable(col.date()),
  cursorChunkId: col.nullable(col.text()),
  owner: col.nullable(col.text()),
  leaseUntil: col.nullable(col.date()),
  error: col.nullable(col.text()),
});
export type RetentionRunRow = RowOf<typeof RetentionRunRow>;

/** A chunk past its team's cutoff, still holding audio, and whether something keeps it. */
export const RetentionCandidate = shape({
  id: col.text(),
  recordedAt: col.date(),
  storageKey: col.text(),
  bytes: col.int(),
  keep: col.bool(),
});
export type RetentionCandidate = RowOf<typeof RetentionCandidate>;

const Id = shape({ id: col.text() });
const Found = shape({ found: col.int() });
const Marked = shape({ id: col.text(), bytes: col.int() });

const RUN = `id, trigger, to_char(day, 'YYYY-MM-DD') AS day, status, started_at AS "startedAt", finished_at AS "finishedAt",
  started_by AS "startedBy", teams, chunks_removed AS "chunksRemoved", bytes_freed::float8 AS "bytesFreed", chunks_kept AS "chunksKept",
  cursor_tenant_id AS "cursorTenantId", cursor_recorded_at AS "cursorRecordedAt", cursor_chunk_id AS "cursorChunkId",
  owner, lease_until AS "leaseUntil", error`;

/**
 * What keeps a detection's audio (docs/decisions.md "Audio retention"): a confirmed or rejected
 * consensus, a confirm or reject vote, the team's pin, an annotation or a comment. `m` is the
 * detection looked at.
 */
const PROTECTED = `(m.verification_status IN ('confirmed', 'rejected') OR m.pinned_at IS NOT NULL
  OR EXISTS (SELECT 1 FROM detection_votes v WHERE v.detection_id = m.id AND v.vote IN ('confirm', 'reject'))
  OR EXISTS (SELECT 1 FROM detection_annotations a WHERE a.detection_id = m.id)
  OR EXISTS (SELECT 1 FROM detection_comments k WHERE k.detection_id = m.id))`;

export function createRetentionRepo(db: Db) {
  return {
    /** Every team, in id order (the order a run walks them). */
    teamIds: async () => (await db.query(Id, 'SELECT id FROM tenants ORDER BY id')).map((r) => r.id),

    scheduledExists: async (day: string) =>
      (await db.maybeOne(Found, `SELECT 1 AS found FROM retention_runs WHERE trigger = 'schedule' AND day = $1::date`, [day])) !== null,

    /**
     * Starts a run unless one is running, or (scheduled) the day is claimed already: the database's
     * unique indexes decide between processes. Null when it did not start.
     */
    insert: (r: {
      id: string;
      trigger: 'schedule' | 'manual';
      day: string | null;
      startedAt: Date;
      startedBy: string | null;
      teams: Record<string, RetentionTeam>;
      cursorTenantId: string | null;
      owner: string;
      leaseUntil: Date;
    }) =>
      db.maybeOne(
        RetentionRunRow,
        `INSERT INTO retention_runs (id, trigger, day, status, started_at, started_by, teams, cursor_tenant_id, owner, lease_until)
         VALUES ($1, $2, $3::date, 'running', $4, $5, $6, $7, $8, $9)
         ON CONFLICT DO NOTHING
         RETURNING ${RUN}`,
        [r.id, r.trigger, r.day, r.startedAt, r.startedBy, JSON.stringify(r.teams), r.cursorTenantId, r.owner, r.leaseUntil],
      ),

    running: () => db.maybeOne(RetentionRunRow, `SELECT ${RUN} FROM retention_runs WHERE status = 'running'`),

    /** Takes over a running run whose lease ran out (its process stopped); null when another process was quicker. */
    takeOver: (id: string, owner: string, now: Date, leaseUntil: Date) =>
      db.maybeOne(
        RetentionRunRow,
        `UPDATE retention_runs SET owner = $2, lease_until = $4
         WHERE id = $1 AND status = 'running' AND (lease_until IS NULL OR lease_until <= $3)
         RETURNING ${RUN}`,
        [id, owner, now, leaseUntil],
      ),

    /**
     * The next chunks of a team recorded before the cutoff that still hold audio, after the cursor,
     * each with whether something keeps it: a detection on it that is protected, or that belongs to
     * a stitched call (the representative and its continuations) with a protected detection.
     */
    batch: (tenantId: string, cutoff: Date, after: { recordedAt: Date; id: string } | null, limit: number) =>
      db.query(
        RetentionCandidate,
        `WITH b AS (
           SELECT c.id, c.recorded_at, c.storage_key, c.bytes FROM chunks c
           WHERE c.tenant_id = $1 AND c.audio_deleted_at IS NULL AND c.recorded_at < $2
             AND ($3::timestamptz IS NULL OR (c.recorded_at, c.id) > ($3::timestamptz, $4::uuid))
           ORDER BY c.recorded_at, c.id
           LIMIT $5
         )
         SELECT b.id, b.recorded_at AS "recordedAt", b.storage_key AS "storageKey", b.bytes,
           EXISTS (
             SELECT 1 FROM detections d
             JOIN detections m ON m.tenant_id = d.tenant_id AND (m.id = coalesce(d.call_id, d.id) OR m.call_id = coalesce(d.call_id, d.id))
             WHERE d.chunk_id = b.id AND d.tenant_id = $1 AND ${PROTECTED}
           ) AS keep
         FROM b ORDER BY b.recorded_at, b.id`,
        [tenantId, cutoff, after?.recordedAt ?? null, after?.id ?? null, limit],
      ),

    /** Marks chunks whose object was deleted; answers the rows this statement marked (a redone batch counts once). */
    markGone: (tx: Db, tenantId: string, ids: string[], at: Date) =>
      ids.length === 0
        ? Promise.resolve([])
        : tx.query(
            Marked,
            `UPDATE chunks SET audio_deleted_at = $3, audio_removed_reason = 'retention' WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND audio_deleted_at IS NULL
             RETURNING id, bytes`,
            [tenantId, ids, at],
          ),

    /** Records progress while this process still holds the run; false when it lost it. */
    progress: async (
      tx: Db,
      id: string,
      owner: string,
      p: {
        teams: Record<string, RetentionTeam>;
        cursorTenantId: string | null;
        cursorRecordedAt: Date | null;
        cursorChunkId: string | null;
        leaseUntil: Date;
      },
    ) =>
      (await tx.run(
        `UPDATE retention_runs SET teams = $3, cursor_tenant_id = $4, cursor_recorded_at = $5, cursor_chunk_id = $6, lease_until = $7,
             chunks_removed = (SELECT coalesce(sum((t->>'removed')::int), 0) FROM jsonb_each($3::jsonb) AS e(k, t)),
             bytes_freed = (SELECT coalesce(sum((t->>'bytes')::bigint), 0) FROM jsonb_each($3::jsonb) AS e(k, t)),
             chunks_kept = (SELECT coalesce(sum((t->>'kept')::int), 0) FROM jsonb_each($3::jsonb) AS e(k, t))
           WHERE id = $1 AND owner = $2 AND status = 'running'`,
        [id, owner, JSON.stringify(p.teams), p.cursorTenantId, p.cursorRecordedAt, p.cursorChunkId, p.leaseUntil],
      )) > 0,

    /** Hands the run back at once (a graceful stop): another process may take it over on its next tick. */
    release: (id: string, owner: string, now: Date) =>
      db.run(`UPDATE retention_runs SET lease_until = $3 WHERE id = $1 AND owner = $2 AND status = 'running'`, [id, owner, now]),

    finish: (tx: Db, id: string, owner: string, status: 'finished' | 'failed', error: string | null, at: Date) =>
      tx.maybeOne(
        RetentionRunRow,
        `UPDATE retention_runs SET status = $3, error = $4, finished_at = $5, lease_until = NULL
         WHERE id = $1 AND owner = $2 AND status = 'running'
         RETURNING ${RUN}`,
        [id, owner, status, error, at],
      ),

    list: (limit: number) =>
      db.query(RetentionRunRow, `SELECT ${RUN} FROM retention_runs ORDER BY started_at DESC, id DESC LIMIT $1`, [limit]),
  };
}

export type RetentionRepo = ReturnType<typeof createRetentionRepo>;
