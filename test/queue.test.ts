/**
 * The job-queue port (DESIGN.md §2): the in-process queue always, BullMQ on real Redis when
 * REDIS_URL is set. Both adapters show the same behaviours: idempotent enqueue on the job id,
 * bounded concurrency, failing handlers retried then failed without stopping the worker.
 * Tests wait on promises their handlers resolve (a generous timeout is only a safety net).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { createQueue, type Job, type JobQueue, type QueueOptions } from '../src/infra/queue/index.ts';
import { createMemoryQueue } from '../src/infra/queue/memory.ts';
import { PartUnavailable } from '../src/core/errors.ts';
import { waitFor } from './helpers/wait.ts';

const REDIS_URL = process.env.REDIS_URL;
const SAFETY_MS = 15_000;

interface Deferred<T = void> {
  promise: Promise<T>;
  resolve: (v: T) => void;
}
function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function within<T>(p: Promise<T>, what: string, ms = SAFETY_MS): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    }),
  ]);
}

/** For counters a Redis-backed queue updates just after the handler returns: checked until they hold. */
const SOON = { timeoutMs: SAFETY_MS, intervalMs: 10 };

const name = (what: string) => `${what}-${crypto.randomBytes(4).toString('hex')}`;
const OPTS: QueueOptions = { attempts: 3, backoffMs: 20 };

