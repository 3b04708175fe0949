/**
 * Installing a model in a minute (issue 31): hub admins read the known families, install a model
 * from a URL (here a node:http server in the test serving the built-in ONNX file and its labels)
 * and poll the install; a wrong checksum fails it and stores nothing; only http(s) addresses are
 * fetched, only for hub admins; the model's attribution reaches its detections.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { waitFor } from './helpers/wait.ts';
import { BUILTIN_LABELS_PATH, BUILTIN_MODEL_PATH } from '../src/infra/classifier/onnx.ts';

const MODEL = fs.readFileSync(BUILTIN_MODEL_PATH);
const LABELS = fs.readFileSync(BUILTIN_LABELS_PATH);
const LABEL_COUNT = LABELS.toString('utf8').trim().split('\n').length;
const SHA = crypto.createHash('sha256').update(MODEL).digest('hex');

/** A file server for the hub to fetch from: the model, its labels (plain and gzip-encoded), a 404 and a file that announces more than a model may be. */
function serveFiles(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/model.onnx') {
      return res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(MODEL.length) }).end(MODEL);
    }
    if (req.url === '/labels.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end(LABELS);
    // Compressed on the wire: its Content-Length counts the gzip bytes, not the labels'.
    if (req.url === '/labels.txt.gz') {
      const gz = zlib.gzipSync(LABELS);
      return res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': String(gz.length) }).end(gz);
    }
    if (req.url === '/huge.onnx') {
      res.writeHead(200, { 'content-length': String(600 * 1024 * 1024) });
      return res.write(MODEL);
    }
    res.writeHead(404).end('no such file');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () => {
          server.closeAllConnections();
          return new Promise((r) => server.close(() => r()));
        },
      });
    }),
  );
}

