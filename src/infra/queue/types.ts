/** The job queue port (DESIGN.md §2); adapters import this file, index.ts only picks one. */

/** `data` is what the producer enqueued, through JSON; one queue name carries one payload type (protocol/jobs.ts). */
export interface Job<T = Record<string, unknown>> {
  id: string;
  data: T;
  /** 1 on the first run, 2 on the first retry, … */
  attempt: number;
  /** Runs the job gets before it fails for good: an error in run `maxAttempts` is the last (the worker records it). */
  maxAttempts: number;
}

export type JobHandler<T = Record<string, unknown>> = (job: Job<T>) => Promise<void>;

/**
 * The job queue (DESIGN.md §2): inference, exports, webhooks. Data travels as JSON (what a
 * Redis-backed queue stores), so pass plain values, not Buffers or Dates.
 */
export interface JobQueue {
  /**
   * Idempotent on jobId: enqueueing an id that is waiting, active, completed or failed adds
   * nothing (until that id has left the bounded history of finished jobs).
   */
  enqueue<T extends object>(queue: string, jobId: string, data: T, opts?: EnqueueOptions): Promise<void>;
  /**
   * Starts workers; handler errors fail the job (recorded, retried with backoff up to the
   * attempts), never the worker. Calling it again adds more workers to the same queue.
   */
  process<T extends object = Record<string, unknown>>(queue: string, concurrency: number, handler: JobHandler<T>): Promise<void>;
  /** `waiting` includes jobs waiting for a retry. */
  stats(queue: string): Promise<{ waiting: number; active: number; completed: number; failed: number }>;
  /** The same counts for GET /workers, with jobs waiting for a retry apart (`delayed`) instead of in `waiting`. */
  counts(queue: string): Promise<QueueCounts>;
  /**
   * Jobs that failed all their attempts, most recent first, at most `limit` (the queue's bounded
   * history of finished jobs): what failed, whatever could be written elsewhere at the time.
   */
  failedJobs<T extends object = Record<string, unknown>>(queue: string, limit: number): Promise<FailedJobEntry<T>[]>;
  /** Stops taking jobs and waits for the running ones to settle. */
  close(): Promise<void>;
  readonly kind: 'memory' | 'bullmq';
}

export interface FailedJobEntry<T> {
  id: string;
  data: T;
  /** The last attempt's error. */
  error: string;
}

export interface EnqueueOptions {
  /** The job waits this long before a worker may take it (a retry the handler schedules itself, e.g. after Retry-After). */
  delayMs?: number;
}

export interface QueueCounts {
  waiting: number;
  active: number;
  completed: number;
  failed: number;
  delayed: number;
}

export interface QueueOptions {
  /** Runs per job before it is failed for good (default 3). */
  attempts?: number;
  /** Exponential backoff base: retry n waits backoffMs · 2^(n-1) (default 1000). */
  backoffMs?: number;
  /** How many finished job ids are remembered per queue for idempotency and stats (default 100 000). */
  keepFinished?: number;
  /** The in-process queue's stall report: a job still running after this long is logged once (default 120 000). */
  stalledAfterMs?: number;
  /**
   * BullMQ: a running job's lock lasts this long and is renewed at half of it; a job whose lock lapsed
   * (its worker died or stalled) is handed to another worker at the next check, this often (default 30 000).
   */
  lockMs?: number;
  /** Stalled jobs and jobs failed for good are logged here (none by default). */
  log?: QueueLog;
}

export interface QueueLog {
  warn(obj: object, msg: string): void;
}

/**
 * A run that failed because a part the job needs is away (the database: PartUnavailable) is not one
 * of the job's attempts: it is run again after a wait that doubles from backoffMs up to this, for
 * as long as the part stays away (issue 32: an outage of minutes no longer fails every job in it).
 */
export const PASSING_FAILURE_MAX_WAIT_MS = 60_000;

/** The wait before the n-th run again after a passing failure (n from 1). */
export function passingWait(backoffMs: number, n: number): number {
  return Math.min(backoffMs * 2 ** Math.min(n - 1, 30), PASSING_FAILURE_MAX_WAIT_MS);
}

export const QUEUE_DEFAULTS: Required<QueueOptions> = {
  attempts: 3,
  backoffMs: 1000,
  keepFinished: 100_000,
  stalledAfterMs: 120_000,
  lockMs: 30_000,
  log: { warn() {} },
};