/** Behaviours every adapter of the port must show. `make` gives a fresh queue, closed after the suite. */
function sharedQueueBehaviours(make: (opts?: QueueOptions) => JobQueue) {
  test('enqueue is idempotent on the job id while waiting, active and completed', async () => {
    const jq = make();
    const q = name('idem');
    await jq.enqueue(q, 'a', { n: 1 });
    await jq.enqueue(q, 'a', { n: 2 });
    assert.deepEqual(await jq.stats(q), { waiting: 1, active: 0, completed: 0, failed: 0 }, 'a second enqueue while waiting adds nothing');

    const runs: Job[] = [];
    const started = new Map<string, Deferred>();
    const done = new Map<string, Deferred>();
    const seen = (id: string, m: Map<string, Deferred>) => {
      if (!m.has(id)) m.set(id, deferred());
      return m.get(id)!;
    };
    const release = deferred();
    await jq.process(q, 1, async (job) => {
      runs.push(job);
      seen(job.id, started).resolve();
      if (job.id === 'a') await release.promise;
      seen(job.id, done).resolve();
    });
    await within(seen('a', started).promise, 'job a to start');
    await jq.enqueue(q, 'a', { n: 3 });
    assert.deepEqual(await jq.stats(q), { waiting: 0, active: 1, completed: 0, failed: 0 }, 'a second enqueue while active adds nothing');
    release.resolve();
    await within(seen('a', done).promise, 'job a to finish');
    await waitFor(
      'a to count as completed',
      async () => {
        assert.equal((await jq.stats(q)).completed, 1);
        return true;
      },
      SOON,
    );

    // Completed: enqueueing again adds nothing. With one worker in order, a re-added `a` would run before `b`.
    await jq.enqueue(q, 'a', { n: 4 });
    await jq.enqueue(q, 'b', { n: 5 });
    await within(seen('b', done).promise, 'job b to finish');
    await waitFor(
      'both completed',
      async () => {
        assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: 2, failed: 0 });
        return true;
      },
      SOON,
    );
    assert.deepEqual(
      runs.map((j) => [j.id, j.data.n, j.attempt]),
      [
        ['a', 1, 1],
        ['b', 5, 1],
      ],
      'the first data wins; each job ran once',
    );
  });

  test('the handler gets the job data as JSON values', async () => {
    const jq = make();
    const q = name('data');
    const got = deferred<Job>();
    await jq.process(q, 1, async (job) => got.resolve(job));
    const data = { chunkId: 'c-1', nested: { list: [1, 'two', null], flag: true }, at: new Date('2030-01-02T03:04:05Z') };
    await jq.enqueue(q, 'chunk-c-1', data);
    const job = await within(got.promise, 'the job');
    assert.equal(job.id, 'chunk-c-1');
    assert.equal(job.attempt, 1);
    assert.deepEqual(job.data, { chunkId: 'c-1', nested: { list: [1, 'two', null], flag: true }, at: '2030-01-02T03:04:05.000Z' });
  });

  test('process runs at most `concurrency` jobs at once and reaches it', async () => {
    const jq = make();
    const q = name('conc');
    const total = 9;
    let running = 0;
    let peak = 0;
    const full = deferred();
    const finished = new Set<string>();
    const all = deferred();
    await jq.process(q, 3, async (job) => {
      running += 1;
      peak = Math.max(peak, running);
      if (running === 3) full.resolve();
      // The first jobs hold their slots until three run together.
      await full.promise;
      await new Promise((r) => setImmediate(r));
      running -= 1;
      finished.add(job.id);
      if (finished.size === total) all.resolve();
    });
    for (let i = 0; i < total; i++) await jq.enqueue(q, `job-${i}`, { i });
    await within(all.promise, 'every job to finish');
    assert.equal(peak, 3);
    await waitFor(
      'all completed',
      async () => {
        assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: total, failed: 0 });
        return true;
      },
      SOON,
    );
  });

  test('a failing handler is retried with backoff, then fails the job; the worker goes on with the next jobs', async () => {
    const jq = make(OPTS);
    const q = name('fail');
    const attempts: Record<string, number[]> = {};
    const done = new Map<string, Deferred>(['bad', 'flaky', 'sync', 'good', 'after'].map((id) => [id, deferred()]));
    await jq.process(q, 1, (job) => {
      (attempts[job.id] ??= []).push(job.attempt);
      if (job.id === 'sync' && job.attempt === 3) done.get('sync')!.resolve();
      // Not async: a synchronous throw must fail the job just the same.
      if (job.id === 'sync') throw new Error('thrown synchronously');
      return (async () => {
        if (job.id === 'bad') {
          if (job.attempt === 3) done.get('bad')!.resolve();
          throw new Error('always fails');
        }
        if (job.id === 'flaky' && job.attempt === 1) throw new Error('fails once');
        done.get(job.id)!.resolve();
      })();
    });
    await jq.enqueue(q, 'bad', {});
    await jq.enqueue(q, 'flaky', {});
    await jq.enqueue(q, 'sync', {});
    await jq.enqueue(q, 'good', {});
    await within(Promise.all(['bad', 'flaky', 'sync', 'good'].map((id) => done.get(id)!.promise)), 'every job to settle');
    await waitFor(
      'two failed, two completed',
      async () => {
        assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: 2, failed: 2 });
        return true;
      },
      SOON,
    );
    assert.deepEqual(attempts.bad, [1, 2, 3], 'three attempts, then failed');
    assert.deepEqual(attempts.sync, [1, 2, 3]);
    assert.deepEqual(attempts.flaky, [1, 2], 'succeeds on the retry');
    assert.deepEqual(attempts.good, [1]);

    // The worker is still alive, and a failed id is not run again by a second enqueue.
    await jq.enqueue(q, 'bad', {});
    await jq.enqueue(q, 'after', {});
    await within(done.get('after')!.promise, 'the next job after the failures');
    await waitFor(
      'after completed',
      async () => {
        assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: 3, failed: 2 });
        return true;
      },
      SOON,
    );
    assert.deepEqual(attempts.bad, [1, 2, 3]);
  });

  test('a run failing because the database is away is no attempt: the job runs again, past its attempts, until it is back', async () => {
    const jq = make({ attempts: 2, backoffMs: 5 });
    const q = name('away');
    const runs: number[] = [];
    const done = deferred();
    let databaseBack = false;
    await jq.process(q, 1, async (job) => {
      runs.push(job.attempt);
      if (!databaseBack) {
        // Five runs during the outage, more than the job's two attempts; then the database returns.
        if (runs.length === 5) databaseBack = true;
        throw new PartUnavailable('database', new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      }
      done.resolve();
    });
    await jq.enqueue(q, 'during-outage', {});
    await within(done.promise, 'the job to run once the database is back');
    assert.deepEqual(runs, [1, 1, 1, 1, 1, 1], 'every run during the outage is still the first attempt');
    await waitFor(
      'completed, none failed',
      async () => {
        assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: 1, failed: 0 });
        return true;
      },
      SOON,
    );
  });

  test('stats count waiting, active, completed and failed jobs per queue', async () => {
    const jq = make({ attempts: 1, backoffMs: 20 });
    const q = name('stats');
    const other = name('stats-other');
    assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: 0, failed: 0 }, 'an unused queue counts nothing');
    for (const id of ['s1', 's2', 's3', 'boom']) await jq.enqueue(q, id, {});
    await jq.enqueue(other, 'o1', {});
    assert.deepEqual(await jq.stats(q), { waiting: 4, active: 0, completed: 0, failed: 0 });
    assert.deepEqual(await jq.stats(other), { waiting: 1, active: 0, completed: 0, failed: 0 }, 'queues are counted apart');

    const gate = deferred();
    const first = deferred();
    const settled = new Map(['s1', 's2', 's3', 'boom'].map((id) => [id, deferred()]));
    await jq.process(q, 1, async (job) => {
      first.resolve();
      try {
        await gate.promise;
        if (job.id === 'boom') throw new Error('boom');
      } finally {
        settled.get(job.id)!.resolve();
      }
    });
    await within(first.promise, 'the first job to start');
    assert.deepEqual(await jq.stats(q), { waiting: 3, active: 1, completed: 0, failed: 0 });
    gate.resolve();
    await within(Promise.all([...settled.values()].map((d) => d.promise)), 'every job to run');
    await waitFor(
      'final counts',
      async () => {
        assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: 3, failed: 1 });
        return true;
      },
      SOON,
    );
    assert.deepEqual(await jq.stats(other), { waiting: 1, active: 0, completed: 0, failed: 0 }, 'no worker for the other queue');
  });

  test('close waits for the running job to finish', async () => {
    const jq = make();
    const q = name('close');
    const started = deferred();
    const release = deferred();
    let finished = false;
    await jq.process(q, 1, async () => {
      started.resolve();
      await release.promise;
      finished = true;
    });
    await jq.enqueue(q, 'slow', {});
    await within(started.promise, 'the job to start');
    const closing = jq.close();
    release.resolve();
    await within(closing, 'close');
    assert.equal(finished, true);
  });

  test('job ids and queue names are checked the same way by every adapter', async () => {
    const jq = make();
    const q = name('ids');
    for (const bad of ['', 'a:b', '123', '-4']) await assert.rejects(jq.enqueue(q, bad, {}), /invalid job id/, JSON.stringify(bad));
    await assert.rejects(jq.enqueue('bad:name', 'x', {}), /invalid queue name/);
    await assert.rejects(
      jq.process(q, 0, async () => {}),
      RangeError,
    );
    await jq.enqueue(q, 'chunk-0b6e1a56-6c1f-4c36-9f43-8d6a0a3f0c2e', {});
    assert.equal((await jq.stats(q)).waiting, 1);
  });
}

