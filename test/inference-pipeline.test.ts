/**
 * The inference worker's pipeline (issue 31, "measured at BirdNET's size"): the model runs on a
 * thread of its own and windows that wait together run as one batch when the model's first
 * dimension is free; the worker takes several jobs at once but records a satellite's chunks in
 * the order it took them. Models are generated here (fixed logits, an embedding that measures the
 * audio, so a test can tell whose samples a result came from).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModel, type Model } from '../src/infra/classifier/onnx.ts';
import { inOrder } from '../src/inference/in-order.ts';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { audioBody, RawSatellite } from './helpers/raw-satellite.ts';
import { waitFor } from './helpers/wait.ts';
import { fixedLogitsModel } from './helpers/onnx-models.ts';
import { makeWav } from '../src/protocol/wav.ts';

const LABELS = ['Turdus merula_Eurasian Blackbird', 'Parus major_Great Tit'];
const N = 144_000;

/** 3 s of a constant level (of 1): its mean magnitude is the level, so the embedding names the window. */
const level = (v: number) => new Float32Array(N).fill(v);

describe('the model off the thread, in batches', () => {
  const models: Model[] = [];
  after(async () => {
    for (const m of models) await m.close();
  });
  const load = async (batch: boolean, offThread: boolean) => {
    const m = await loadModel({
      model: new Uint8Array(fixedLogitsModel({ inputSamples: N, logits: [2, -1], embeddingSplitAt: N / 2, batch, slow: true })),
      labels: LABELS,
      offThread,
      maxBatch: 4,
    });
    models.push(m);
    return m;
  };

  test('off the thread, a window gives what it gives on the calling thread', async () => {
    const [here, there] = await Promise.all([load(false, false), load(false, true)]);
    const a = await here.analyze(level(0.25), { minConfidence: 0 });
    const b = await there.analyze(level(0.25), { minConfidence: 0 });
    assert.deepEqual(
      b.predictions.map((p) => [p.label, p.confidence]),
      a.predictions.map((p) => [p.label, p.confidence]),
    );
    assert.deepEqual(Array.from(b.embedding!), Array.from(a.embedding!));
    assert.ok(Math.abs(b.embedding![0] - 0.25) < 1e-4, `embedding ${Array.from(b.embedding!)}`);
  });

  test('windows that wait together run as batches of at most maxBatch, each answered with its own row', async () => {
    const m = await load(true, true);
    const before = m.runStats();
    const levels = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
    const results = await Promise.all(levels.map((v) => m.analyze(level(v), { minConfidence: 0 })));
    results.forEach((r, i) => {
      assert.ok(Math.abs(r.embedding![0] - levels[i]) < 1e-4, `window ${i}: embedding ${Array.from(r.embedding!)}`);
      assert.equal(r.embedding!.length, 4);
      assert.deepEqual(
        r.predictions.map((p) => p.label),
        LABELS,
      );
    });
    const after = m.runStats();
    assert.equal(after.windows - before.windows, levels.length);
    const runs = after.runs - before.runs;
    // Seven windows in batches of at most four: two runs at the fewest, fewer than one per window.
    assert.ok(runs >= 2 && runs < levels.length, `${runs} runs for ${levels.length} windows`);
  });

  test('a model whose batch dimension is fixed at 1 runs one window at a time', async () => {
    const m = await load(false, true);
    const before = m.runStats();
    const results = await Promise.all([0.1, 0.2, 0.3].map((v) => m.analyze(level(v), { minConfidence: 0 })));
    assert.deepEqual(
      results.map((r) => Math.round(r.embedding![0] * 10)),
      [1, 2, 3],
    );
    const after = m.runStats();
    assert.equal(after.runs - before.runs, 3);
  });

  test('a closed model refuses to run, with the reason', async () => {
    const m = await load(true, true);
    await m.close();
    await assert.rejects(m.analyze(level(0.1)), /closed/);
    assert.equal(m.usable, false);
  });
});

describe('jobs in flight keep their order', () => {
  test('a later job that is ready first waits for the earlier ones to record or give up', async () => {
    const order = inOrder();
    const seen: string[] = [];
    const a = order.take();
    const b = order.take();
    const c = order.take();
    const done = Promise.all([
      c.turn.then(() => {
        seen.push('c');
        c.done();
      }),
      b.turn.then(() => {
        seen.push('b');
        b.done();
      }),
    ]);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen, [], 'nobody goes before the first place is done');
    // The first job gives up its place (nothing heard, or a failure): the others go in their order.
    a.done();
    await done;
    assert.deepEqual(seen, ['b', 'c']);
  });
});

describe('the hub worker with jobs in flight', () => {
  let hub: Hub;
  const sats: RawSatellite[] = [];
  before(async () => {
    hub = await startHub({ env: { INFERENCE_JOBS_IN_FLIGHT: process.env.T_IN_FLIGHT ?? '8' } });
  });
  after(async () => {
    for (const s of sats) await s.close();
    await hub.close();
  });

  test("a satellite's chunks sent back to back are recorded in order: the first of the day is the earliest chunk's", async () => {
    const f = factories(hub);
    const api = client(hub.url);
    const admin = await f.user({ admin: true });
    const owner = await f.user();
    const team = await f.team(owner);
    const form = new FormData();
    form.set('name', 'Always a blackbird');
    form.set(
      'model',
      new Blob([new Uint8Array(fixedLogitsModel({ inputSamples: N, logits: [3, -5], batch: true, slow: true }))]),
      'model.onnx',
    );
    form.set('labels', new Blob([LABELS.join('\n')]), 'labels.txt');
    const up = await fetch(`${hub.url}/api/admin/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}` },
      body: form,
    });
    assert.equal(up.status, 201, await up.clone().text());
    const model = (await up.json()) as { id: string };
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { inference_model: model.id }, owner)).status, 200);

    const sat = await RawSatellite.register(hub, owner, team);
    sats.push(sat);
    const t0 = hub.clock.now().getTime() - 60_000;
    const wav = makeWav(new Int16Array(N).fill(1000));
    const bodies = Array.from({ length: 8 }, (_, i) => audioBody(sat, { recordedAt: new Date(t0 + 3000 * i).toISOString() }, wav));
    // One after the other, each acked (so queued) before the next: the queue holds them in the
    // order they were recorded. The team's model loads on the first job, so the worker takes the
    // next ones while it does: they wait, run (as batches) and record side by side.
    for (const b of bodies) assert.equal((await sat.sendAudio(b, b.chunkId)).status, 'stored');

    const rows = await waitFor('eight blackbird detections', async () => {
      const r = await hub.sql.query<{ chunk_id: string; is_first_of_day: boolean }>(
        `SELECT d.chunk_id, d.is_first_of_day FROM detections d JOIN chunks c ON c.id = d.chunk_id
          WHERE d.tenant_id = $1 AND d.species_code = 'eurbla' ORDER BY c.recorded_at`,
        [team.id],
      );
      return r.length === 8 && r;
    });
    assert.deepEqual(
      rows.map((r) => r.chunk_id),
      bodies.map((b) => b.chunkId),
    );
    assert.deepEqual(
      rows.map((r) => r.is_first_of_day),
      [true, false, false, false, false, false, false, false],
    );
  });
});
