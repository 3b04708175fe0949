/**
 * Classifier models (issue 5): a hub admin uploads an ONNX model with a BirdNET labels file
 * (checked by loading it), lists, edits, deletes and sets the default; a team picks a model
 * with the `inference_model` setting and its chunks run through it; a model that fails on a
 * chunk fails that job with the reason and the worker serves the next job.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import onnxProto from 'onnx-proto';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client, type Credential } from './helpers/http.ts';
import { renderChunk, SPECIES_LABELS } from '../src/satellite/soundscape.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { BUILTIN_LABELS_PATH, BUILTIN_MODEL_PATH } from '../src/infra/classifier/onnx.ts';
import { windowStarts } from '../src/inference/worker.ts';
import { waitFor } from './helpers/wait.ts';
import { encodeModel, valueInfo } from './helpers/onnx-models.ts';

const { onnx } = onnxProto;
const MODEL = fs.readFileSync(BUILTIN_MODEL_PATH);
const LABELS = fs.readFileSync(BUILTIN_LABELS_PATH, 'utf8');

/** -1: a symbolic dimension. */
const tensor = (name: string, dims: number[]) =>
  valueInfo(
    name,
    dims.map((d) => (d < 0 ? 'n' : d)),
  );
const encode = encodeModel;
const scalar = (name: string, v: number) =>
  onnx.TensorProto.create({ name, dataType: onnx.TensorProto.DataType.FLOAT, dims: [], floatData: [v] });

/** Input [1, 1000] → Identity: the wrong input shape for BirdNET's contract. */
const wrongShapeModel = () =>
  encode(
    onnx.GraphProto.create({
      name: 'identity',
      node: [onnx.NodeProto.create({ opType: 'Identity', input: ['x'], output: ['y'] })],
      input: [tensor('x', [1, 1000])],
      output: [tensor('y', [1, 1000])],
    }),
  );

/**
 * A model that loads (one score on silence) and fails on sound: its output has
 * 1 + 4·ceil(max|x|) values, so any non-silent chunk gives 5 scores for 1 label.
 */
const throwsOnSoundModel = () =>
  encode(
    onnx.GraphProto.create({
      name: 'throws-on-sound',
      node: [
        onnx.NodeProto.create({ opType: 'Abs', input: ['x'], output: ['a'] }),
        onnx.NodeProto.create({
          opType: 'ReduceMax',
          input: ['a'],
          output: ['m'],
          attribute: [onnx.AttributeProto.create({ name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 0 })],
        }),
        onnx.NodeProto.create({ opType: 'Ceil', input: ['m'], output: ['c'] }),
        onnx.NodeProto.create({ opType: 'Mul', input: ['c', 'four'], output: ['c4'] }),
        onnx.NodeProto.create({ opType: 'Add', input: ['c4', 'one'], output: ['limit'] }),
        onnx.NodeProto.create({ opType: 'Range', input: ['zero', 'limit', 'one'], output: ['y'] }),
      ],
      initializer: [scalar('zero', 0), scalar('one', 1), scalar('four', 4)],
      input: [tensor('x', [1, 144000])],
      output: [tensor('y', [-1])],
    }),
  );