describe('job queue: in process', () => {
  const made: JobQueue[] = [];
  after(() => Promise.all(made.map((q) => q.close())));
  const make = (opts: QueueOptions = OPTS) => {
    const q = createMemoryQueue(opts);
    made.push(q);
    return q;
  };

  sharedQueueBehaviours(make);

  test('createQueue without REDIS_URL picks the in-process queue; with it, BullMQ (connecting only when used)', async () => {
    const mem = createQueue({ redisUrl: null, kvPrefix: 'x:' });
    assert.equal(mem.kind, 'memory');
    await mem.close();
    const bull = createQueue({ redisUrl: 'redis://127.0.0.1:1', kvPrefix: 'x:' });
    assert.equal(bull.kind, 'bullmq');
    await bull.close();
  });

  test('the memory of finished ids is bounded: the oldest id can run again', async () => {
    const jq = make({ ...OPTS, keepFinished: 2 });
    const q = name('bounded');
    const runs: string[] = [];
    const waiters = new Map<string, Deferred>();
    const waiter = (key: string) => {
      if (!waiters.has(key)) waiters.set(key, deferred());
      return waiters.get(key)!;
    };
    const wait = (key: string) => waiter(key).promise;
    await jq.process(q, 1, async (job) => {
      runs.push(job.id);
      waiter(`${job.id}#${runs.filter((r) => r === job.id).length}`).resolve();
    });
    for (const id of ['j1', 'j2', 'j3']) await jq.enqueue(q, id, {});
    await within(wait('j3#1'), 'j3');
    await waitFor(
      'only the last two ids kept',
      async () => {
        assert.deepEqual(await jq.stats(q), { waiting: 0, active: 0, completed: 2, failed: 0 });
        return true;
      },
      SOON,
    );
    await jq.enqueue(q, 'j3', {});
    await jq.enqueue(q, 'j1', {});
    await within(wait('j1#2'), 'j1 to run again');
    assert.deepEqual(runs, ['j1', 'j2', 'j3', 'j1'], 'j3 is remembered, j1 was forgotten');
  });

  test('after close, enqueue and process are refused', async () => {
    const jq = make();
    await jq.close();
    await assert.rejects(jq.enqueue(name('closed'), 'x', {}), /closed/);
    await assert.rejects(
      jq.process(name('closed'), 1, async () => {}),
      /closed/,
    );
  });
});

describe('job queue: BullMQ on Redis', { skip: REDIS_URL ? false : 'REDIS_URL is not set' }, () => {
  const prefix = `chorus-test:${crypto.randomBytes(4).toString('hex')}:`;
  const made: JobQueue[] = [];
  after(async () => {
    await Promise.all(made.map((q) => q.close()));
    // Leave nothing behind in the shared Redis.
    const redis = new Redis(REDIS_URL!);
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      await redis.quit();
    }
  });
  const make = (opts: QueueOptions = OPTS) => {
    const q = createQueue({ redisUrl: REDIS_URL!, kvPrefix: prefix }, opts);
    made.push(q);
    return q;
  };

  test('REDIS_URL selects BullMQ, with every key under the kv prefix', async () => {
    const jq = make();
    assert.equal(jq.kind, 'bullmq');
    const q = name('prefix');
    await jq.enqueue(q, 'p1', { x: 1 });
    const redis = new Redis(REDIS_URL!);
    try {
      const keys = await redis.keys(`*${q}*`);
      assert.ok(keys.length > 0);
      assert.ok(
        keys.every((k) => k.startsWith(`${prefix}bull:${q}:`)),
        keys.join(', '),
      );
    } finally {
      await redis.quit();
    }
  });

  sharedQueueBehaviours(make);

  test('two queue instances on one prefix share jobs: an id enqueued by one is not added by the other', async () => {
    const a = make();
    const b = make();
    const q = name('shared');
    await a.enqueue(q, 'same', {});
    await b.enqueue(q, 'same', {});
    assert.equal((await b.stats(q)).waiting, 1);
    const got = deferred<Job>();
    await b.process(q, 1, async (job) => got.resolve(job));
    assert.equal((await within(got.promise, 'the job on the other instance')).id, 'same');
  });
});
