import { checkConcurrency, checkJobId, checkQueueName } from './checks.ts';
import { PartUnavailable } from '../../core/errors.ts';
import { passingWait, QUEUE_DEFAULTS, type JobHandler, type JobQueue, type QueueOptions } from './types.ts';

interface Entry {
  id: string;
  data: Record<string, unknown>;
  /** Runs started so far. */
  attempts: number;
  /** Runs in a row that failed because a part was away (not counted as attempts). */
  passing: number;
  state: 'waiting' | 'delayed' | 'active';
}

interface Worker {
  concurrency: number;
  running: number;
  handler: JobHandler;
}

interface State {
  /** Waiting, delayed (between retries) and active jobs by id. */
  jobs: Map<string, Entry>;
  waiting: Entry[];
  /** Finished ids in finishing order, trimmed to `keepFinished` each. */
  completed: Set<string>;
  /** Job id → what failed and why, oldest first. */
  failed: Map<string, { data: object; error: string }>;
  workers: Worker[];
  active: number;
}

/**
 * The in-process queue: the same semantics as the BullMQ adapter (idempotent ids, attempts
 * with exponential backoff, bounded history of finished ids), kept in memory. Jobs still
 * waiting when the process stops are lost; producers re-enqueue what they find unfinished.
 */
export function createMemoryQueue(opts: QueueOptions = {}): JobQueue {
  const { attempts, backoffMs, keepFinished, stalledAfterMs, log } = { ...QUEUE_DEFAULTS, ...opts };
  const queues = new Map<string, State>();
  const running = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const stateOf = (name: string): State => {
    let q = queues.get(name);
    if (!q) {
      q = { jobs: new Map(), waiting: [], completed: new Set(), failed: new Map(), workers: [], active: 0 };
      queues.set(name, q);
    }
    return q;
  };

  /** Forgets the oldest finished ids past the bound (Sets and Maps iterate in insertion order). */
  const trim = (finished: Set<string> | Map<string, unknown>) => {
    while (finished.size > keepFinished) finished.delete(finished.keys().next().value as string);
  };

  /** Real time, not the injected clock: a retry waits for the receiver, not for the test's clock. */
  function later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    timers.add(timer);
  }

  function pump(name: string, q: State): void {
    if (closed) return;
    for (const worker of q.workers) {
      while (worker.running < worker.concurrency && q.waiting.length > 0) {
        run(name, q, worker, q.waiting.shift()!);
      }
    }
  }

  function run(name: string, q: State, worker: Worker, entry: Entry): void {
    entry.state = 'active';
    entry.attempts += 1;
    worker.running += 1;
    q.active += 1;
    const job = { id: entry.id, data: entry.data, attempt: entry.attempts, maxAttempts: attempts };
    // BullMQ's 'stalled' has no in-process cause (a dead worker takes the queue with it); what is
    // left to report is a job that runs far longer than jobs do: a hung handler.
    const started = performance.now();
    const stallTimer = setTimeout(
      () =>
        log.warn(
          { queue: name, jobId: entry.id, attempt: entry.attempts, ms: Math.round(performance.now() - started) },
          'queue: job stalled; still running',
        ),
      stalledAfterMs,
    );
    stallTimer.unref();
    const p = Promise.resolve()
      .then(() => worker.handler(job))
      .then(
        () => {
          q.jobs.delete(entry.id);
          q.completed.add(entry.id);
          trim(q.completed);
        },
        (err: unknown) => {
          if (err instanceof PartUnavailable && !closed) {
            entry.attempts -= 1;
            entry.passing += 1;
            entry.state = 'delayed';
            log.warn(
              { queue: name, jobId: entry.id, part: err.part, retries: entry.passing },
              `queue: job waits for the ${err.part}; it runs again later, not counted as an attempt`,
            );
            later(passingWait(backoffMs, entry.passing), () => {
              entry.state = 'waiting';
              q.waiting.push(entry);
              pump(name, q);
            });
            return;
          }
          entry.passing = 0;
          if (entry.attempts < attempts && !closed) {
            entry.state = 'delayed';
            later(backoffMs * 2 ** (entry.attempts - 1), () => {
              entry.state = 'waiting';
              q.waiting.push(entry);
              pump(name, q);
            });
          } else {
            q.jobs.delete(entry.id);
            q.failed.set(entry.id, { data: entry.data, error: err instanceof Error ? err.message : String(err) });
            trim(q.failed);
            if (entry.attempts >= attempts)
              log.warn(
                { queue: name, jobId: entry.id, attempts: entry.attempts, error: q.failed.get(entry.id)!.error },
                'queue: job failed all its attempts',
              );
          }
        },
      )
      .finally(() => {
        clearTimeout(stallTimer);
        worker.running -= 1;
        q.active -= 1;
        running.delete(p);
        pump(name, q);
      });
    running.add(p);
  }

  return {
    kind: 'memory',

    async enqueue(name, jobId, data, opts) {
      checkQueueName(name);
      checkJobId(jobId);
      if (closed) throw new Error('queue is closed');
      const q = stateOf(name);
      if (q.jobs.has(jobId) || q.completed.has(jobId) || q.failed.has(jobId)) return;
      // JSON round trip: the same values a Redis-backed queue would hand the worker.
      const entry: Entry = { id: jobId, data: JSON.parse(JSON.stringify(data ?? {})), attempts: 0, passing: 0, state: 'waiting' };
      q.jobs.set(jobId, entry);
      if (opts?.delayMs && opts.delayMs > 0) {
        entry.state = 'delayed';
        later(opts.delayMs, () => {
          entry.state = 'waiting';
          q.waiting.push(entry);
          pump(name, q);
        });
        return;
      }
      q.waiting.push(entry);
      pump(name, q);
    },

    async process<T extends object = Record<string, unknown>>(name: string, concurrency: number, handler: JobHandler<T>) {
      checkQueueName(name);
      checkConcurrency(concurrency);
      if (closed) throw new Error('queue is closed');
      const q = stateOf(name);
      // Entries hold what the producer enqueued for this queue name: the handler's payload type.
      q.workers.push({ concurrency, running: 0, handler: handler as unknown as JobHandler });
      pump(name, q);
    },

    async stats(name) {
      checkQueueName(name);
      const q = queues.get(name);
      if (!q) return { waiting: 0, active: 0, completed: 0, failed: 0 };
      return { waiting: q.jobs.size - q.active, active: q.active, completed: q.completed.size, failed: q.failed.size };
    },

    async counts(name) {
      checkQueueName(name);
      const q = queues.get(name);
      if (!q) return { waiting: 0, active: 0, completed: 0, failed: 0, delayed: 0 };
      let delayed = 0;
      for (const e of q.jobs.values()) if (e.state === 'delayed') delayed++;
      return { waiting: q.jobs.size - q.active - delayed, active: q.active, completed: q.completed.size, failed: q.failed.size, delayed };
    },

    async failedJobs<T extends object>(name: string, limit: number) {
      checkQueueName(name);
      const q = queues.get(name);
      if (!q) return [];
      return [...q.failed]
        .reverse()
        .slice(0, limit)
        .map(([id, f]) => ({ id, data: f.data as T, error: f.error }));
    },

    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
