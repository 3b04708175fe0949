/**
 * Recovering failed inference jobs (issue 21 item 1, docs/operations-jobs.md): a chunk whose job
 * failed every attempt (its audio missing) is marked failed and listed; a hub admin's retry and
 * the automatic re-drive classify it once the cause is gone, exactly once; the automatic re-drive
 * stops after its bound, and chunks past the re-queue horizon are left to a hub admin.
 * The queue retries after 5 ms here (QUEUE_BACKOFF_MS) so three attempts take no time.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { renderChunk, SPECIES_LABELS } from '../src/satellite/soundscape.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { waitFor } from './helpers/wait.ts';

describe('failed inference jobs', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;

  interface Made {
    id: string;
    key: string;
    satelliteId: string;
    wav: Buffer;
  }

  /** A chunk row whose audio is NOT stored, its job enqueued as ingest enqueues it. */
  async function brokenChunk(seed: number, at?: Date): Promise<Made> {
    const { id, key, satelliteId } = await makeChunk(hub, { team, at });
    await hub.infra.queue.enqueue(INFERENCE_QUEUE, id, { chunkId: id, tenantId: team.id, satelliteId, storageKey: key });
    return { id, key, satelliteId, wav: makeWav(renderChunk({ species: [SPECIES_LABELS[seed % 5]], seed })) };
  }

  const failedList = async () => (await api.get('/admin/jobs/failed?limit=1000', hubAdmin)).body.jobs as any[];
  const failedEntry = async (id: string) => (await failedList()).find((j) => j.chunkId === id);
  const untilFailed = (id: string, redrives: number) =>
    waitFor(
      `chunk ${id} failed after ${redrives} re-drives`,
      async () => {
        const e = await failedEntry(id);
        return e?.redrives === redrives && e;
      },
      { timeoutMs: 30_000 },
    );
  const detectionsOf = async (id: string) =>
    (await hub.sql.query<{ code: string }>('SELECT species_code AS code FROM detections WHERE chunk_id = $1', [id])).map((r) => r.code);
  /** Classified, and nothing more arrives once the queue is idle. */
  async function classifiedOnce(id: string): Promise<string[]> {
    const codes = await waitFor(
      `chunk ${id} classified`,
      async () => {
        const c = await detectionsOf(id);
        return c.length > 0 && c;
      },
      { timeoutMs: 30_000 },
    );
    await waitFor(
      'the queue to be idle',
      async () => {
        const s = await hub.infra.queue.counts(INFERENCE_QUEUE);
        return s.waiting + s.active + s.delayed === 0;
      },
      { timeoutMs: 30_000 },
    );
    const again = await detectionsOf(id);
    assert.deepEqual(again.sort(), codes.sort());
    assert.equal(new Set(again).size, again.length, 'one detection per species: no duplicates');
    return again;
  }

  before(async () => {
    hub = await startHub({ env: { QUEUE_BACKOFF_MS: '5' } });
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    // Failure times are compared exactly and spacings counted in minutes: the clock moves only when told.
    hub.clock.freeze();
  });
  after(() => hub.close());

  test('a job failing every attempt is listed; a hub admin retries it once its audio is back → classified once, audited', async () => {
    const a = await brokenChunk(1);
    const entry = await untilFailed(a.id, 0);
    assert.equal(entry.tenantId, team.id);
    assert.equal(entry.satelliteId, a.satelliteId);
    assert.match(entry.error, /is not in storage/);
    assert.equal(entry.failedAt, hub.clock.now().toISOString());
    assert.equal(typeof entry.recordedAt, 'string');

    // The original job id is remembered as failed: enqueueing it again (what the start-up re-queue does) adds nothing.
    await hub.infra.queue.enqueue(INFERENCE_QUEUE, a.id, {
      chunkId: a.id,
      tenantId: team.id,
      satelliteId: a.satelliteId,
      storageKey: a.key,
    });
    assert.ok(await failedEntry(a.id));

    await hub.infra.storage.put(a.key, a.wav);
    const res = await api.post('/admin/jobs/failed/retry', { chunkIds: [a.id] }, hubAdmin);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { retried: 1 });
    const codes = await classifiedOnce(a.id);
    assert.equal(codes.length, 1);
    assert.equal(await failedEntry(a.id), undefined, 'no longer listed');

    // Retrying it again (it is not failed) does nothing.
    assert.deepEqual((await api.post('/admin/jobs/failed/retry', { chunkIds: [a.id] }, hubAdmin)).body, { retried: 0 });

    const audit = await hub.sql.query<{ actorUserId: string; details: any; tenantId: string | null; targetId: string | null }>(
      `SELECT actor_user_id AS "actorUserId", details, tenant_id AS "tenantId", target_id AS "targetId" FROM audit_log WHERE action = 'admin.jobs_retried'`,
    );
    assert.equal(audit.length, 1, 'one entry for the retry that retried something');
    assert.equal(audit[0].actorUserId, hubAdmin.id);
    assert.equal(audit[0].tenantId, null);
    assert.equal(audit[0].targetId, a.id);
    assert.deepEqual(audit[0].details, { retried: 1, chunkIds: [a.id], all: false });
  });

  test('the queue is the truth: a job that failed while its mark could not be written is listed from the queue and retried', async () => {
    const b = await brokenChunk(2);
    await untilFailed(b.id, 0);
    // As if the database had been away when the last attempt failed: no mark, the chunk unclassified.
    await hub.sql.query('UPDATE chunks SET inference_failed_at = NULL, inference_error = NULL WHERE id = $1', [b.id]);
    const [{ n }] = await hub.sql.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM chunks WHERE id = $1 AND inference_failed_at IS NULL',
      [b.id],
    );
    assert.equal(n, 1);
    // The queue still holds the failed job: the list marks the chunk from it, with the job's error.
    const entry = await failedEntry(b.id);
    assert.ok(entry, 'listed again from the queue');
    assert.match(entry.error, /is not in storage/);
    assert.equal(entry.redrives, 0);
    // A chunk retried under a new job id is not marked again from its old failed job while it waits.
    await hub.infra.storage.put(b.key, b.wav);
    assert.deepEqual((await api.post('/admin/jobs/failed/retry', { chunkIds: [b.id] }, hubAdmin)).body, { retried: 1 });
    const codes = await classifiedOnce(b.id);
    assert.equal(codes.length, 1);
    assert.equal(await failedEntry(b.id), undefined, 'classified: the old failed job marks nothing');
  });

  test('automatic re-drive: spaced 5, 20, 80 minutes after each failure, at most 3 times; then a retry of all', async () => {
    const b = await brokenChunk(2);
    await untilFailed(b.id, 0);
    assert.equal(await hub.services.jobs.redrive(), 0, 'not yet due');
    hub.clock.advanceMinutes(5);
    assert.equal(await hub.services.jobs.redrive(), 1);
    await untilFailed(b.id, 1);
    hub.clock.advanceMinutes(19);
    assert.equal(await hub.services.jobs.redrive(), 0, 'the second re-drive waits 20 minutes');
    hub.clock.advanceMinutes(1);
    assert.equal(await hub.services.jobs.redrive(), 1);
    await untilFailed(b.id, 2);
    hub.clock.advanceMinutes(80);
    assert.equal(await hub.services.jobs.redrive(), 1);
    await untilFailed(b.id, 3);
    hub.clock.advanceMinutes(600);
    assert.equal(await hub.services.jobs.redrive(), 0, 'the bound: no fourth automatic re-drive');
    assert.equal((await failedEntry(b.id)).redrives, 3, 'still failed and listed');

    // A hub admin retries every failed job (no ids) once the audio is back.
    await hub.infra.storage.put(b.key, b.wav);
    const res = await api.post('/admin/jobs/failed/retry', {}, hubAdmin);
    assert.deepEqual(res.body, { retried: 1 });
    await classifiedOnce(b.id);
    assert.equal(await failedEntry(b.id), undefined);
    const [entry] = await hub.sql.query<{ details: any }>(
      `SELECT details FROM audit_log WHERE action = 'admin.jobs_retried' ORDER BY at DESC, id DESC LIMIT 1`,
    );
    assert.deepEqual(entry.details, { retried: 1, chunkIds: [b.id], all: true });
  });

  test('automatic re-drive once the cause is gone classifies the chunk once; chunks past the 24 h horizon are left to a hub admin', async () => {
    const c = await brokenChunk(3);
    const old = await brokenChunk(4, new Date(hub.clock.now().getTime() - 25 * 3600_000));
    await untilFailed(c.id, 0);
    await untilFailed(old.id, 0);
    await hub.infra.storage.put(c.key, c.wav);
    await hub.infra.storage.put(old.key, old.wav);
    hub.clock.advanceMinutes(5);
    assert.equal(await hub.services.jobs.redrive(), 1, 'only the recent chunk');
    await classifiedOnce(c.id);
    assert.equal(await failedEntry(c.id), undefined);
    assert.equal((await failedEntry(old.id)).redrives, 0, 'the old chunk stays failed');
    assert.equal(await hub.services.jobs.redrive(), 0);
  });

  test('only hub admins list and retry failed jobs', async () => {
    assertError(await api.get('/admin/jobs/failed', owner), 403, 'FORBIDDEN');
    assertError(await api.post('/admin/jobs/failed/retry', {}, owner), 403, 'FORBIDDEN');
    assertError(await api.get('/admin/jobs/failed'), 401, 'UNAUTHENTICATED');
    assertError(await api.post('/admin/jobs/failed/retry', { chunkIds: ['nope'] }, hubAdmin), 400, 'VALIDATION_FAILED');
  });
});