describe('models', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  let sat: { id: string };

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    sat = await makeSatellite(hub, team, owner);
  });
  after(() => hub.close());

  async function upload(
    as: Credential,
    parts: { name?: string; version?: string; model?: Buffer; labels?: string | Buffer; modelName?: string },
  ) {
    const form = new FormData();
    if (parts.name !== undefined) form.set('name', parts.name);
    if (parts.version !== undefined) form.set('version', parts.version);
    if (parts.model) form.set('model', new Blob([new Uint8Array(parts.model)]), parts.modelName ?? 'model.onnx');
    if (parts.labels !== undefined)
      form.set('labels', new Blob([typeof parts.labels === 'string' ? parts.labels : new Uint8Array(parts.labels)]), 'labels.txt');
    const res = await fetch(`${hub.url}/api/admin/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${as.token}` },
      body: form,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text, headers: res.headers };
  }

  /** A stored chunk of `species` (soundscape labels) for the team, enqueued for inference. */
  async function chunkFor(t: TestTeam, satelliteId: string, species: string[], seed: number): Promise<string> {
    const { id: chunkId } = await makeChunk(hub, {
      satellite: { id: satelliteId, tenantId: t.id },
      audio: makeWav(renderChunk({ species, seed })),
    });
    await hub.infra.queue.enqueue(INFERENCE_QUEUE, chunkId, { chunkId, tenantId: t.id, satelliteId });
    return chunkId;
  }

  function jobOf(chunkId: string, status: 'completed' | 'failed') {
    return waitFor(
      `a ${status} job for chunk ${chunkId}`,
      async () => {
        const res = await api.get('/workers/jobs?limit=500', hubAdmin);
        assert.equal(res.status, 200);
        const job = res.body.jobs.find((j: any) => j.chunkId === chunkId && j.status === status);
        assert.ok(job, `no ${status} job for chunk ${chunkId}: ${JSON.stringify(res.body.jobs.slice(0, 5))}`);
        return job;
      },
      { timeoutMs: 30_000 },
    );
  }

  test('the built-in model is listed and is the default', async () => {
    const res = await api.get('/admin/models', hubAdmin);
    assert.equal(res.status, 200);
    assert.equal(res.body.models[0].id, 'builtin');
    assert.equal(res.body.models[0].isDefault, true);
    assert.equal(res.body.models[0].builtin, true);
    assert.equal(res.body.models[0].labelCount, 8);
    assertError(await api.get('/admin/models', owner), 403, 'FORBIDDEN');
    const forTeams = await api.get('/models', owner);
    assert.equal(forTeams.status, 200);
    assert.deepEqual(
      forTeams.body.models.map((m: any) => m.id),
      ['builtin'],
    );
  });

  test('uploading the built-in ONNX file with its labels makes a model, audited', async () => {
    const res = await upload(hubAdmin, { name: 'Copy of built-in', version: '2.4', model: MODEL, labels: LABELS });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.name, 'Copy of built-in');
    assert.equal(res.body.version, '2.4');
    assert.equal(res.body.labelCount, 8);
    assert.equal(res.body.unknownLabelCount, 0);
    assert.equal(res.body.isDefault, false);
    assert.equal(res.body.enabled, true);
    assert.equal(res.body.modelBytes, MODEL.length);
    const stored = await hub.infra.storage.get(`models/${res.body.id}/model.onnx`);
    assert.ok(stored && stored.equals(MODEL), 'the ONNX file is in object storage');
    const audit = await hub.sql.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_log WHERE action = 'admin.birdnet_model_uploaded' AND target_id = $1`,
      [res.body.id],
    );
    assert.equal(audit.n, 1);
    const list = await api.get('/admin/models', hubAdmin);
    assert.ok(list.body.models.some((m: any) => m.id === res.body.id));
  });

  test('uploads that do not fit the contract are refused with the reason (400)', async () => {
    const shape = await upload(hubAdmin, { name: 'wrong shape', model: wrongShapeModel(), labels: 'A b_C\n' });
    // A length of no known family, without sampleRate/windowSeconds: the answer says what to give (issue 31).
    assert.match(assertError(shape as any, 400, 'INVALID_MODEL').message, /1000 samples.*144000.*160000.*sampleRate.*windowSeconds/);
    const fewer = await upload(hubAdmin, { name: 'four labels', model: MODEL, labels: LABELS.split('\n').slice(0, 4).join('\n') });
    assert.match(assertError(fewer as any, 400, 'INVALID_MODEL').message, /no output has one float32 score per label \(4 labels\)/);
    const garbage = await upload(hubAdmin, { name: 'garbage', model: Buffer.from('not onnx at all'), labels: LABELS });
    assert.match(assertError(garbage as any, 400, 'INVALID_MODEL').message, /not a loadable ONNX model/);
    const gap = await upload(hubAdmin, { name: 'gap', model: MODEL, labels: 'A a_B\n\nC c_D\n' });
    assert.match(assertError(gap as any, 400, 'INVALID_LABELS').message, /line 2 is empty/);
    assertError((await upload(hubAdmin, { name: 'no labels', model: MODEL })) as any, 400, 'INVALID_LABELS');
    assertError((await upload(hubAdmin, { model: MODEL, labels: LABELS })) as any, 400, 'BAD_REQUEST');
    assertError(
      (await upload(hubAdmin, { name: 'tflite', model: MODEL, labels: LABELS, modelName: 'model.tflite' })) as any,
      400,
      'INVALID_MODEL',
    );
    assertError(
      (await upload(hubAdmin, { name: 'huge labels', model: MODEL, labels: Buffer.alloc(4 * 1024 * 1024 + 1, 'a') })) as any,
      413,
      'PAYLOAD_TOO_LARGE',
    );
    assertError(await api.post('/admin/models', { name: 'json' }, hubAdmin), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertError((await upload(owner, { name: 'x', model: MODEL, labels: LABELS })) as any, 403, 'FORBIDDEN');
    const n = await hub.sql.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM inference_models WHERE name IN ('wrong shape', 'four labels', 'garbage', 'gap')`,
    );
    assert.equal(n.n, 0, 'nothing refused is stored');
  });

  test('set default, edit, disable and delete follow their rules', async () => {
    const m = (await upload(hubAdmin, { name: 'Second', model: MODEL, labels: LABELS })).body;
    const set = await api.post(`/admin/models/${m.id}/default`, undefined, hubAdmin);
    assert.equal(set.status, 200);
    assert.equal(set.body.isDefault, true);
    const list = (await api.get('/admin/models', hubAdmin)).body.models;
    assert.deepEqual(
      list.filter((x: any) => x.isDefault).map((x: any) => x.id),
      [m.id],
      'one default',
    );
    assertError(await api.del(`/admin/models/${m.id}`, hubAdmin), 409, 'MODEL_IS_DEFAULT');
    assertError(await api.put(`/admin/models/${m.id}`, { enabled: false }, hubAdmin), 409, 'MODEL_IS_DEFAULT');
    assertError(await api.del('/admin/models/builtin', hubAdmin), 409, 'MODEL_BUILTIN');
    assert.equal((await api.post('/admin/models/builtin/default', undefined, hubAdmin)).status, 200);
    const edited = await api.put(`/admin/models/${m.id}`, { name: 'Second (renamed)', description: 'for tests', enabled: false }, hubAdmin);
    assert.equal(edited.status, 200);
    assert.equal(edited.body.name, 'Second (renamed)');
    assert.equal(edited.body.enabled, false);
    assertError(await api.post(`/admin/models/${m.id}/default`, undefined, hubAdmin), 409, 'MODEL_DISABLED');
    assert.ok(!(await api.get('/models', owner)).body.models.some((x: any) => x.id === m.id), 'a disabled model is not offered to teams');
    assertError(await api.put(`/admin/models/${m.id}`, { colour: 'red' }, hubAdmin), 400, 'VALIDATION_FAILED');
    assert.equal((await api.del(`/admin/models/${m.id}`, hubAdmin)).status, 204);
    assert.equal(await hub.infra.storage.get(`models/${m.id}/model.onnx`), null, 'its files are gone');
    assertError(await api.del(`/admin/models/${m.id}`, hubAdmin), 404, 'NOT_FOUND');
    const actions = await hub.sql.query<{ action: string }>(`SELECT action FROM audit_log WHERE target_id = $1 ORDER BY at, action`, [
      m.id,
    ]);
    assert.deepEqual(
      new Set(actions.map((a) => a.action)),
      new Set([
        'admin.birdnet_model_uploaded',
        'admin.birdnet_model_set_default',
        'admin.birdnet_model_updated',
        'admin.birdnet_model_deleted',
      ]),
    );
  });

  test('a team picks a model; its detections carry the model id and unknown labels keep their names', async () => {
    // The built-in graph with its first label renamed to a species the catalog does not know.
    const labels = ['Foous barus_Foo Bird', ...LABELS.trim().split('\n').slice(1)].join('\n');
    const m = (await upload(hubAdmin, { name: 'Renamed cuckoo', model: MODEL, labels })).body;
    assert.equal(m.unknownLabelCount, 1);
    assert.deepEqual(m.unknownLabels, ['Foous barus_Foo Bird']);

    const refused = await api.put(`/settings/tenant?tenantId=${team.id}`, { inference_model: 'no-such-model' }, owner);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.match(refused.body.error.message, /inference_model names no model/);
    const picked = await api.put(`/settings/tenant?tenantId=${team.id}`, { inference_model: m.id, inference_min_confidence: 0.5 }, owner);
    assert.equal(picked.status, 200, picked.text);
    assert.equal(picked.body.inference_model, m.id);

    const chunkId = await chunkFor(team, sat.id, [SPECIES_LABELS[0], SPECIES_LABELS[1]], 11);
    const job = await jobOf(chunkId, 'completed');
    assert.equal(job.modelId, m.id);
    const rows = await hub.sql.query<any>(
      `SELECT species_code, common_name, scientific_name, category, model_id FROM detections WHERE chunk_id = $1 ORDER BY species_code`,
      [chunkId],
    );
    assert.deepEqual(
      rows.map((r) => r.model_id),
      [m.id, m.id],
    );
    const foo = rows.find((r) => r.scientific_name === 'Foous barus');
    assert.deepEqual(foo, {
      species_code: 'x-foous-barus',
      common_name: 'Foo Bird',
      scientific_name: 'Foous barus',
      category: 'other_animal',
      model_id: m.id,
    });
    assert.ok(rows.some((r) => r.species_code === 'eurbla'));

    // The labels mapped into the species table at upload: the unknown one as the model's own species.
    const own = await hub.sql.maybeOne<any>(
      `SELECT code, scientific_name, common_name, category, source FROM species WHERE code = 'x-foous-barus'`,
    );
    assert.deepEqual(own, {
      code: 'x-foous-barus',
      scientific_name: 'Foous barus',
      common_name: 'Foo Bird',
      category: 'other_animal',
      source: 'model',
    });
    const mapped = await hub.sql.query<{ output_index: number; label: string; species_code: string }>(
      'SELECT output_index, label, species_code FROM model_labels WHERE model_id = $1 ORDER BY output_index',
      [m.id],
    );
    assert.deepEqual(
      mapped.map((r) => [r.output_index, r.species_code]),
      [
        [0, 'x-foous-barus'],
        [1, 'eurbla'],
        [2, 'comcha'],
        [3, 'gretit1'],
        [4, 'eurrob1'],
        [5, 'humvoc'],
        [6, 'engine'],
        [7, 'nocall'],
      ],
    );
    assert.equal(mapped[0].label, 'Foous barus_Foo Bird');
    const named = await api.get('/species/translate?speciesCode=x-foous-barus&languages=de,en', owner);
    assert.equal(named.status, 200, named.text);
    assert.deepEqual(named.body, {
      speciesCode: 'x-foous-barus',
      scientificName: 'Foous barus',
      names: { de: 'Foo Bird', en: 'Foo Bird' },
    });

    // Deleting the model puts the team back on the hub default.
    assert.equal((await api.del(`/admin/models/${m.id}`, hubAdmin)).status, 204);
    assert.equal((await api.get(`/settings/tenant?tenantId=${team.id}`, owner)).body.inference_model, null);
  });

  test('hub admins read and correct the label mapping; workers follow a remap on their next job', async () => {
    const owner4 = await f.user();
    const team4 = await f.team(owner4);
    const sat4 = await makeSatellite(hub, team4, owner4);
    const m = (await upload(hubAdmin, { name: 'Remapped', model: MODEL, labels: LABELS })).body;
    assert.equal(
      (await api.put(`/settings/tenant?tenantId=${team4.id}`, { inference_model: m.id, inference_min_confidence: 0.5 }, owner4)).status,
      200,
    );
    const speciesOf = async (chunkId: string) => {
      await jobOf(chunkId, 'completed');
      return hub.sql.query<any>('SELECT species_code, common_name, scientific_name FROM detections WHERE chunk_id = $1', [chunkId]);
    };
    assert.deepEqual(
      (await speciesOf(await chunkFor(team4, sat4.id, [SPECIES_LABELS[1]], 41))).map((r) => r.species_code),
      ['eurbla'],
    );

    const listed = await api.get(`/admin/models/${m.id}/labels`, hubAdmin);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.total, 8);
    assert.deepEqual(listed.body.labels[1], {
      index: 1,
      label: 'Turdus merula_Eurasian Blackbird',
      speciesCode: 'eurbla',
      scientificName: 'Turdus merula',
      commonName: 'Eurasian Blackbird',
      category: 'bird',
      own: false,
    });
    const searched = await api.get(`/admin/models/${m.id}/labels?search=ROBIN&limit=10`, hubAdmin);
    assert.deepEqual(
      searched.body.labels.map((l: any) => l.speciesCode),
      ['eurrob1'],
    );
    assert.equal(searched.body.total, 1);
    assert.deepEqual((await api.get(`/admin/models/${m.id}/labels?own=true`, hubAdmin)).body, { labels: [], total: 0 });

    // A mislabelled output: its later detections take the species it is mapped into; earlier ones keep theirs.
    const remapped = await api.put(`/admin/models/${m.id}/labels/1`, { speciesCode: 'WINWRE4' }, hubAdmin);
    assert.equal(remapped.status, 200, remapped.text);
    assert.deepEqual(remapped.body, {
      index: 1,
      label: 'Turdus merula_Eurasian Blackbird',
      speciesCode: 'winwre4',
      scientificName: 'Troglodytes troglodytes',
      commonName: 'Eurasian Wren',
      category: 'bird',
      own: false,
    });
    const audited = await hub.sql.one<{ details: any }>(
      `SELECT details FROM audit_log WHERE action = 'admin.birdnet_model_updated' AND target_id = $1`,
      [m.id],
    );
    assert.deepEqual(audited.details, { labelIndex: 1, label: 'Turdus merula_Eurasian Blackbird', from: 'eurbla', to: 'winwre4' });
    assert.deepEqual(await speciesOf(await chunkFor(team4, sat4.id, [SPECIES_LABELS[1]], 42)), [
      { species_code: 'winwre4', common_name: 'Eurasian Wren', scientific_name: 'Troglodytes troglodytes' },
    ]);
    assert.equal((await hub.sql.query(`SELECT 1 FROM detections WHERE tenant_id = $1 AND species_code = 'eurbla'`, [team4.id])).length, 1);

    assertError(await api.put(`/admin/models/${m.id}/labels/1`, { speciesCode: 'nosuch9' }, hubAdmin), 400, 'UNKNOWN_SPECIES');
    assertError(await api.put(`/admin/models/${m.id}/labels/8`, { speciesCode: 'eurbla' }, hubAdmin), 404, 'NOT_FOUND');
    assertError(await api.put(`/admin/models/${m.id}/labels/-1`, { speciesCode: 'eurbla' }, hubAdmin), 400, 'VALIDATION_FAILED');
    assertError(await api.put(`/admin/models/nosuch/labels/1`, { speciesCode: 'eurbla' }, hubAdmin), 404, 'NOT_FOUND');
    assertError(await api.get(`/admin/models/${m.id}/labels`, owner4), 403, 'FORBIDDEN');
    // Mapping an output where it already maps changes nothing and writes no audit row.
    assert.equal((await api.put(`/admin/models/${m.id}/labels/1`, { speciesCode: 'winwre4' }, hubAdmin)).status, 200);
    assert.equal(
      (await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'admin.birdnet_model_updated' AND target_id = $1`, [m.id])).length,
      1,
    );
  });

  test('a model without a mapping (uploaded before the species table) is mapped when it loads or is listed', async () => {
    const owner5 = await f.user();
    const team5 = await f.team(owner5);
    const sat5 = await makeSatellite(hub, team5, owner5);
    const m = (await upload(hubAdmin, { name: 'Older upload', model: MODEL, labels: LABELS })).body;
    await hub.sql.query('DELETE FROM model_labels WHERE model_id = $1', [m.id]);
    assert.equal(
      (await api.put(`/settings/tenant?tenantId=${team5.id}`, { inference_model: m.id, inference_min_confidence: 0.5 }, owner5)).status,
      200,
    );
    const chunkId = await chunkFor(team5, sat5.id, [SPECIES_LABELS[2]], 51);
    await jobOf(chunkId, 'completed');
    assert.deepEqual(
      (await hub.sql.query<{ species_code: string }>('SELECT species_code FROM detections WHERE chunk_id = $1', [chunkId])).map(
        (r) => r.species_code,
      ),
      ['comcha'],
    );
    const mapped = await hub.sql.query<{ species_code: string }>(
      'SELECT species_code FROM model_labels WHERE model_id = $1 ORDER BY output_index',
      [m.id],
    );
    assert.deepEqual(
      mapped.map((r) => r.species_code),
      ['comcuc', 'eurbla', 'comcha', 'gretit1', 'eurrob1', 'humvoc', 'engine', 'nocall'],
    );

    await hub.sql.query(`DELETE FROM model_labels WHERE model_id = 'builtin'`);
    const builtin = await api.get('/admin/models/builtin/labels', hubAdmin);
    assert.equal(builtin.status, 200, builtin.text);
    assert.deepEqual(
      builtin.body.labels.map((l: any) => l.speciesCode),
      ['comcuc', 'eurbla', 'comcha', 'gretit1', 'eurrob1', 'humvoc', 'engine', 'nocall'],
    );
  });

  test("the team's sensitivity and minimum confidence reach the worker", async () => {
    const owner3 = await f.user();
    const team3 = await f.team(owner3);
    const sat3 = await makeSatellite(hub, team3, owner3);
    // At slope 0.5 a species without its call scores about 0.11: above 0.01, so all five birds are stored.
    const set = await api.put(
      `/settings/tenant?tenantId=${team3.id}`,
      { inference_sensitivity: 0.5, inference_min_confidence: 0.01 },
      owner3,
    );
    assert.equal(set.status, 200, set.text);
    assertError(await api.put(`/settings/tenant?tenantId=${team3.id}`, { inference_sensitivity: 2 }, owner3), 400, 'VALIDATION_FAILED');
    const chunkId = await chunkFor(team3, sat3.id, [SPECIES_LABELS[4]], 31);
    const job = await jobOf(chunkId, 'completed');
    const rows = await hub.sql.query<{ confidence: number; species_code: string }>(
      `SELECT confidence, species_code FROM detections WHERE chunk_id = $1 AND category = 'bird' ORDER BY confidence DESC`,
      [chunkId],
    );
    assert.equal(rows.length, 5);
    assert.ok(job.detections >= 5, `${job.detections} detections`);
    assert.equal(rows[0].species_code, 'eurrob1');
    // A near clear call's logit is about 2.9 (docs/model.md): sigmoid(0.5 × 2.9) ≈ 0.81.
    assert.ok(rows[0].confidence > 0.75, String(rows[0].confidence));
    assert.ok(
      rows.slice(1).every((r) => r.confidence > 0.01 && r.confidence < 0.25),
      JSON.stringify(rows),
    );
  });

  test('windows inside a chunk: every 3 s minus the overlap while a whole window fits, at least one', () => {
    assert.deepEqual(windowStarts(3000, 0), [0]);
    assert.deepEqual(windowStarts(2700, 2500), [0]);
    assert.deepEqual(windowStarts(3300, 0), [0]);
    assert.deepEqual(windowStarts(3300, 2500), [0]);
    assert.deepEqual(windowStarts(3300, 2900), [0, 100, 200, 300]);
  });

  test('a model that throws fails the job with the reason; the worker serves the next job', async () => {
    const bad = await upload(hubAdmin, { name: 'Throws on sound', model: throwsOnSoundModel(), labels: 'Foous barus_Foo Bird\n' });
    assert.equal(bad.status, 201, bad.text);
    const owner2 = await f.user();
    const team2 = await f.team(owner2);
    const sat2 = await makeSatellite(hub, team2, owner2);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team2.id}`, { inference_model: bad.body.id }, owner2)).status, 200);

    const failing = await chunkFor(team2, sat2.id, [SPECIES_LABELS[2]], 21);
    const failed = await jobOf(failing, 'failed');
    assert.match(failed.error, /inference failed: .*has 5 scores for 1 labels/);
    assert.equal(failed.modelId, bad.body.id);
    assert.equal((await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE chunk_id = $1', [failing])).n, 0);

    // The same worker goes on: a chunk of a team on the default model is classified.
    const next = await chunkFor(team, sat.id, [SPECIES_LABELS[3]], 22);
    const done = await jobOf(next, 'completed');
    assert.equal(done.modelId, 'builtin');
    assert.ok(done.detections >= 1);
  });
});
