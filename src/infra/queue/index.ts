import type { Config } from '../../config.ts';
import { createMemoryQueue } from './memory.ts';
import { createBullmqQueue } from './bullmq.ts';

export interface Job {
  id: string;
  data: Record<string, unknown>;
  /** 1 on the first run, 2 on the first retry, … */
  attempt: number;
}

export type JobHandler = (job: Job) => Promise<void>;

/**
 * The job queue (DESIGN.md §2): inference, exports, webhooks. Data travels as JSON (what a
 * Redis-backed queue stores), so pass plain values, not Buffers or Dates.
 */
export interface JobQueue {
  /**
   * Idempotent on jobId: enqueueing an id that is waiting, active, completed or failed adds
   * nothing (until that id has left the bounded history of finished jobs).
   */
  enqueue(queue: string, jobId: string, data: object): Promise<void>;
  /**
   * Starts workers; handler errors fail the job (recorded, retried with backoff up to the
   * attempts), never the worker. Calling it again adds more workers to the same queue.
   */
  process(queue: string, concurrency: number, handler: JobHandler): Promise<void>;
  /** `waiting` includes jobs waiting for a retry. */
  stats(queue: string): Promise<{ waiting: number; active: number; completed: number; failed: number }>;
  /** The same counts for GET /workers, with jobs waiting for a retry apart (`delayed`) instead of in `waiting`. */
  counts(queue: string): Promise<QueueCounts>;
  /** Stops taking jobs and waits for the running ones to settle. */
  close(): Promise<void>;
  readonly kind: 'memory' | 'bullmq';
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
}

export const QUEUE_DEFAULTS: Required<QueueOptions> = { attempts: 3, backoffMs: 1000, keepFinished: 100_000 };

/** Both adapters accept the same names and ids (BullMQ's rules: no ':' and no plain integer ids). */
export function checkQueueName(queue: string): void {
  if (typeof queue !== 'string' || !/^[A-Za-z0-9_.-]{1,100}$/.test(queue)) throw new Error(`invalid queue name: ${JSON.stringify(queue)}`);
}

export function checkJobId(jobId: string): void {
  if (typeof jobId !== 'string' || jobId.length === 0 || jobId.length > 256 || jobId.includes(':') || /^-?\d+$/.test(jobId)) {
    throw new Error(`invalid job id: ${JSON.stringify(jobId)} (1-256 characters, no ':', not a plain integer)`);
  }
}

export function checkConcurrency(concurrency: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
}

/** In-process by default; BullMQ on Redis when `REDIS_URL` is set (keys under the kv prefix). */
export function createQueue(config: Pick<Config, 'redisUrl' | 'kvPrefix'>, opts: QueueOptions = {}): JobQueue {
  const options = { ...QUEUE_DEFAULTS, ...opts };
  return config.redisUrl ? createBullmqQueue(config.redisUrl, `${config.kvPrefix}bull`, options) : createMemoryQueue(options);
}
