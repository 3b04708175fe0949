/**
 * Audio retention (issue 22): on the injected clock, chunks past their team's
 * audio_retention_days lose their audio object and are marked; audio people worked on stays
 * (verified, voted, pinned, annotated, commented, or in a stitched call with such a detection).
 * A run is bounded in batches, resumes after its process stopped, runs once across processes,
 * and is audited; the routes are hub admin only.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { createServices } from '../src/services.ts';
import { newId } from '../src/core/crypto.ts';

const DAY = 86_400_000;
const T0 = new Date('2026-06-10T12:00:00.000Z');

type Chunk = Awaited<ReturnType<typeof makeChunk>>;

describe('audio retention', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let root: TestUser;
  let owner: TestUser;
  let teamA: TestTeam;
  let teamB: TestTeam;
  let teamC: TestTeam;
  const chunks: Record<string, Chunk> = {};
  const dets: Record<string, string> = {};
  let size = 100;

  /** A chunk `ageDays` old at T0 with its own audio object (each a different size). */
  async function chunk(name: string, sat: { id: string; tenantId: string }, ageDays: number) {
    chunks[name] = await makeChunk(hub, { satellite: sat, at: new Date(T0.getTime() - ageDays * DAY), audio: Buffer.alloc(size++, 1) });
    return chunks[name];
  }
  const stored = async (name: string) => (await hub.infra.storage.stat(chunks[name].key)) !== null;
  const marked = async (name: string) =>
    (await hub.sql.one<{ at: Date | null }>('SELECT audio_deleted_at AS at FROM chunks WHERE id = $1', [chunks[name].id])).at !== null;
  const bytesOf = (names: string[]) => names.reduce((n, x) => n + sizes[x], 0);
  const sizes: Record<string, number> = {};

  async function pin(id: string) {
    await hub.sql.query('UPDATE detections SET pinned_at = $2, pinned_by = $3 WHERE id = $1', [id, T0, owner.id]);
  }
  async function vote(id: string, tenantId: string, v: string) {
    await hub.sql.query(
      `INSERT INTO detection_votes (detection_id, user_id, tenant_id, vote, decisive, created_at, updated_at) VALUES ($1, $2, $3, $4, true, $5, $5)`,
      [id, owner.id, tenantId, v, T0],
    );
  }

  before(async () => {
    hub = await startHub();
    hub.clock.freeze(T0);
    api = client(hub.url);
    const f = factories(hub);
    root = await f.user({ admin: true });
    owner = await f.user();
    teamA = await f.team(owner);
    teamB = await f.team(owner);
    teamC = await f.team(owner);
    for (const [team, days] of [
      [teamA, 30],
      [teamB, 7],
    ] as const) {
      const put = await api.put(`/settings/tenant?tenantId=${team.id}`, { audio_retention_days: days }, owner);
      assert.equal(put.status, 200, put.text);
    }
    const satA = await makeSatellite(hub, teamA, owner);
    const satB = await makeSatellite(hub, teamB, owner);
    const satC = await makeSatellite(hub, teamC, owner);

    // Team A keeps 30 days.
    await chunk('a1', satA, 40); // no detection: removed
    dets.a2 = await makeDetection(hub, { chunk: await chunk('a2', satA, 40) }); // plain: removed
    dets.a3 = await makeDetection(hub, { chunk: await chunk('a3', satA, 40), verificationStatus: 'confirmed' }); // kept
    dets.a4 = await makeDetection(hub, { chunk: await chunk('a4', satA, 40) }); // pinned: kept
    await pin(dets.a4);
    dets.a5 = await makeDetection(hub, { chunk: await chunk('a5', satA, 40) }); // annotated: kept
    await hub.sql.query(
      `INSERT INTO detection_annotations (id, detection_id, tenant_id, author_id, vote, time_start_ms, time_end_ms, created_at)
       VALUES ($1, $2, $3, $4, 'confirm', 0, 1000, $5)`,
      [newId(), dets.a5, teamA.id, owner.id, T0],
    );
    dets.a6 = await makeDetection(hub, { chunk: await chunk('a6', satA, 40) }); // commented: kept
    await hub.sql.query(
      `INSERT INTO detection_comments (id, detection_id, tenant_id, author_id, text, created_at) VALUES ($1, $2, $3, $4, 'nice', $5)`,
      [newId(), dets.a6, teamA.id, owner.id, T0],
    );
    dets.a7 = await makeDetection(hub, { chunk: await chunk('a7', satA, 40), verificationStatus: 'pending_review' }); // a confirm vote: kept
    await vote(dets.a7, teamA.id, 'confirm');
    dets.a7b = await makeDetection(hub, { chunk: await chunk('a7b', satA, 40) }); // only unsure: removed
    await vote(dets.a7b, teamA.id, 'unsure');
    // A stitched call over a8 (representative, pinned) and a9 (its continuation): both kept.
    dets.a8 = await makeDetection(hub, { chunk: await chunk('a8', satA, 41), callChunks: 2 });
    await pin(dets.a8);
    dets.a9 = await makeDetection(hub, { chunk: await chunk('a9', satA, 41 - 3 / 86_400), callId: dets.a8 });
    // A plain call over a11 (representative) and a12: both removed.
    dets.a11 = await makeDetection(hub, { chunk: await chunk('a11', satA, 45), callChunks: 2 });
    dets.a12 = await makeDetection(hub, { chunk: await chunk('a12', satA, 45 - 3 / 86_400), callId: dets.a11 });
    await chunk('a10', satA, 20); // younger than 30 days: untouched

    // Team B keeps 7 days.
    await chunk('b1', satB, 10); // removed
    dets.b2 = await makeDetection(hub, { chunk: await chunk('b2', satB, 10), verificationStatus: 'rejected' }); // kept
    await chunk('b3', satB, 3); // untouched

    // Team C keeps audio forever (0, the default).
    await chunk('c1', satC, 400);
    for (const [name, c] of Object.entries(chunks)) sizes[name] = (await hub.infra.storage.stat(c.key))!.size;
  });
  after(() => hub?.close());

  const REMOVED = ['a1', 'a2', 'a7b', 'a11', 'a12', 'b1'];
  const KEPT = ['a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'b2'];
  const YOUNG = ['a10', 'b3', 'c1'];

  test('hub admins only', async () => {
    assertError(await api.post('/admin/retention/run', undefined, owner), 403, 'FORBIDDEN');
    assertError(await api.get('/admin/retention/runs', owner), 403, 'FORBIDDEN');
  });

  test('a run removes the audio past each team’s retention and keeps what people worked on', async () => {
    const started = await api.post('/admin/retention/run', undefined, root);
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.trigger, 'manual');
    await hub.services.retention.idle();

    for (const n of REMOVED) {
      assert.equal(await stored(n), false, `${n}: object removed`);
      assert.equal(await marked(n), true, `${n}: chunk marked`);
    }
    for (const n of [...KEPT, ...YOUNG]) {
      assert.equal(await stored(n), true, `${n}: object kept`);
      assert.equal(await marked(n), false, `${n}: chunk not marked`);
    }

    const runs = await api.get('/admin/retention/runs', root);
    assert.equal(runs.status, 200, runs.text);
    const run = runs.body.runs[0];
    assert.equal(run.id, started.body.id);
    assert.equal(run.status, 'finished', run.error ?? '');
    assert.equal(run.trigger, 'manual');
    assert.equal(run.chunksRemoved, REMOVED.length);
    assert.equal(run.chunksKept, KEPT.length);
    assert.equal(run.bytesFreed, bytesOf(REMOVED));
    assert.ok(run.finishedAt);
    assert.deepEqual(Object.keys(run).sort(), [
      'bytesFreed',
      'chunksKept',
      'chunksRemoved',
      'error',
      'finishedAt',
      'id',
      'startedAt',
      'status',
      'trigger',
    ]);

    const audit = await hub.sql.query<{ actorType: string; userId: string | null; details: any; targetId: string }>(
      `SELECT actor_type AS "actorType", actor_user_id AS "userId", details, target_id AS "targetId" FROM audit_log WHERE action = 'admin.retention_run'`,
    );
    assert.equal(audit.length, 1);
    assert.equal(audit[0].userId, root.id, 'the hub admin who started it');
    assert.equal(audit[0].targetId, run.id);
    assert.equal(audit[0].details.chunksRemoved, REMOVED.length);
    assert.equal(audit[0].details.chunksKept, KEPT.length);
    assert.equal(audit[0].details.bytesFreed, bytesOf(REMOVED));
    assert.equal(audit[0].details.teams[teamA.id].removed, 5);
    assert.equal(audit[0].details.teams[teamB.id].removed, 1);
    assert.equal(audit[0].details.teams[teamC.id], undefined, 'a team keeping audio forever is not walked');
  });

  test('the audio of a removed chunk answers 404 "no longer stored"; its detections still list and open', async () => {
    const gone = await api.get(`/audio/${chunks.a2.id}`, owner);
    assert.equal(assertError(gone, 404, 'NOT_FOUND').message, 'The audio of this chunk is no longer stored');
    assertError(await api.get(`/audio/${chunks.a2.id}/spectrogram.png`, owner), 404, 'NOT_FOUND');
    assert.equal((await api.get(`/audio/${chunks.a3.id}`, owner)).status, 200);
    const detail = await api.get(`/detections/${dets.a2}`, owner);
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.body.audioChunkId ?? detail.body.detection?.audioChunkId, chunks.a2.id);
    const list = await api.get(`/detections?tenantId=${teamA.id}&limit=100`, owner);
    assert.equal(list.status, 200, list.text);
    assert.ok(list.body.detections.some((d: any) => d.id === dets.a2));
  });

  test('a second run removes nothing more', async () => {
    hub.clock.freeze(new Date(T0.getTime() + 60_000));
    const again = await api.post('/admin/retention/run', undefined, root);
    assert.equal(again.status, 202, again.text);
    await hub.services.retention.idle();
    const run = (await api.get('/admin/retention/runs', root)).body.runs[0];
    assert.equal(run.id, again.body.id);
    assert.equal(run.status, 'finished');
    assert.equal(run.chunksRemoved, 0);
    assert.equal(run.bytesFreed, 0);
    assert.equal(run.chunksKept, KEPT.length);
    for (const n of [...KEPT, ...YOUNG]) assert.equal(await stored(n), true, `${n}: still kept`);
  });

  test('while the hub switch retention_enabled is off nothing runs', async () => {
    assert.equal((await api.put('/settings/platform', { retention_enabled: false }, root)).status, 200);
    try {
      assertError(await api.post('/admin/retention/run', undefined, root), 409, 'RETENTION_DISABLED');
      hub.clock.freeze(new Date(T0.getTime() + DAY));
      assert.equal(await hub.services.retention.tick(), null);
    } finally {
      await api.put('/settings/platform', { retention_enabled: null }, root);
      hub.clock.freeze(T0);
    }
  });

  test('the daily run starts once across two processes ticking at the same time', async () => {
    const second = createServices(hub.infra);
    hub.clock.freeze(new Date(T0.getTime() + DAY));
    const ran = await Promise.all([hub.services.retention.tick(), second.retention.tick()]);
    assert.equal(ran.filter((r) => r !== null).length, 1, 'one run');
    const run = ran.find((r) => r !== null)!;
    assert.equal(run.trigger, 'schedule');
    assert.equal(run.status, 'finished');
    assert.equal(run.chunksRemoved, 0);
    assert.deepEqual(await Promise.all([hub.services.retention.tick(), second.retention.tick()]), [null, null], 'the day is claimed');
    const scheduled = (await api.get('/admin/retention/runs', root)).body.runs.filter((r: any) => r.trigger === 'schedule');
    assert.equal(scheduled.length, 1);
    const audit = await hub.sql.one<{ actorType: string; userId: string | null }>(
      `SELECT actor_type AS "actorType", actor_user_id AS "userId" FROM audit_log WHERE action = 'admin.retention_run' AND target_id = $1`,
      [run.id],
    );
    assert.deepEqual(audit, { actorType: 'internal', userId: null }, 'a scheduled run is the hub’s own');
  });

  test('an interrupted run goes on from its cursor in another process and ends as an uninterrupted one would', async () => {
    const f = factories(hub);
    const teamD = await f.team(owner);
    assert.equal((await api.put(`/settings/tenant?tenantId=${teamD.id}`, { audio_retention_days: 10 }, owner)).status, 200);
    const satD = await makeSatellite(hub, teamD, owner);
    for (let i = 1; i <= 7; i++) await chunk(`d${i}`, satD, 15 + i / 24);
    dets.d3 = await makeDetection(hub, { chunk: chunks.d3 });
    await pin(dets.d3);
    dets.d6 = await makeDetection(hub, { chunk: chunks.d6, verificationStatus: 'confirmed' });
    for (const n of ['d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7']) sizes[n] = (await hub.infra.storage.stat(chunks[n].key))!.size;
    const D_REMOVED = ['d1', 'd2', 'd4', 'd5', 'd7'];

    hub.clock.freeze(new Date(T0.getTime() + 2 * DAY));
    // The first process does one batch of two and stops (as if killed): the run stays running.
    const first = await hub.services.retention.tick({ batchSize: 2, maxBatches: 1 });
    assert.ok(first);
    const row = await hub.sql.one<{ status: string; cursor: string | null }>(
      'SELECT status, cursor_tenant_id AS cursor FROM retention_runs WHERE id = $1',
      [first.id],
    );
    assert.equal(row.status, 'running');
    assert.ok(row.cursor, 'progress recorded');

    const second = createServices(hub.infra);
    assert.equal(await second.retention.tick({ batchSize: 2 }), null, 'the lease is still held');
    hub.clock.advanceMinutes(6);
    const resumed = await second.retention.tick({ batchSize: 2 });
    assert.ok(resumed);
    assert.equal(resumed.id, first.id, 'the same run, taken over');
    assert.equal(resumed.status, 'finished', resumed.error ?? '');
    // As one uninterrupted run over this state: D's five plain chunks go, its two and the others' kept stay.
    assert.equal(resumed.chunksRemoved, D_REMOVED.length);
    assert.equal(resumed.bytesFreed, bytesOf(D_REMOVED));
    assert.equal(resumed.chunksKept, KEPT.length + 2);
    for (const n of D_REMOVED) assert.equal((await stored(n)) || !(await marked(n)), false, `${n}: removed and marked`);
    for (const n of ['d3', 'd6', ...KEPT, ...YOUNG]) assert.equal((await stored(n)) && !(await marked(n)), true, `${n}: kept`);
    assert.equal(await second.retention.tick(), null, 'nothing left to do today');
    const audits = await hub.sql.query('SELECT 1 FROM audit_log WHERE action = $1 AND target_id = $2', ['admin.retention_run', first.id]);
    assert.equal(audits.length, 1, 'one audit entry for the run');
  });
});
