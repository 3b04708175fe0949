/**
 * Mobile app releases (issue 22): upload, latest, download with ranges, force toggle, delete,
 * the 20-item list, refusals that leave nothing behind, and who may call what.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { assertError, client, type Credential } from './helpers/http.ts';

const MAX_BYTES = 64 * 1024;
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
/** A package-like file: zip magic, then random bytes. */
const pkg = (size = 4096) => Buffer.concat([ZIP, crypto.randomBytes(size - ZIP.length)]);
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

describe('mobile releases', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let admin: TestUser;
  let owner: TestUser;

  before(async () => {
    hub = await startHub({ env: { MOBILE_MAX_BYTES: String(MAX_BYTES) } });
    api = client(hub.url);
    const f = factories(hub);
    admin = await f.user({ admin: true });
    owner = await f.user();
    await f.team(owner);
  });
  after(() => hub.close());

  async function upload(
    as: Credential | null,
    parts: { file?: Buffer; filename?: string; version?: string; notes?: string; forceUpdate?: string; extra?: Record<string, string> },
  ) {
    const form = new FormData();
    if (parts.version !== undefined) form.set('version', parts.version);
    if (parts.notes !== undefined) form.set('notes', parts.notes);
    if (parts.forceUpdate !== undefined) form.set('forceUpdate', parts.forceUpdate);
    for (const [k, v] of Object.entries(parts.extra ?? {})) form.set(k, v);
    if (parts.file) form.set('file', new Blob([new Uint8Array(parts.file)]), parts.filename ?? 'app-release.apk');
    const headers: Record<string, string> = as?.token ? { authorization: `Bearer ${as.token}` } : {};
    const res = await fetch(`${hub.url}/api/mobile/upload`, { method: 'POST', headers, body: form });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text, headers: res.headers };
  }

  /** A raw GET of a package (no credentials): status, headers and the bytes. */
  async function download(url: string, headers: Record<string, string> = {}) {
    const res = await fetch(hub.url + url, { headers });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  const rows = async () => (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM mobile_releases')).n;
  const listDir = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
  const objects = () => listDir(path.join(hub.infra.config.dataDir, 'objects', 'mobile'));
  const temps = () => listDir(path.join(hub.infra.config.dataDir, 'tmp'));
  const audits = async (action: string, id: string) =>
    (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE action = $1 AND target_id = $2', [action, id])).n;

  /** Runs a refused upload and checks that it left no row, no object and no temp file. */
  async function refusedLeavesNothing(status: number, code: string, parts: Parameters<typeof upload>[1]) {
    const before = { rows: await rows(), objects: objects() };
    const res = await upload(admin, parts);
    assertError(res as any, status, code);
    assert.equal(await rows(), before.rows, 'no row');
    assert.deepEqual(objects(), before.objects, 'no object under mobile/');
    assert.deepEqual(temps(), [], 'no temp file');
    return res;
  }

  test('without releases, latest says no update and mobile version is null', async () => {
    const res = await api.get('/mobile/latest?current=1.0.0', null);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      updateAvailable: false,
      version: null,
      downloadUrl: null,
      fileSize: null,
      sha256: null,
      forceUpdate: false,
      notes: null,
    });
    assert.equal((await api.get('/system/versions', admin)).body.mobile, null);
  });

  const uploaded = new Map<string, { id: string; bytes: Buffer }>();

  test('an upload answers 201 with the release, audited, stored under mobile/, no temp file left', async () => {
    const bytes = pkg(10_000);
    const res = await upload(admin, { file: bytes, version: '1.0.0', notes: 'First release', forceUpdate: 'false' });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'createdAt',
      'downloadUrl',
      'fileSize',
      'forceUpdate',
      'id',
      'notes',
      'sha256',
      'version',
    ]);
    assert.equal(res.body.version, '1.0.0');
    assert.equal(res.body.notes, 'First release');
    assert.equal(res.body.forceUpdate, false);
    assert.equal(res.body.fileSize, bytes.length);
    assert.equal(res.body.sha256, sha(bytes));
    assert.equal(res.body.downloadUrl, `/api/mobile/download/${res.body.id}`);
    assert.ok(Date.parse(res.body.createdAt) <= hub.clock.now().getTime());
    assert.equal(await audits('admin.mobile_release_uploaded', res.body.id), 1);
    assert.deepEqual(objects(), [`${res.body.id}.apk`]);
    assert.deepEqual(temps(), []);
    uploaded.set('1.0.0', { id: res.body.id, bytes });

    for (const [version, force] of [
      ['1.1.0', 'true'],
      ['1.2.0', 'false'],
    ]) {
      hub.clock.advance(1000);
      const b = pkg(3000);
      const r = await upload(admin, { file: b, version, notes: `Release ${version}`, forceUpdate: force, filename: 'x.APK' });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.forceUpdate, force === 'true');
      uploaded.set(version, { id: r.body.id, bytes: b });
    }
    assert.equal((await api.get('/system/versions', admin)).body.mobile, '1.2.0');
  });

  test('latest compares SemVer: update available, none, forced when a newer release is forced', async () => {
    const latest = async (q: string) => (await api.get(`/mobile/latest${q}`, null)).body;
    const top = uploaded.get('1.2.0')!;
    const from100 = await latest('?current=1.0.0');
    assert.deepEqual(from100, {
      updateAvailable: true,
      version: '1.2.0',
      downloadUrl: `/api/mobile/download/${top.id}`,
      fileSize: top.bytes.length,
      sha256: sha(top.bytes),
      forceUpdate: true,
      notes: 'Release 1.2.0',
    });
    assert.equal((await latest('?current=0.9.0-beta.1')).forceUpdate, true);
    const from110 = await latest('?current=1.1.0');
    assert.equal(from110.updateAvailable, true);
    assert.equal(from110.forceUpdate, false, 'the forced 1.1.0 is installed already');
    const current = await latest('?current=1.2.0');
    assert.equal(current.updateAvailable, false);
    assert.equal(current.forceUpdate, false);
    assert.equal(current.version, '1.2.0');
    assert.equal((await latest('?current=2.0.0')).updateAvailable, false, 'a newer build than any release');
    assert.equal((await latest('?current=1.10.0')).updateAvailable, false, 'SemVer, not text: 1.10.0 > 1.2.0');
    const none = await latest('');
    assert.equal(none.updateAvailable, true);
    assert.equal(none.forceUpdate, false, 'without current: the highest release as it is');
    assertError(await api.get('/mobile/latest?current=v1.2', null), 400, 'INVALID_VERSION');
    assertError(await api.get('/mobile/latest?current=banana', null), 400, 'INVALID_VERSION');
  });

  test('anyone downloads the package: the same bytes, headers for a download', async () => {
    const { id, bytes } = uploaded.get('1.0.0')!;
    const res = await download(`/api/mobile/download/${id}`);
    assert.equal(res.status, 200);
    assert.ok(res.bytes.equals(bytes));
    assert.equal(sha(res.bytes), sha(bytes));
    assert.equal(res.headers.get('content-length'), String(bytes.length));
    assert.equal(res.headers.get('content-type'), 'application/vnd.android.package-archive');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="chorus-1.0.0.apk"');
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.equal(res.headers.get('etag'), `"${sha(bytes)}"`);
    // An upload named x.APK keeps its extension, lower-cased.
    const other = await download(`/api/mobile/download/${uploaded.get('1.1.0')!.id}`);
    assert.equal(other.headers.get('content-disposition'), 'attachment; filename="chorus-1.1.0.apk"');
    assertError(await api.get('/mobile/download/00000000-0000-4000-8000-000000000000', null), 404, 'NOT_FOUND');
  });

  test('range requests: 206 with the bytes asked for, 416 outside the package', async () => {
    const { id, bytes } = uploaded.get('1.0.0')!;
    const url = `/api/mobile/download/${id}`;
    const mid = await download(url, { range: 'bytes=100-199' });
    assert.equal(mid.status, 206);
    assert.ok(mid.bytes.equals(bytes.subarray(100, 200)));
    assert.equal(mid.headers.get('content-range'), `bytes 100-199/${bytes.length}`);
    assert.equal(mid.headers.get('content-length'), '100');
    const tail = await download(url, { range: 'bytes=-16' });
    assert.equal(tail.status, 206);
    assert.ok(tail.bytes.equals(bytes.subarray(bytes.length - 16)));
    const open = await download(url, { range: `bytes=${bytes.length - 10}-` });
    assert.equal(open.status, 206);
    assert.ok(open.bytes.equals(bytes.subarray(bytes.length - 10)));
    const out = await download(url, { range: `bytes=${bytes.length}-` });
    assert.equal(out.status, 416);
    assert.equal(out.headers.get('content-range'), `bytes */${bytes.length}`);
    assert.equal(JSON.parse(out.bytes.toString()).error.code, 'RANGE_NOT_SATISFIABLE');
  });

  test('the force flag toggles, audited, and latest follows it', async () => {
    const { id } = uploaded.get('1.2.0')!;
    const on = await api.put(`/mobile/releases/${id}`, { forceUpdate: true }, admin);
    assert.equal(on.status, 200, on.text);
    assert.equal(on.body.forceUpdate, true);
    assert.equal((await api.get('/mobile/latest?current=1.1.0', null)).body.forceUpdate, true);
    const off = await api.put(`/mobile/releases/${id}`, { forceUpdate: false }, admin);
    assert.equal(off.body.forceUpdate, false);
    assert.equal((await api.get('/mobile/latest?current=1.1.0', null)).body.forceUpdate, false);
    assert.equal(await audits('admin.mobile_release_updated', id), 2);
    assertError(await api.put(`/mobile/releases/${id}`, { forceUpdate: 'yes' }, admin), 400, 'VALIDATION_FAILED');
    assertError(await api.put('/mobile/releases/00000000-0000-4000-8000-000000000000', { forceUpdate: true }, admin), 404, 'NOT_FOUND');
  });

  test('a duplicate version is refused with 409, build metadata included, leaving nothing behind', async () => {
    await refusedLeavesNothing(409, 'VERSION_EXISTS', { file: pkg(), version: '1.0.0' });
    await refusedLeavesNothing(409, 'VERSION_EXISTS', { file: pkg(), version: '1.0.0+build.7' });
  });

  test('a wrong type, a bad version, an oversize package or a missing file are refused, leaving nothing behind', async () => {
    await refusedLeavesNothing(400, 'INVALID_PACKAGE', { file: pkg(), filename: 'app.zip', version: '5.0.0' });
    await refusedLeavesNothing(400, 'INVALID_PACKAGE', { file: Buffer.from('MZ not a zip at all'), filename: 'app.apk', version: '5.0.0' });
    await refusedLeavesNothing(400, 'INVALID_PACKAGE', { file: Buffer.alloc(0), filename: 'app.aab', version: '5.0.0' });
    await refusedLeavesNothing(400, 'INVALID_PACKAGE', { version: '5.0.0' });
    await refusedLeavesNothing(400, 'INVALID_VERSION', { file: pkg(), version: 'v5' });
    await refusedLeavesNothing(400, 'INVALID_VERSION', { file: pkg() });
    await refusedLeavesNothing(400, 'BAD_REQUEST', { file: pkg(), version: '5.0.0', forceUpdate: 'maybe' });
    await refusedLeavesNothing(400, 'BAD_REQUEST', { file: pkg(), version: '5.0.0', extra: { channel: 'beta' } });
    await refusedLeavesNothing(413, 'PAYLOAD_TOO_LARGE', { file: pkg(MAX_BYTES + 1), version: '5.0.0' });
    await refusedLeavesNothing(413, 'PAYLOAD_TOO_LARGE', { file: pkg(MAX_BYTES * 3), version: '5.0.0' });
    const json = await api.post('/mobile/upload', { version: '5.0.0' }, admin);
    assertError(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
    // Exactly the limit is fine; .aab and .ipa are packages too.
    const aab = await upload(admin, { file: pkg(MAX_BYTES), filename: 'bundle.aab', version: '5.0.0' });
    assert.equal(aab.status, 201, aab.text);
    const ipa = await upload(admin, { file: pkg(), filename: 'Chorus.ipa', version: '5.0.1-rc.1' });
    assert.equal(ipa.status, 201, ipa.text);
    const got = await download(`/api/mobile/download/${ipa.body.id}`);
    assert.equal(got.headers.get('content-disposition'), 'attachment; filename="chorus-5.0.1-rc.1.ipa"');
    assert.deepEqual(temps(), []);
  });

  test('a delete removes the row and the object: the download answers 404', async () => {
    const { id } = uploaded.get('1.2.0')!;
    const before = await rows();
    const res = await api.del(`/mobile/releases/${id}`, admin);
    assert.equal(res.status, 204, res.text);
    assert.equal(await rows(), before - 1);
    assert.ok(!objects().some((o) => o.startsWith(id)), 'the object is gone');
    assert.equal((await download(`/api/mobile/download/${id}`)).status, 404);
    assert.equal(await audits('admin.mobile_release_deleted', id), 1);
    assertError(await api.del(`/mobile/releases/${id}`, admin), 404, 'NOT_FOUND');
  });

  test('the list holds the 20 most recent uploads, newest first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      hub.clock.advance(1000);
      const res = await upload(admin, { file: pkg(256), version: `3.0.${i}`, notes: `n${i}` });
      assert.equal(res.status, 201, res.text);
      ids.push(res.body.id);
    }
    const list = await api.get('/mobile/releases', admin);
    assert.equal(list.status, 200);
    assert.equal(list.body.releases.length, 20);
    assert.deepEqual(
      list.body.releases.map((r: { id: string }) => r.id),
      ids.slice(2).reverse(),
    );
    assert.equal(list.body.releases[0].version, '3.0.21');
    assert.equal((await api.get('/system/versions', admin)).body.mobile, '5.0.1-rc.1');
  });

  test('only hub admins manage releases; anyone reads latest and downloads', async () => {
    const id = uploaded.get('1.0.0')!.id;
    assertError((await upload(owner, { file: pkg(), version: '9.0.0' })) as any, 403, 'FORBIDDEN');
    assertError((await upload(null, { file: pkg(), version: '9.0.0' })) as any, 401, 'UNAUTHENTICATED');
    assertError(await api.get('/mobile/releases', owner), 403, 'FORBIDDEN');
    assertError(await api.put(`/mobile/releases/${id}`, { forceUpdate: true }, owner), 403, 'FORBIDDEN');
    assertError(await api.del(`/mobile/releases/${id}`, owner), 403, 'FORBIDDEN');
    assert.equal((await api.get('/mobile/latest', null)).status, 200);
    assert.equal((await download(`/api/mobile/download/${id}`)).status, 200);
    assert.deepEqual(temps(), []);
  });
});