describe('installing models', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;

  before(async () => {
    [hub, files] = await Promise.all([startHub(), serveFiles()]);
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
  });
  after(async () => {
    await files?.close();
    await hub?.close();
  });

  /** Starts an install and waits for it to end; resolves with its last state. */
  async function installed(body: Record<string, unknown>) {
    const started = await api.post('/admin/models/install', body, hubAdmin);
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.state, 'downloading');
    return waitFor(`install ${started.body.id} to end`, async () => {
      const res = await api.get(`/admin/models/installs/${started.body.id}`, hubAdmin);
      assert.equal(res.status, 200, res.text);
      return (res.body.state === 'done' || res.body.state === 'failed') && res.body;
    });
  }

  const modelCount = async () => (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM inference_models')).n;
  const uploadAudits = async () =>
    (await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'admin.birdnet_model_uploaded'`)).n;

  test('hub admins read the known families: licence, attribution, where published, and null where a checksum is not known', async () => {
    const res = await api.get('/admin/models/known', hubAdmin);
    assert.equal(res.status, 200);
    const byId = new Map(res.body.families.map((f: any) => [f.id, f]));
    assert.deepEqual([...byId.keys()], ['birdnet-v2.4', 'birdnet-v3.0', 'perch-v2']);
    const birdnet: any = byId.get('birdnet-v2.4');
    assert.equal(birdnet.licence.name, 'CC BY-NC-SA 4.0');
    assert.equal(birdnet.licence.commercialUse, false);
    assert.match(birdnet.attribution, /^Powered by BirdNET/);
    assert.deepEqual(birdnet.input, { seconds: 3, sampleRate: 48000, samples: 144000 });
    assert.equal(birdnet.inputFamily, '3s-48k', 'the classifier reads 144,000 samples as 3 s at 48 kHz');
    assert.deepEqual(
      birdnet.variants.map((v: any) => v.id),
      ['birdnet-v2.4-fp32', 'birdnet-v2.4-int8'],
    );
    for (const f of res.body.families) for (const v of f.variants) assert.equal(v.sha256, null, `${v.id}: no checksum was verified`);
    const perch: any = byId.get('perch-v2');
    assert.equal(perch.licence.name, 'Apache 2.0');
    assert.deepEqual(perch.input, { seconds: 5, sampleRate: 32000, samples: 160000 });
    assert.equal(perch.inputFamily, '5s-32k');
    assertError(await api.get('/admin/models/known', owner), 403, 'FORBIDDEN');
  });

  test('an install from a URL with the right checksum is listed, audited and credits its family on its detections', async () => {
    const before = await uploadAudits();
    const done = await installed({
      url: `${files.url}/model.onnx`,
      labelsUrl: `${files.url}/labels.txt.gz`,
      sha256: SHA.toUpperCase(),
      name: 'Installed from a URL',
      version: '2.4',
      knownFamily: 'birdnet-v2.4',
      makeDefault: true,
    });
    assert.equal(done.state, 'done', JSON.stringify(done.error));
    assert.equal(done.receivedBytes, MODEL.length);
    assert.equal(done.totalBytes, MODEL.length);
    assert.equal(done.error, null);

    const model = (await api.get('/admin/models', hubAdmin)).body.models.find((m: any) => m.id === done.modelId);
    assert.ok(model, 'the installed model is listed');
    assert.equal(model.name, 'Installed from a URL');
    assert.equal(model.sha256, SHA);
    assert.equal(model.labelCount, LABEL_COUNT);
    assert.equal(model.knownFamily, 'birdnet-v2.4');
    assert.equal(model.family, '3s-48k', 'its input family, read from the file, is another field');
    assert.match(model.attribution, /^Powered by BirdNET/);
    assert.equal(model.sourceUrl, `${files.url}/model.onnx`);
    assert.equal(model.isDefault, true, 'makeDefault made it the hub default');
    const actions = await hub.sql.query<{ action: string }>('SELECT action FROM audit_log WHERE target_id = $1 ORDER BY id', [
      done.modelId,
    ]);
    assert.deepEqual(
      actions.map((a) => a.action),
      ['admin.birdnet_model_uploaded', 'admin.birdnet_model_set_default'],
    );
    assert.equal((await api.post('/admin/models/builtin/default', undefined, hubAdmin)).status, 200);
    assert.equal(await uploadAudits(), before + 1);
    const audit = await hub.sql.one(
      `SELECT actor_user_id, details FROM audit_log WHERE action = 'admin.birdnet_model_uploaded' AND target_id = $1`,
      [done.modelId],
    );
    assert.equal(audit.actor_user_id, hubAdmin.id);
    assert.equal(audit.details.sourceUrl, `${files.url}/model.onnx`);

    const offered = (await api.get('/models', owner)).body.models.find((m: any) => m.id === done.modelId);
    assert.match(offered.attribution, /^Powered by BirdNET/);
    const detection = await makeDetection(hub, { team, modelId: done.modelId });
    const detail = await api.get(`/detections/${detection}`, owner);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.modelId, done.modelId);
    assert.match(detail.body.modelAttribution, /^Powered by BirdNET/);
    const shared = await api.get(`/share/detection/${detection}/${hub.services.share.tokenFor(detection)}`, null);
    assert.equal(shared.status, 200, shared.text);
    assert.match(shared.body.modelAttribution, /^Powered by BirdNET/, 'a share link credits it too');
    const builtin = await api.get(`/detections/${await makeDetection(hub, { team })}`, owner);
    assert.equal(builtin.body.modelAttribution, null, 'the built-in model credits nobody');
  });

  test('a wrong checksum fails the install with CHECKSUM_MISMATCH and stores nothing', async () => {
    const [models, audits] = [await modelCount(), await uploadAudits()];
    const done = await installed({
      url: `${files.url}/model.onnx`,
      labelsUrl: `${files.url}/labels.txt.gz`,
      sha256: '0'.repeat(64),
      name: 'Wrong sum',
    });
    assert.equal(done.state, 'failed');
    assert.equal(done.error.code, 'CHECKSUM_MISMATCH');
    assert.match(done.error.message, new RegExp(SHA));
    assert.equal(done.modelId, null);
    assert.equal(await modelCount(), models, 'no model row');
    assert.equal(await uploadAudits(), audits, 'no audit entry');
  });

  test('downloads that cannot succeed fail with their reason', async () => {
    const missing = await installed({ url: `${files.url}/nothing.onnx`, labelsUrl: `${files.url}/labels.txt`, name: 'Missing' });
    assert.equal(missing.error.code, 'DOWNLOAD_FAILED');
    assert.match(missing.error.message, /HTTP 404/);
    const huge = await installed({ url: `${files.url}/huge.onnx`, labelsUrl: `${files.url}/labels.txt`, name: 'Huge' });
    assert.equal(huge.error.code, 'DOWNLOAD_TOO_LARGE');
    // BirdNET v2.4's labels come from the species catalog: 6,522 of them do not fit a 5-output model.
    const catalogLabels = await installed({ url: `${files.url}/model.onnx`, name: 'No labels given', knownFamily: 'birdnet-v2.4' });
    assert.equal(catalogLabels.error.code, 'INVALID_MODEL');
    assert.match(catalogLabels.error.message, /6522 labels/);
  });

  test('only http(s) addresses from hub admins are fetched; what can be refused at once answers 400', async () => {
    const fetched = files.requests.length;
    const post = (body: Record<string, unknown>, as = hubAdmin) => api.post('/admin/models/install', { name: 'x', ...body }, as);
    assertError(await post({ url: 'file:///etc/passwd', labelsUrl: `${files.url}/labels.txt` }), 400, 'INVALID_URL');
    assertError(await post({ url: 'ftp://127.0.0.1/model.onnx', labelsUrl: `${files.url}/labels.txt` }), 400, 'INVALID_URL');
    assertError(await post({ url: '/model.onnx', labelsUrl: `${files.url}/labels.txt` }), 400, 'INVALID_URL');
    assertError(await post({ url: `${files.url}/model.onnx`, labelsUrl: 'file:///etc/hosts' }), 400, 'INVALID_URL');
    assertError(await post({ url: `${files.url}/model.onnx` }), 400, 'INVALID_LABELS');
    assertError(
      await post({ url: `${files.url}/model.onnx`, labelsUrl: `${files.url}/labels.txt`, knownFamily: 'nope' }),
      400,
      'UNKNOWN_FAMILY',
    );
    assertError(await post({ url: `${files.url}/model.onnx`, labelsUrl: `${files.url}/labels.txt`, sha256: 'abc' }), 400, 'INVALID_SHA256');
    assertError(await post({ labelsUrl: `${files.url}/labels.txt` }), 400, 'VALIDATION_FAILED');
    assertError(await post({ url: `${files.url}/model.onnx`, labelsUrl: `${files.url}/labels.txt` }, owner), 403, 'FORBIDDEN');
    assertError(await api.get('/admin/models/installs/no-such-install', hubAdmin), 404, 'NOT_FOUND');
    assert.equal(files.requests.length, fetched, 'nothing was fetched');
  });

  test('an upload may name a family or its own attribution, which its detections then credit', async () => {
    const form = new FormData();
    form.set('name', 'Uploaded with a credit');
    form.set('attribution', 'Trained by the Example Bird Club');
    form.set('model', new Blob([new Uint8Array(MODEL)]), 'model.onnx');
    form.set('labels', new Blob([new Uint8Array(LABELS)]), 'labels.txt');
    const res = await fetch(`${hub.url}/api/admin/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hubAdmin.token}` },
      body: form,
    });
    const body = await res.json();
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.equal(body.knownFamily, null);
    assert.equal(body.attribution, 'Trained by the Example Bird Club');
    const detail = await api.get(`/detections/${await makeDetection(hub, { team, modelId: body.id })}`, owner);
    assert.equal(detail.body.modelAttribution, 'Trained by the Example Bird Club');

    const unknown = new FormData();
    unknown.set('name', 'Unknown family');
    unknown.set('knownFamily', 'nope');
    unknown.set('model', new Blob([new Uint8Array(MODEL)]), 'model.onnx');
    unknown.set('labels', new Blob([new Uint8Array(LABELS)]), 'labels.txt');
    const refused = await fetch(`${hub.url}/api/admin/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hubAdmin.token}` },
      body: unknown,
    });
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error.code, 'UNKNOWN_FAMILY');
  });
});
