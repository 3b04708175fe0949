/**
 * Recovering failed inference jobs (issue 21, docs/operations-jobs.md).
 *
 * - The worker marks a chunk whose job failed its LAST attempt (`failed`), and clears the mark when
 *   a later job for it succeeds (`recovered`): the database, not the queue's history, knows what
 *   failed, so both queue adapters behave alike and the mark survives restarts.
 * - `redrive()` (every 5 minutes in the processes that run ingest, and once at their start) takes
 *   failed chunks received within the start-up re-queue's horizon and enqueues each again under a
 *   new job id `${chunkId}.r${n}` (the queue is idempotent on ids and remembers failed ones), at
 *   most `maxRedrives` times, the n-th re-drive `spacing · growth^(n-1)` after the last failure.
 *   A chunk past the bound stays failed and listed until a hub admin retries it.
 * - `retry()` (the API and `chorus jobs retry`): marks failed chunks as asked for and enqueues them
 *   at once when this process reaches the workers' queue; else the hub's next tick does.
 * - The queue is the truth for what failed (issue 32): a job can fail for good while its mark
 *   cannot be written (the database away at that moment). `reconcile()` marks what the queue's
 *   history holds as failed and the database does not; the list and the re-drive tick run it
 *   first, so such a chunk is listed and re-driven under a new job id like any other.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { JobQueue } from '../../infra/queue/index.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { INFERENCE_QUEUE, type InferenceJob } from '../../protocol/jobs.ts';
import type { AudioService } from '../audio/service.ts';

type FailedChunkRow = Awaited<ReturnType<AudioService['inferenceFailures']['list']>>[number];

/** The start-up re-queue's horizon (src/ingest/requeue.ts REQUEUE_WINDOW_MS): older chunks are left to a hub admin. */
export const REDRIVE_HORIZON_MS = 24 * 3600_000;
export const REDRIVE_INTERVAL_MS = 5 * 60_000;
export const REDRIVE_DEFAULTS = { maxRedrives: 3, spacingMs: 5 * 60_000, growth: 4 };
const BATCH = 500;
/** Failed jobs read from the queue's history per reconcile (newest first). */
const QUEUE_HISTORY_READ = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RedriveOptions {
  /** Automatic re-drives per chunk (default 3). */
  maxRedrives?: number;
  /** Wait after a failure before the first automatic re-drive (default 5 minutes). */
  spacingMs?: number;
  /** Each further re-drive waits this many times longer (default 4: 5, 20, 80 minutes). */
  growth?: number;
  horizonMs?: number;
}

const present = (r: FailedChunkRow) => ({
  chunkId: r.chunkId,
  tenantId: r.tenantId,
  satelliteId: r.satelliteId,
  recordedAt: new Date(r.recordedAt).toISOString(),
  failedAt: new Date(r.failedAt).toISOString(),
  error: r.error,
  redrives: Number(r.redrives),
});
export type FailedJob = ReturnType<typeof present>;

export function createJobsService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  queue: Pick<JobQueue, 'enqueue' | 'failedJobs'>;
  /** The audio module's failure marks on chunks (AudioService.inferenceFailures). */
  failures: AudioService['inferenceFailures'];
  options?: RedriveOptions;
}) {
  const { db, clock, audit, queue } = deps;
  const repo = deps.failures;
  const opts = { ...REDRIVE_DEFAULTS, horizonMs: REDRIVE_HORIZON_MS, ...deps.options };

  /** Takes what is due (or only what was asked for) and enqueues it; answers how many were enqueued. */
  async function drive(auto: boolean): Promise<number> {
    let count = 0;
    for (;;) {
      const now = clock.now();
      const claimed = await repo.claim({
        now,
        auto: auto
          ? {
              since: new Date(now.getTime() - opts.horizonMs),
              maxRedrives: opts.maxRedrives,
              spacingSec: opts.spacingMs / 1000,
              growth: opts.growth,
            }
          : null,
        limit: BATCH,
      });
      for (const c of claimed) {
        const job: InferenceJob = { chunkId: c.id, tenantId: c.tenantId, satelliteId: c.satelliteId, storageKey: c.storageKey };
        try {
          await queue.enqueue(INFERENCE_QUEUE, `${c.id}.r${c.redrives}`, job);
          count++;
        } catch (err) {
          await repo.unclaim(c.id, c.error ?? `could not enqueue the re-drive: ${(err as Error)?.message ?? String(err)}`, clock.now());
        }
      }
      if (claimed.length < BATCH) return count;
    }
  }

  /** Marks the chunks of the queue's failed inference jobs whose mark is missing; answers how many. */
  async function reconcile(): Promise<number> {
    const failed = await queue.failedJobs<Partial<InferenceJob>>(INFERENCE_QUEUE, QUEUE_HISTORY_READ);
    const rows = failed.flatMap((j) => {
      const { tenantId, chunkId } = j.data;
      if (typeof tenantId !== 'string' || typeof chunkId !== 'string' || !UUID.test(tenantId) || !UUID.test(chunkId)) return [];
      return [
        { tenantId, chunkId, error: j.error || 'the job failed all its attempts', redrive: Number(/\.r(\d+)$/.exec(j.id)?.[1] ?? 0) },
      ];
    });
    if (rows.length === 0) return 0;
    return (await repo.markFromQueue(rows, clock.now())).length;
  }

  return {
    reconcile,

    /** The worker: the chunk's job failed its last attempt. */
    failed: (tenantId: string, chunkId: string, error: string) => repo.markFailed(tenantId, chunkId, error, clock.now()).then(() => {}),

    /** The worker: a job for a chunk marked failed succeeded after all. */
    recovered: (tenantId: string, chunkId: string) => repo.clearFailed(tenantId, chunkId).then(() => {}),

    /** Chunks whose inference failed for good, most recent failure first (the queue's failures marked first). */
    list: async (limit: number): Promise<FailedJob[]> => {
      await reconcile();
      return (await repo.list(limit)).map(present);
    },

    /** The periodic tick: what the queue says failed is marked, then automatic re-drives due and retries asked for elsewhere. */
    redrive: async () => {
      await reconcile();
      return drive(true);
    },

    /**
     * A hub admin's retry: failed chunks (all, or the ids named; others are ignored), audited as
     * one entry. `enqueue: false` where this process cannot reach the workers (the in-process queue
     * of a command-line process): they stay asked for, and the running hub's next tick enqueues them.
     */
    async retry(
      actor: Actor,
      chunkIds: readonly string[] | null,
      opts: { enqueue?: boolean } = {},
    ): Promise<{ retried: number; enqueued: boolean }> {
      const marked = await db.tx(async (tx) => {
        const rows = await repo.requestRetry(tx, chunkIds);
        if (rows.length > 0) {
          await audit.write(tx, actor, {
            action: 'admin.jobs_retried',
            tenantId: null,
            targetType: 'chunk',
            targetId: rows.length === 1 ? rows[0].id : null,
            details: { retried: rows.length, chunkIds: rows.slice(0, 100).map((r) => r.id), all: chunkIds === null },
          });
        }
        return rows;
      });
      const enqueued = opts.enqueue !== false;
      if (marked.length > 0 && enqueued) await drive(false);
      return { retried: marked.length, enqueued };
    },
  };
}

export type JobsService = ReturnType<typeof createJobsService>;
