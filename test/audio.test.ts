/**
 * GET /audio/:chunkId (spec §4 "Audio", Viewer+): the stored WAV of a chunk, with HTTP range
 * requests (RFC 9110 §14: 206 with Content-Range, 416 when unsatisfiable, Accept-Ranges: bytes).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { call, type Credential } from './helpers/http.ts';
import { RawSatellite, audioBody } from './helpers/raw-satellite.ts';
import { parseRange } from '../src/modules/audio/service.ts';

describe('GET /audio/:chunkId', () => {
  let hub: Hub;
  let team: TestTeam;
  let owner: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let sat: RawSatellite;
  let chunkId: string;
  let wav: Buffer;

  before(async () => {
    hub = await startHub();
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    viewer = await f.member(team, 'viewer');
    outsider = await f.user();
    await f.team(outsider);
    sat = await RawSatellite.register(hub, owner, team);
    const body = audioBody(sat);
    assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
    chunkId = body.chunkId;
    wav = Buffer.from(body.audio as string, 'base64');
  });
  after(async () => {
    await sat.close();
    await hub.close();
  });

  /** Raw bytes: the JSON test client would decode them as text. */
  async function get(path: string, as: Credential | null, headers: Record<string, string> = {}) {
    const h: Record<string, string> = { ...headers };
    if (as?.token) h.authorization = `Bearer ${as.token}`;
    const res = await fetch(`${hub.url}/api${path}`, { headers: h });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  test('the whole WAV for a viewer of the team, with Accept-Ranges', async () => {
    const res = await get(`/audio/${chunkId}`, viewer);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.equal(Number(res.headers.get('content-length')), wav.length);
    assert.ok(res.body.equals(wav));
  });

  test('Range bytes=0-43 → 206 with the header bytes and Content-Range', async () => {
    const res = await get(`/audio/${chunkId}`, viewer, { range: 'bytes=0-43' });
    assert.equal(res.status, 206);
    assert.equal(res.headers.get('content-range'), `bytes 0-43/${wav.length}`);
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    assert.equal(Number(res.headers.get('content-length')), 44);
    assert.ok(res.body.equals(wav.subarray(0, 44)));
  });

  test('open-ended and suffix ranges; an end past the object is clamped', async () => {
    const open = await get(`/audio/${chunkId}`, viewer, { range: 'bytes=1000-' });
    assert.equal(open.status, 206);
    assert.equal(open.headers.get('content-range'), `bytes 1000-${wav.length - 1}/${wav.length}`);
    assert.ok(open.body.equals(wav.subarray(1000)));
    const suffix = await get(`/audio/${chunkId}`, viewer, { range: 'bytes=-100' });
    assert.equal(suffix.status, 206);
    assert.equal(suffix.headers.get('content-range'), `bytes ${wav.length - 100}-${wav.length - 1}/${wav.length}`);
    assert.ok(suffix.body.equals(wav.subarray(-100)));
    const past = await get(`/audio/${chunkId}`, viewer, { range: `bytes=${wav.length - 10}-${wav.length + 5000}` });
    assert.equal(past.status, 206);
    assert.equal(past.body.length, 10);
  });

  test('an unsatisfiable range → 416 with Content-Range bytes */size', async () => {
    for (const range of [`bytes=${wav.length}-`, `bytes=${wav.length + 10}-${wav.length + 20}`, 'bytes=-0']) {
      const res = await get(`/audio/${chunkId}`, viewer, { range });
      assert.equal(res.status, 416, range);
      assert.equal(res.headers.get('content-range'), `bytes */${wav.length}`);
      assert.equal(JSON.parse(res.body.toString()).error.code, 'RANGE_NOT_SATISFIABLE');
    }
  });

  test('a Range it does not serve (several ranges, another unit, bad syntax) gets the whole WAV', async () => {
    for (const range of ['bytes=0-10,20-30', 'items=0-1', 'bytes=abc', 'bytes=50-10']) {
      const res = await get(`/audio/${chunkId}`, viewer, { range });
      assert.equal(res.status, 200, range);
      assert.equal(res.body.length, wav.length);
    }
  });

  test('out of reach: another team 404, anonymous 401, unknown chunk 404, the satellite key 403', async () => {
    assert.equal((await get(`/audio/${chunkId}`, outsider)).status, 404);
    assert.equal((await get(`/audio/${chunkId}`, null)).status, 401);
    assert.equal((await get(`/audio/${crypto.randomUUID()}`, owner)).status, 404);
    assert.equal((await get('/audio/not-a-uuid', owner)).status, 404);
    assert.equal((await call(hub.url, 'GET', `/audio/${chunkId}`, { as: { token: sat.apiKey } })).status, 403);
  });

  test('a row whose object is gone answers 404, not 500', async () => {
    const body = audioBody(sat);
    assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
    const { storage_key } = await hub.sql.one<{ storage_key: string }>('SELECT storage_key FROM chunks WHERE id = $1', [body.chunkId]);
    await hub.infra.storage.delete(storage_key);
    const res = await get(`/audio/${body.chunkId}`, viewer);
    assert.equal(res.status, 404);
  });

  test('parseRange follows RFC 9110', () => {
    assert.deepEqual(parseRange('bytes=0-0', 10), { start: 0, end: 0 });
    assert.deepEqual(parseRange('bytes=5-', 10), { start: 5, end: 9 });
    assert.deepEqual(parseRange('bytes=-3', 10), { start: 7, end: 9 });
    assert.deepEqual(parseRange('bytes=-30', 10), { start: 0, end: 9 });
    assert.equal(parseRange('bytes=10-', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 10), 'unsatisfiable');
    assert.equal(parseRange(undefined, 10), null);
    assert.equal(parseRange('bytes=-', 10), null);
  });
});
