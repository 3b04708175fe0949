/**
 * GET /workers and GET /workers/jobs (spec §4 "Workers and system"): the in-process worker of a
 * full hub reports its counts through the key-value store; workers are one entry per IP; hub
 * admins see addresses and every team's jobs, a team admin sees counts and their team's jobs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { renderChunk, SPECIES_LABELS } from '../src/satellite/soundscape.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { newId } from '../src/core/crypto.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { createWorkerReporter } from '../src/modules/workers/reporter.ts';
import { createMemoryQueue } from '../src/infra/queue/memory.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { waitFor } from './helpers/wait.ts';

describe('workers', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let team: TestTeam;
  let otherOwner: TestUser;
  let otherTeam: TestTeam;
  const chunks: Record<string, string> = {};

  async function chunkFor(t: TestTeam, species: string[], seed: number, opts: { missingAudio?: boolean } = {}): Promise<string> {
    const audio = opts.missingAudio ? undefined : makeWav(renderChunk({ species, seed }));
    const { id: chunkId, satelliteId } = await makeChunk(hub, { team: t, audio });
    await hub.infra.queue.enqueue(INFERENCE_QUEUE, chunkId, { chunkId, tenantId: t.id, satelliteId });
    return chunkId;
  }

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    admin = await f.member(team, 'admin');
    member = await f.member(team, 'member');
    otherOwner = await f.user();
    otherTeam = await f.team(otherOwner);
    chunks.mine = await chunkFor(team, [SPECIES_LABELS[1]], 1);
    chunks.theirs = await chunkFor(otherTeam, [SPECIES_LABELS[2]], 2);
    // A chunk whose audio is missing fails every attempt (3, with backoff 1 s and 2 s).
    chunks.broken = await chunkFor(team, [], 3, { missingAudio: true });
    await waitFor(
      'the jobs to finish',
      async () => {
        const jobs = (await api.get('/workers/jobs?limit=500', hubAdmin)).body.jobs as any[];
        if (jobs.filter((j) => j.status === 'completed').length < 2 || jobs.filter((j) => j.chunkId === chunks.broken).length < 3)
          return false;
        // The third attempt's record is written before BullMQ moves the job to failed: wait for both.
        return (await api.get('/workers', hubAdmin)).body.queue.failed >= 1;
      },
      { timeoutMs: 30_000 },
    );
  });
  after(() => hub.close());

  test('a hub admin sees the queue and the in-process worker with its counts', async () => {
    const res = await api.get('/workers', hubAdmin);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body.queue).sort(), ['active', 'completed', 'delayed', 'failed', 'waiting']);
    assert.ok(res.body.queue.completed >= 2);
    assert.equal(res.body.queue.failed, 1, 'the broken chunk failed for good after its attempts');
    assert.equal(res.body.workers.length, 1);
    const w = res.body.workers[0];
    assert.equal(typeof w.ip, 'string');
    assert.equal(typeof w.hostname, 'string');
    assert.ok(w.jobsProcessed >= 5, JSON.stringify(w));
    assert.equal(w.jobsProcessed, w.jobsSucceeded + w.jobsFailed);
    assert.equal(w.jobsFailed, 3);
    assert.ok(w.avgDurationMs > 0);
    assert.ok(
      Date.parse(w.lastSeen) <= hub.clock.now().getTime() && Date.parse(w.lastSeen) > hub.clock.now().getTime() - 60_000,
      w.lastSeen,
    );
  });

  test('recent jobs: newest first, with outcome, duration, detections and the error', async () => {
    const res = await api.get('/workers/jobs', hubAdmin);
    assert.equal(res.status, 200);
    const jobs = res.body.jobs as any[];
    const mine = jobs.find((j) => j.chunkId === chunks.mine);
    assert.equal(mine.status, 'completed');
    assert.equal(mine.tenantId, team.id);
    assert.equal(mine.detections, 1);
    assert.equal(mine.error, null);
    assert.ok(mine.durationMs >= 0);
    assert.equal(typeof mine.finishedAt, 'string');
    const broken = jobs.filter((j) => j.chunkId === chunks.broken);
    assert.deepEqual(
      broken.map((j) => j.attempt),
      [3, 2, 1],
    );
    assert.match(broken[0].error, /is not in storage/);
    assert.equal((await api.get('/workers/jobs?limit=1', hubAdmin)).body.jobs.length, 1);
  });

  test("a team admin sees counts without addresses and only their team's jobs", async () => {
    const overview = await api.get('/workers', admin);
    assert.equal(overview.status, 200);
    assert.equal(overview.body.workers[0].ip, null);
    assert.equal(overview.body.workers[0].hostname, null);
    assert.ok(overview.body.workers[0].jobsProcessed >= 5);
    for (const q of ['', `?tenantId=${team.id}`]) {
      const jobs = (await api.get(`/workers/jobs${q}`, admin)).body.jobs as any[];
      assert.ok(jobs.length >= 4);
      assert.ok(
        jobs.every((j) => j.tenantId === team.id),
        `only the team's jobs (${q})`,
      );
    }
    const theirs = (await api.get('/workers/jobs', otherOwner)).body.jobs as any[];
    assert.deepEqual(
      theirs.map((j) => j.chunkId),
      [chunks.theirs],
    );
    assertError(await api.get('/workers', member), 403, 'FORBIDDEN');
    assertError(await api.get(`/workers/jobs?tenantId=${team.id}`, otherOwner), 404, 'NOT_FOUND');
    const hubWide = (await api.get(`/workers/jobs?tenantId=${otherTeam.id}`, hubAdmin)).body.jobs as any[];
    assert.deepEqual(
      hubWide.map((j) => j.chunkId),
      [chunks.theirs],
    );
  });

  test('workers on one IP are one entry; a worker that stops reporting leaves after 60 s', async () => {
    const ip = '10.9.8.7';
    const a = createWorkerReporter({ kv: hub.infra.kv, clock: hub.clock, identity: { id: 'w-a', ip, hostname: 'box-a', pid: 1 } });
    const b = createWorkerReporter({ kv: hub.infra.kv, clock: hub.clock, identity: { id: 'w-b', ip, hostname: 'box-a', pid: 2 } });
    const job = (status: 'completed' | 'failed', durationMs: number) => ({
      jobId: newId(),
      chunkId: newId(),
      tenantId: otherTeam.id,
      attempt: 1,
      status,
      durationMs,
      detections: 0,
      modelId: 'builtin',
      finishedAt: hub.clock.now().toISOString(),
      error: status === 'failed' ? 'x' : null,
    });
    await a.flush();
    hub.clock.advance(1000);
    await b.flush();
    a.record(job('completed', 10));
    a.record(job('completed', 20));
    await a.flush();
    hub.clock.advance(1000);
    b.record(job('failed', 60));
    await b.flush();
    const res = await api.get('/workers', hubAdmin);
    const entry = res.body.workers.find((w: any) => w.ip === ip);
    assert.deepEqual(
      { ...entry, lastSeen: undefined },
      {
        id: 'w-b',
        ip,
        hostname: 'box-a',
        processes: 2,
        jobsProcessed: 3,
        jobsSucceeded: 2,
        jobsFailed: 1,
        avgDurationMs: 30,
        lastSeen: undefined,
      },
    );
    await a.stop();
    await b.stop();
    assert.equal(
      (await api.get('/workers', hubAdmin)).body.workers.filter((w: any) => w.ip === ip).length,
      0,
      'a stopped worker removes itself',
    );

    const c = createWorkerReporter({
      kv: hub.infra.kv,
      clock: hub.clock,
      identity: { id: 'w-c', ip: '10.9.8.6', hostname: 'box-c', pid: 3 },
      beatMs: 3_600_000,
    });
    await c.flush();
    assert.equal((await api.get('/workers', hubAdmin)).body.workers.filter((w: any) => w.id === 'w-c').length, 1);
    hub.clock.advance(61_000);
    assert.equal(
      (await api.get('/workers', hubAdmin)).body.workers.filter((w: any) => w.id === 'w-c').length,
      0,
      'gone after 60 s without a report',
    );
    await c.stop();
  });

  test('chorus worker (CHORUS_MODE=worker) needs Redis and PostgreSQL, like split mode', () => {
    assert.throws(
      () => loadConfig({ CHORUS_MODE: 'worker', CHORUS_SECRET: 'x'.repeat(40) }),
      (err: unknown) => err instanceof ConfigError && /REDIS_URL and DATABASE_URL/.test(err.message),
    );
    const ok = loadConfig({
      CHORUS_MODE: 'worker',
      CHORUS_SECRET: 'x'.repeat(40),
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATABASE_URL: 'postgres://x@127.0.0.1/y',
    });
    assert.equal(ok.mode, 'worker');
  });

  test('queue counts keep retries apart as delayed (memory adapter)', async () => {
    const q = createMemoryQueue({ backoffMs: 60_000 });
    await q.process('t', 1, async () => {
      throw new Error('no');
    });
    await q.enqueue('t', 'job-1', {});
    await waitFor('the first attempt', async () => (await q.counts('t')).delayed === 1, { timeoutMs: 30_000 });
    assert.deepEqual(await q.counts('t'), { waiting: 0, active: 0, completed: 0, failed: 0, delayed: 1 });
    assert.deepEqual(await q.stats('t'), { waiting: 1, active: 0, completed: 0, failed: 0 }, 'stats still counts a retry as waiting');
    await q.close();
  });
});
