/**
 * Model families (issue 31): a model's input length says what it listens to. A 5 s / 32 kHz model
 * (BirdNET 3.0, Perch 2) hears the chunks' 48 kHz audio resampled, in windows that run on from a
 * chunk into the satellite's next one; its detections name both chunks. A neighbour that never
 * comes is waited for (by the injected clock), then the window is padded with silence and its
 * detections say so. BirdNET-shaped models give BirdNET's exact sigmoid. Perch's class lists (eBird
 * codes) map into the catalog. Everything goes through the API and the broker, as a hub admin and a
 * satellite would; the models are generated here with fixed logits.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { audioBody, RawSatellite } from './helpers/raw-satellite.ts';
import { waitFor } from './helpers/wait.ts';
import { fixedLogitsModel, sigmoidOf } from './helpers/onnx-models.ts';
import { makeWav } from '../src/protocol/wav.ts';

/** 3 s of a 1 kHz tone at 48 kHz with peak `amplitude` (of 1), as 16-bit PCM WAV. */
function toneChunk(amplitude: number): Buffer {
  const samples = new Int16Array(144_000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(32767 * amplitude * Math.sin((2 * Math.PI * 1000 * i) / 48_000));
  return makeWav(samples);
}
/** The mean magnitude of a sine of that peak. */
const meanOfSine = (amplitude: number) => (2 / Math.PI) * amplitude;

const BLACKBIRD = 'Turdus merula_Eurasian Blackbird';
const GREAT_TIT = 'Parus major_Great Tit';

describe('model families (issue 31)', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  const satellites: RawSatellite[] = [];

  before(async () => {
    // A waiting window looks again every 50 ms of real time; how long it waits is the injected clock's.
    hub = await startHub({ env: { INFERENCE_WINDOW_RECHECK_MS: '50' } });
    api = client(hub.url);
    f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
  });
  after(async () => {
    for (const s of satellites) await s.close();
    await hub.close();
  });

  async function upload(parts: { name: string; model: Buffer; labels: string; fields?: Record<string, string> }) {
    const form = new FormData();
    form.set('name', parts.name);
    for (const [k, v] of Object.entries(parts.fields ?? {})) form.set(k, v);
    form.set('model', new Blob([new Uint8Array(parts.model)]), 'model.onnx');
    form.set('labels', new Blob([parts.labels]), 'labels.txt');
    const res = await fetch(`${hub.url}/api/admin/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hubAdmin.token}` },
      body: form,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text, headers: res.headers };
  }

  async function satelliteOf(t: TestTeam, as: TestUser): Promise<RawSatellite> {
    const s = await RawSatellite.register(hub, as, t);
    satellites.push(s);
    return s;
  }

  /** Publishes one 3 s chunk recorded at `recordedAt` and waits for its `stored` ack. */
  async function publish(sat: RawSatellite, recordedAt: Date, wav: Buffer): Promise<string> {
    const body = audioBody(sat, { recordedAt: recordedAt.toISOString() }, wav);
    const ack = await sat.sendAudio(body, body.chunkId);
    assert.equal(ack.status, 'stored', JSON.stringify(ack));
    return body.chunkId;
  }

  const rowsOf = (chunkId: string) =>
    hub.sql.query<any>(
      `SELECT id, species_code, confidence, start_ms, end_ms, padded, span_chunk_ids::text[] AS span, model_id FROM detections WHERE chunk_id = $1 ORDER BY species_code`,
      [chunkId],
    );
  const detectionsOf = (chunkId: string) =>
    waitFor(`detections of chunk ${chunkId}`, async () => (await rowsOf(chunkId)).length > 0 && rowsOf(chunkId));

  async function embeddingOf(detectionId: string): Promise<number[]> {
    const row = await hub.sql.one<{ dims: number; vector: Uint8Array }>(
      'SELECT dims, vector FROM detection_embeddings WHERE detection_id = $1',
      [detectionId],
    );
    const bytes = Buffer.from(row.vector);
    return Array.from({ length: row.dims }, (_, i) => bytes.readFloatLE(i * 4));
  }

  let fiveSecond: any;

  test('a 5 s / 32 kHz model is recognised from its input and listed with its family, rate, window and embedding', async () => {
    const res = await upload({
      name: 'Five seconds',
      model: fixedLogitsModel({ inputSamples: 160_000, logits: [2, -3], embeddingSplitAt: 96_000 }),
      labels: `${BLACKBIRD}\n${GREAT_TIT}\n`,
    });
    assert.equal(res.status, 201, res.text);
    fiveSecond = res.body;
    assert.deepEqual(
      {
        family: res.body.family,
        sampleRate: res.body.sampleRate,
        windowSeconds: res.body.windowSeconds,
        inputSamples: res.body.inputSamples,
        embeddingOutput: res.body.embeddingOutput,
        embeddingSize: res.body.embeddingSize,
      },
      { family: '5s-32k', sampleRate: 32_000, windowSeconds: 5, inputSamples: 160_000, embeddingOutput: 'embedding', embeddingSize: 4 },
    );
    const builtin = (await api.get('/admin/models', hubAdmin)).body.models.find((m: any) => m.id === 'builtin');
    assert.equal(builtin.family, '3s-48k');
    assert.equal(builtin.sampleRate, 48_000);
    assert.equal(builtin.windowSeconds, 3);
    assert.equal(builtin.embeddingOutput, null);
  });

  test('an input length of no family is refused saying what to give; with sampleRate it is a custom family', async () => {
    const model = fixedLogitsModel({ inputSamples: 96_000, logits: [1] });
    const refused = await upload({ name: 'Three seconds at 32k', model, labels: `${BLACKBIRD}\n` });
    const message = assertError(refused as any, 400, 'INVALID_MODEL').message;
    assert.match(message, /96000 samples/);
    assert.match(message, /sampleRate/);
    assert.match(message, /windowSeconds/);
    const wrong = await upload({
      name: 'Wrong product',
      model,
      labels: `${BLACKBIRD}\n`,
      fields: { sampleRate: '16000', windowSeconds: '3' },
    });
    assert.match(assertError(wrong as any, 400, 'INVALID_MODEL').message, /16000 Hz × 3 s is 48000/);
    assertError(
      (await upload({ name: 'Not a number', model, labels: `${BLACKBIRD}\n`, fields: { sampleRate: 'fast' } })) as any,
      400,
      'BAD_REQUEST',
    );

    const custom = await upload({ name: 'Three seconds at 32k', model, labels: `${BLACKBIRD}\n`, fields: { sampleRate: '32000' } });
    assert.equal(custom.status, 201, custom.text);
    assert.deepEqual([custom.body.family, custom.body.sampleRate, custom.body.windowSeconds], ['custom', 32_000, 3]);
  });

  test('made the hub default, a 5 s model hears a chunk and the next one of the same satellite: its detection spans both', async () => {
    assert.equal((await api.post(`/admin/models/${fiveSecond.id}/default`, undefined, hubAdmin)).status, 200);
    const sat = await satelliteOf(team, owner);
    const other = await satelliteOf(team, owner);
    const t0 = new Date(hub.clock.now().getTime() - 60_000);
    const at = (ms: number) => new Date(t0.getTime() + ms);

    const first = await publish(sat, at(0), toneChunk(0.1));
    // Another satellite's chunk recorded at the same moment as the neighbour: never part of the window.
    await publish(other, at(3000), toneChunk(0.9));
    const second = await publish(sat, at(3000), toneChunk(0.4));
    const third = await publish(sat, at(6000), toneChunk(0.2));

    const [d] = await detectionsOf(first);
    assert.equal(d.species_code, 'eurbla');
    assert.deepEqual(d.span, [first, second]);
    assert.equal(d.padded, false);
    assert.equal(d.model_id, fiveSecond.id);
    assert.deepEqual([d.start_ms, d.end_ms], [0, 5000]);
    assert.ok(Math.abs(d.confidence - sigmoidOf(2, 1)) < 1e-6, String(d.confidence));

    // The window's embedding: the first 3 s (96000 samples at 32 kHz) are the first chunk's tone, the
    // last 2 s the second's, both resampled to 32 kHz with their levels kept.
    const [meanFirst, meanSecond, peakFirst, peakSecond] = await embeddingOf(d.id);
    assert.ok(Math.abs(meanFirst / meanOfSine(0.1) - 1) < 0.02, `first 3 s: ${meanFirst}`);
    assert.ok(Math.abs(meanSecond / meanOfSine(0.4) - 1) < 0.02, `last 2 s: ${meanSecond}`);
    assert.ok(Math.abs(peakFirst - 0.1) < 0.01 && Math.abs(peakSecond - 0.4) < 0.02, `peaks ${peakFirst}, ${peakSecond}`);

    // The second chunk's window runs on into the third.
    const [d2] = await detectionsOf(second);
    assert.deepEqual(d2.span, [second, third]);

    // The API names the chunks too; the detection stays on its first chunk.
    const shown = await api.get(`/detections/${d.id}`, owner);
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.audioChunkId, first);
    assert.deepEqual(shown.body.spanChunkIds, [first, second]);
    assert.equal(shown.body.padded, false);
    const listed = await api.get(`/detections?tenantId=${team.id}&satelliteId=${sat.id}&includeTentative=true&limit=10`, owner);
    assert.equal(listed.status, 200, listed.text);
    const item = listed.body.detections.find((x: any) => x.id === d.id);
    assert.deepEqual([item?.audioChunkId, item?.spanChunkIds, item?.padded], [first, [first, second], false]);
  });

  test('a neighbour that never comes is waited for, then the window is padded with silence and marked', async () => {
    const sat = await satelliteOf(team, owner);
    const lonely = await publish(sat, new Date(hub.clock.now().getTime() - 30_000), toneChunk(0.3));
    // It keeps looking for the chunk after it (several looks), and stores nothing meanwhile.
    await waitFor('three looks for the missing neighbour', async () => {
      const jobs = (await api.get(`/workers/jobs?tenantId=${team.id}&limit=500`, owner)).body.jobs ?? [];
      return jobs.filter((j: any) => j.chunkId === lonely && j.status === 'completed').length >= 3;
    });
    assert.deepEqual(await rowsOf(lonely), [], 'nothing is stored while the window waits');

    hub.clock.advance(31_000);
    const [d] = await detectionsOf(lonely);
    assert.equal(d.padded, true);
    assert.equal(d.span, null, 'it spans its own chunk only');
    assert.deepEqual([d.start_ms, d.end_ms], [0, 5000]);
    const [meanFirst, meanRest] = await embeddingOf(d.id);
    assert.ok(Math.abs(meanFirst / meanOfSine(0.3) - 1) < 0.02, String(meanFirst));
    assert.ok(meanRest < 1e-3, `the last 2 s are silence: ${meanRest}`);
    const shown = await api.get(`/detections/${d.id}`, owner);
    assert.deepEqual([shown.body.padded, shown.body.spanChunkIds], [true, [lonely]]);
  });

  test("a BirdNET-shaped model's confidences are 1/(1+exp(-sensitivity × clip(logit, ±20))) exactly", async () => {
    const labels = [
      BLACKBIRD,
      'Erithacus rubecula_European Robin',
      GREAT_TIT,
      'Fringilla coelebs_Common Chaffinch',
      'Cuculus canorus_Common Cuckoo',
      'Sylvia atricapilla_Eurasian Blackcap',
    ];
    // 25 is clipped to 20: at sensitivity 0.5 that reads 0.9999546 instead of 0.9999963.
    const logits = [3.2, -1.5, 0.7, 25, -30, 0.05];
    const m = await upload({
      name: 'BirdNET-shaped',
      model: fixedLogitsModel({ inputSamples: 144_000, logits }),
      labels: labels.join('\n'),
    });
    assert.equal(m.status, 201, m.text);
    assert.equal(m.body.family, '3s-48k');
    const owner2 = await f.user();
    const team2 = await f.team(owner2);
    const set = await api.put(
      `/settings/tenant?tenantId=${team2.id}`,
      { inference_model: m.body.id, inference_sensitivity: 0.5, inference_min_confidence: 0.01 },
      owner2,
    );
    assert.equal(set.status, 200, set.text);
    const sat = await satelliteOf(team2, owner2);
    const chunkId = await publish(sat, new Date(hub.clock.now().getTime() - 10_000), toneChunk(0.2));

    const rows = await detectionsOf(chunkId);
    const expected = new Map([
      ['eurbla', sigmoidOf(3.2, 0.5)],
      ['eurrob1', sigmoidOf(-1.5, 0.5)],
      ['gretit1', sigmoidOf(0.7, 0.5)],
      ['comcha', sigmoidOf(25, 0.5)],
      ['blackc1', sigmoidOf(0.05, 0.5)],
    ]);
    // The cuckoo's σ(0.5 × −20) = 4.5e-5 is under the minimum confidence.
    assert.deepEqual(rows.map((r: any) => r.species_code).sort(), ['blackc1', 'comcha', 'eurbla', 'eurrob1', 'gretit1']);
    for (const r of rows) {
      const want = expected.get(r.species_code)!;
      assert.ok(Math.abs(r.confidence - want) < 1e-6, `${r.species_code}: ${r.confidence} vs ${want}`);
      assert.deepEqual([r.padded, r.span, r.start_ms, r.end_ms], [false, null, 0, 3000]);
    }
    assert.ok(Math.abs(sigmoidOf(25, 0.5) - 0.9999546) < 1e-7);
  });

  test("Perch's class list (eBird codes) maps into the catalog; unknown codes are listed and keep their own species", async () => {
    // Perch knows species BirdNET's catalog does not (Common Ostrich, ostric2).
    const codes = ['comcuc', 'eurbla', 'INTEGR', 'ostric2', 'Turdus philomelos'];
    const res = await upload({
      name: 'Perch-like',
      model: fixedLogitsModel({ inputSamples: 160_000, logits: [4, -6, -6, -6, -6] }),
      labels: codes.join('\n'),
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.family, '5s-32k');
    assert.equal(res.body.embeddingOutput, null);
    assert.deepEqual(res.body.unknownLabels, ['ostric2']);
    assert.equal(res.body.unknownLabelCount, 1);

    const labels = await api.get(`/admin/models/${res.body.id}/labels`, hubAdmin);
    assert.equal(labels.status, 200, labels.text);
    assert.deepEqual(
      labels.body.labels.map((l: any) => [l.label, l.speciesCode, l.commonName, l.own]),
      [
        ['comcuc', 'comcuc', 'Common Cuckoo', false],
        ['eurbla', 'eurbla', 'Eurasian Blackbird', false],
        // An eBird 2021 code resolves to the current one, in any case.
        ['INTEGR', 'integr1', 'Intermediate Egret', false],
        ['ostric2', 'x-ostric2', 'ostric2', true],
        // A scientific name alone maps too.
        ['Turdus philomelos', 'sonthr1', 'Song Thrush', false],
      ],
    );

    // A team on the Perch-like model: its detection carries the catalog's species for the code.
    const owner3 = await f.user();
    const team3 = await f.team(owner3);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team3.id}`, { inference_model: res.body.id }, owner3)).status, 200);
    const sat = await satelliteOf(team3, owner3);
    const t0 = new Date(hub.clock.now().getTime() - 20_000);
    const first = await publish(sat, t0, toneChunk(0.1));
    await publish(sat, new Date(t0.getTime() + 3000), toneChunk(0.1));
    const [d] = await detectionsOf(first);
    assert.equal(d.species_code, 'comcuc');
    const shown = await api.get(`/detections/${d.id}`, owner3);
    assert.deepEqual([shown.body.commonName, shown.body.scientificName], ['Common Cuckoo', 'Cuculus canorus']);
  });
});
