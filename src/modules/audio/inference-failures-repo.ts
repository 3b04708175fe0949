import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/** A chunk whose inference job failed its last attempt (columns of `chunks`, migration 0020). */
export const FailedChunkRow = shape({
  chunkId: col.text(),
  tenantId: col.text(),
  satelliteId: col.text(),
  recordedAt: col.date(),
  failedAt: col.date(),
  error: col.nullable(col.text()),
  redrives: col.int(),
});
export type FailedChunkRow = RowOf<typeof FailedChunkRow>;

/** A chunk taken for a re-drive: what its new job carries. */
export const ClaimedChunk = shape({
  id: col.text(),
  tenantId: col.text(),
  satelliteId: col.text(),
  storageKey: col.text(),
  /** Re-drives including this one: the job id's suffix. */
  redrives: col.int(),
  error: col.nullable(col.text()),
});
export type ClaimedChunk = RowOf<typeof ClaimedChunk>;

const RetryRequested = shape({ id: col.text(), tenantId: col.text() });

export interface ClaimRule {
  now: Date;
  /** Automatic re-drives: chunks received since then, re-driven fewer than `maxRedrives` times, past their spacing. */
  auto: { since: Date; maxRedrives: number; spacingSec: number; growth: number } | null;
  limit: number;
}

/**
 * The failure marks on `chunks`, across teams: re-driving failed jobs is a hub job and their list
 * a hub admin's (every function names the hub-wide scope by not taking a team). The chunks table
 * is this module's; the jobs module keeps the rules of re-driving and reaches the marks through
 * the audio service (`inferenceFailures`).
 */
export function createInferenceFailuresRepo(db: Db) {
  return {
    markFailed: (tenantId: string, chunkId: string, error: string, at: Date) =>
      db.run('UPDATE chunks SET inference_failed_at = $3, inference_error = $4 WHERE tenant_id = $1 AND id = $2', [
        tenantId,
        chunkId,
        at,
        error.slice(0, 2000),
      ]),

    /**
     * Marks what the queue says failed for good, where the mark is missing: the chunk is not
     * classified, not marked, and not re-driven past that job (`redrive`: the job id's `.rN`, 0
     * for the first). Answers the chunks marked. One statement for the whole list.
     */
    markFromQueue: (failed: readonly { tenantId: string; chunkId: string; error: string; redrive: number }[], at: Date) =>
      db.query(
        RetryRequested,
        `UPDATE chunks c SET inference_failed_at = $5, inference_error = f.error
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[]) AS f(tenant_id, id, error, redrive)
         WHERE c.tenant_id = f.tenant_id AND c.id = f.id AND c.inference_failed_at IS NULL AND c.classified_at IS NULL
           AND c.inference_redrives <= f.redrive AND c.audio_deleted_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM detections d WHERE d.chunk_id = c.id)
         RETURNING c.id, c.tenant_id AS "tenantId"`,
        [
          failed.map((f) => f.tenantId),
          failed.map((f) => f.chunkId),
          failed.map((f) => f.error.slice(0, 2000)),
          failed.map((f) => f.redrive),
          at,
        ],
      ),

    clearFailed: (tenantId: string, chunkId: string) =>
      db.run(
        `UPDATE chunks SET inference_failed_at = NULL, inference_error = NULL, inference_retry_requested = false
         WHERE tenant_id = $1 AND id = $2 AND inference_failed_at IS NOT NULL`,
        [tenantId, chunkId],
      ),

    list: (limit: number) =>
      db.query(
        FailedChunkRow,
        `SELECT id AS "chunkId", tenant_id AS "tenantId", satellite_id AS "satelliteId", recorded_at AS "recordedAt",
           inference_failed_at AS "failedAt", inference_error AS error, inference_redrives AS redrives
         FROM chunks WHERE inference_failed_at IS NOT NULL
         ORDER BY inference_failed_at DESC, id DESC LIMIT $1`,
        [limit],
      ),

    /** Marks failed chunks (all, or those named) for a retry; answers the chunks marked. */
    requestRetry: (tx: Db, chunkIds: readonly string[] | null) =>
      tx.query(
        RetryRequested,
        `UPDATE chunks SET inference_retry_requested = true
         WHERE inference_failed_at IS NOT NULL AND ($1::uuid[] IS NULL OR id = ANY ($1::uuid[]))
         RETURNING id, tenant_id AS "tenantId"`,
        [chunkIds],
      ),

    /**
     * Takes failed chunks for a re-drive in one statement (rows another process is taking are
     * skipped): those asked for, and with `auto` those due. A taken chunk is no longer marked
     * failed; its count goes up by one. Spacing: `spacingSec · growth^redrives` after the failure.
     */
    claim: (rule: ClaimRule) =>
      db.query(
        ClaimedChunk,
        `UPDATE chunks c SET inference_failed_at = NULL, inference_retry_requested = false, inference_redrives = c.inference_redrives + 1
         WHERE c.inference_failed_at IS NOT NULL AND c.id IN (
           SELECT id FROM chunks
           WHERE inference_failed_at IS NOT NULL
             AND (inference_retry_requested OR ($2::boolean AND received_at >= $3 AND inference_redrives < $4 AND audio_deleted_at IS NULL
               AND inference_failed_at + ($5::float8 * power($6::float8, inference_redrives)) * interval '1 second' <= $1))
           ORDER BY inference_failed_at, id
           LIMIT $7
           FOR UPDATE SKIP LOCKED
         )
         RETURNING c.id, c.tenant_id AS "tenantId", c.satellite_id AS "satelliteId", c.storage_key AS "storageKey",
           c.inference_redrives AS redrives, c.inference_error AS error`,
        [
          rule.now,
          rule.auto !== null,
          rule.auto?.since ?? rule.now,
          rule.auto?.maxRedrives ?? 0,
          rule.auto?.spacingSec ?? 0,
          rule.auto?.growth ?? 1,
          rule.limit,
        ],
      ),

    /** A taken chunk whose job could not be enqueued is failed again (the next tick tries it). */
    unclaim: (chunkId: string, error: string, at: Date) =>
      db.run(
        `UPDATE chunks SET inference_failed_at = $2, inference_error = $3, inference_redrives = greatest(inference_redrives - 1, 0)
         WHERE id = $1 AND inference_failed_at IS NULL`,
        [chunkId, at, error.slice(0, 2000)],
      ),
  };
}

export type InferenceFailures = ReturnType<typeof createInferenceFailuresRepo>;
