import { createRequire } from 'node:module';
import type * as Bull from 'bullmq';
import type { Queue, Worker } from 'bullmq';
import { PartUnavailable } from '../../core/errors.ts';
import { batched } from '../../core/batch.ts';
import { checkConcurrency, checkJobId, checkQueueName } from './checks.ts';
import { passingWait, QUEUE_DEFAULTS, type JobHandler, type JobQueue, type QueueOptions } from './types.ts';

/**
 * BullMQ on Redis. Every key lives under `prefix` (the hub's kv prefix + "bull"), so several
 * hubs or test runs can share one Redis. Finished jobs are trimmed to `keepFinished` per queue.
 */
/** BullMQ (and ioredis under it) takes most of a second to load: only a process with Redis loads it. */
const loadBullmq = () => createRequire(import.meta.url)('bullmq') as typeof Bull;

export function createBullmqQueue(url: string, prefix: string, opts: QueueOptions = {}): JobQueue {
  const { DelayedError, Queue, Worker } = loadBullmq();
  const { attempts, backoffMs, keepFinished, lockMs, log } = { ...QUEUE_DEFAULTS, ...opts };
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  let closed = false;
  /** Jobs enqueued together go to Redis as one addBulk (one round trip), per queue. */
  const adders = new Map<string, (job: { jobId: string; data: object; delayMs?: number }) => Promise<void>>();

  const adderOf = (name: string) => {
    let add = adders.get(name);
    if (!add) {
      add = batched(async (jobs: Array<{ jobId: string; data: object; delayMs?: number }>) => {
        await queueOf(name).addBulk(
          jobs.map((j) => ({
            name,
            data: j.data,
            opts: {
              jobId: j.jobId,
              ...(j.delayMs ? { delay: j.delayMs } : {}),
              attempts,
              backoff: { type: 'exponential', delay: backoffMs },
              removeOnComplete: { count: keepFinished },
              removeOnFail: { count: keepFinished },
            },
          })),
        );
        return jobs.map(() => undefined);
      });
      adders.set(name, add);
    }
    return add;
  };

  const queueOf = (name: string): Queue => {
    let q = queues.get(name);
    if (!q) {
      // Producers fail fast when Redis is away; workers (blocking) wait for it to come back.
      q = new Queue(name, { connection: { url, maxRetriesPerRequest: 2 }, prefix });
      q.on('error', () => {});
      queues.set(name, q);
    }
    return q;
  };

  return {
    kind: 'bullmq',

    async enqueue(name, jobId, data, opts) {
      checkQueueName(name);
      checkJobId(jobId);
      if (closed) throw new Error('queue is closed');
      // An id that already exists (waiting, delayed, active, completed or failed) is ignored by BullMQ.
      await adderOf(name)({ jobId, data: data ?? {}, delayMs: opts?.delayMs });
    },

    async process<T extends object = Record<string, unknown>>(name: string, concurrency: number, handler: JobHandler<T>) {
      checkQueueName(name);
      checkConcurrency(concurrency);
      if (closed) throw new Error('queue is closed');
      const worker = new Worker(
        name,
        async (job, token) => {
          try {
            await handler({ id: job.id!, data: job.data as T, attempt: job.attemptsMade + 1, maxAttempts: job.opts.attempts ?? attempts });
          } catch (err) {
            if (!(err instanceof PartUnavailable)) throw err;
            // Not an attempt: the job goes back to wait (DelayedError leaves attemptsMade as it was).
            // Runs started beyond those made are the passing failures so far, this one included.
            const passing = Math.max(1, job.attemptsStarted - job.attemptsMade);
            log.warn(
              { queue: name, jobId: job.id, part: err.part, retries: passing },
              `queue: job waits for the ${err.part}; it runs again later, not counted as an attempt`,
            );
            await job.moveToDelayed(Date.now() + passingWait(backoffMs, passing), token);
            throw new DelayedError();
          }
        },
        { connection: { url, maxRetriesPerRequest: null }, prefix, concurrency, lockDuration: lockMs, stalledInterval: lockMs },
      );
      // Connection trouble is retried by the worker; an unhandled 'error' event would end the process.
      worker.on('error', () => {});
      // A stalled job lost its lock (its worker died or was blocked too long): BullMQ gives it to
      // another worker, or fails it past maxStalledCount.
      worker.on('stalled', (jobId) => log.warn({ queue: name, jobId }, 'queue: job stalled; it is handed to another worker'));
      worker.on('failed', (job, err) => {
        if (job && job.attemptsMade >= (job.opts.attempts ?? attempts))
          log.warn({ queue: name, jobId: job.id, attempts: job.attemptsMade, error: err.message }, 'queue: job failed all its attempts');
      });
      workers.push(worker);
      await worker.waitUntilReady();
    },

    async stats(name) {
      checkQueueName(name);
      const c = await queueOf(name).getJobCounts('waiting', 'delayed', 'prioritized', 'waiting-children', 'active', 'completed', 'failed');
      return {
        waiting: (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) + (c['waiting-children'] ?? 0),
        active: c.active ?? 0,
        completed: c.completed ?? 0,
        failed: c.failed ?? 0,
      };
    },

    async counts(name) {
      checkQueueName(name);
      const c = await queueOf(name).getJobCounts('waiting', 'delayed', 'prioritized', 'waiting-children', 'active', 'completed', 'failed');
      return {
        waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c['waiting-children'] ?? 0),
        active: c.active ?? 0,
        completed: c.completed ?? 0,
        failed: c.failed ?? 0,
        delayed: c.delayed ?? 0,
      };
    },

    async failedJobs<T extends object>(name: string, limit: number) {
      checkQueueName(name);
      if (limit <= 0) return [];
      // Newest first (BullMQ's failed set is ordered by when each failed).
      const jobs = await queueOf(name).getFailed(0, limit - 1);
      return jobs.filter((j) => j?.id).map((j) => ({ id: j.id!, data: j.data as T, error: j.failedReason ?? '' }));
    },

    async close() {
      closed = true;
      // Workers first: they finish their running jobs, then the producers' connections go.
      await Promise.allSettled(workers.map((w) => w.close()));
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
      workers.length = 0;
      queues.clear();
    },
  };
}
