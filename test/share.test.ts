/**
 * Share links (spec §3 "Share link", §4 Detections share rows, §7 NOT_SHAREABLE and
 * SHARE_EXPIRED, §9 0.64.5, 0.78, 0.79): a Viewer+ gets a 90-day link to a promoted detection
 * in a category the team shows; anyone with the link reads the species, time, confidence,
 * badges and audio, never the team, the satellite name or its position.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import {
  factories,
  makeChunk,
  makeDetection,
  makeSatellite,
  type DetectionSpec,
  type TestTeam,
  type TestUser,
} from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { newId } from '../src/core/crypto.ts';
import { makeWav } from '../src/protocol/wav.ts';

const DAY_MS = 86_400_000;

describe('share links', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let viewer: TestUser;
  let otherOwner: TestUser;
  let team: TestTeam;
  let sat: { id: string; name: string };
  let wav: Buffer;
  let chunkId: string;

  /** A promoted robin at 0.875, first of season and of day, in the stored chunk; `opts` changes it. */
  const sharedDetection = (opts: Pick<DetectionSpec, 'category' | 'tentative' | 'promoted' | 'rare' | 'commonName' | 'modelId'> = {}) =>
    makeDetection(hub, {
      satellite: { id: sat.id, tenantId: team.id },
      chunkId,
      confidence: 0.875,
      at: new Date(Date.UTC(2026, 4, 10, 5, 30)),
      firstOfSeason: true,
      firstOfDay: true,
      ...opts,
    });

  /** The API path of a share link's page (`{publicUrl}/share/detection/{id}/{token}`). */
  async function share(id: string): Promise<{ path: string; token: string; expiresAt: string }> {
    const res = await api.get(`/detections/${id}/share`, viewer);
    assert.equal(res.status, 200, res.text);
    const m = /^http:\/\/chorus\.test\/share\/detection\/([0-9a-f-]{36})\/([^/]+)$/.exec(res.body.shareUrl);
    assert.ok(m, `shareUrl is the dashboard page: ${res.body.shareUrl}`);
    assert.equal(m[1], id);
    return { path: `/share/detection/${id}/${m[2]}`, token: m[2], expiresAt: res.body.expiresAt };
  }

  const raw = (path: string, headers: Record<string, string> = {}) => fetch(`${hub.url}/api${path}`, { headers });

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner, 'Secret Garden Team');
    viewer = await f.member(team, 'viewer');
    otherOwner = await f.user();
    await f.team(otherOwner);
    sat = await makeSatellite(hub, team, null, 'Backyard Pi of Olive');
    const samples = new Int16Array(144_000);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 3000 * i) / 48_000));
    wav = makeWav(samples);
    // A stored chunk (object and row) with a position, as a phone satellite would send it.
    chunkId = (await makeChunk(hub, { satellite: { id: sat.id, tenantId: team.id }, audio: wav, latitude: 52.123456, longitude: 4.654321 }))
      .id;
  });
  after(() => hub.close());

  test('a viewer gets {shareUrl, expiresAt}, valid 90 days', async () => {
    const id = await sharedDetection();
    const before = hub.clock.now().getTime();
    const res = await api.get(`/detections/${id}/share`, viewer);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['expiresAt', 'shareUrl']);
    const exp = new Date(res.body.expiresAt).getTime();
    assert.ok(Math.abs(exp - (before + 90 * DAY_MS)) < 5_000, `expires in 90 days: ${res.body.expiresAt}`);
  });

  test('anyone with the link reads species, time, confidence and badges; never the team, satellite or position', async () => {
    const id = await sharedDetection({ rare: 'Not seen before at this team' });
    const link = await share(id);
    const res = await api.get(link.path, null);
    assert.equal(res.status, 200, res.text);
    const b = res.body;
    assert.equal(b.id, id);
    assert.equal(b.speciesCode, 'eurrob1');
    assert.equal(b.commonName, 'European Robin');
    assert.equal(b.scientificName, 'Erithacus rubecula');
    assert.equal(b.detectedAt, '2026-05-10T05:30:00.000Z');
    assert.equal(b.confidence, 0.875);
    assert.equal(b.calibrated_confidence, 0.875);
    assert.equal(b.isFirstOfSeason, true);
    assert.equal(b.isFirstOfDay, true);
    assert.equal(b.isRare, true);
    assert.equal(b.rareReason, 'Not seen before at this team');
    assert.equal(b.audioUrl, `http://chorus.test/api/share/audio/${id}/${link.token}`);
    assert.equal(b.expiresAt, link.expiresAt);
    for (const k of ['tenantId', 'satelliteId', 'satelliteName', 'latitude', 'longitude', 'storageKey', 'audioChunkId'])
      assert.ok(!(k in b), `no ${k}`);
    for (const secret of [team.id, team.name, sat.id, sat.name, chunkId, '52.12', '4.65'])
      assert.ok(!res.text.includes(secret), `the body does not mention ${secret}`);
  });

  test("the shared view carries the team's calibrated confidence", async () => {
    const buckets = [{ minConfidence: 0, maxConfidence: 1, calibrated: 0.625, samples: 20 }];
    await hub.sql.query('INSERT INTO calibration_curves (tenant_id, model_id, fitted_at, samples, buckets) VALUES ($1, $2, $3, 20, $4)', [
      team.id,
      'calibrated-model',
      hub.clock.now(),
      JSON.stringify(buckets),
    ]);
    const id = await sharedDetection({ modelId: 'calibrated-model' });
    const res = await api.get((await share(id)).path, null);
    assert.equal(res.status, 200);
    assert.equal(res.body.confidence, 0.875);
    assert.equal(res.body.calibrated_confidence, 0.625);
  });

  test('the shared audio streams the chunk, with ranges like GET /audio/:chunkId', async () => {
    const id = await sharedDetection();
    const { token } = await share(id);
    const whole = await raw(`/share/audio/${id}/${token}`);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'audio/wav');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.ok(Buffer.from(await whole.arrayBuffer()).equals(wav));
    const part = await raw(`/share/audio/${id}/${token}`, { range: 'bytes=44-99' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 44-99/${wav.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(wav.subarray(44, 100)));
    const outside = await raw(`/share/audio/${id}/${token}`, { range: `bytes=${wav.length}-` });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), `bytes */${wav.length}`);
  });

  test('the shared spectrogram is a PNG of the chunk', async () => {
    const id = await sharedDetection();
    const { token } = await share(id);
    const res = await raw(`/share/spectrogram/${id}/${token}?width=300&height=100`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    const png = Buffer.from(await res.arrayBuffer());
    assert.equal(png.readUInt32BE(16), 300);
    assert.equal(png.readUInt32BE(20), 100);
    assertError(await api.get(`/share/spectrogram/${id}/${token}?width=5`, null), 400, 'VALIDATION_FAILED');
  });

  test('after 90 days the page, the audio and the spectrogram answer 410 SHARE_EXPIRED', async () => {
    const id = await sharedDetection();
    const link = await share(id);
    try {
      hub.clock.advance(90 * DAY_MS - 60_000);
      assert.equal((await api.get(link.path, null)).status, 200, 'still valid a minute before');
      hub.clock.advance(120_000);
      assertError(await api.get(link.path, null), 410, 'SHARE_EXPIRED');
      assertError(await api.get(`/share/audio/${id}/${link.token}`, null), 410, 'SHARE_EXPIRED');
      assertError(await api.get(`/share/spectrogram/${id}/${link.token}`, null), 410, 'SHARE_EXPIRED');
      assertError(await api.get(`${link.path}/og`, null), 410, 'SHARE_EXPIRED');
    } finally {
      hub.clock.advance(-(90 * DAY_MS + 60_000));
    }
  });

  test('a forged or tampered link answers 403, also for another detection and an extended expiry', async () => {
    const id = await sharedDetection();
    const other = await sharedDetection();
    const { token } = await share(id);
    const [exp, sig] = token.split('.');
    const flipped = sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A');
    const forged = [
      `/share/detection/${id}/${exp}.${flipped}`,
      `/share/detection/${id}/${Number(exp) + 86_400}.${sig}`,
      `/share/detection/${other}/${token}`,
      `/share/detection/${id}/not-a-token`,
      `/share/detection/not-an-id/${token}`,
      `/share/audio/${other}/${token}`,
      `/share/audio/${id}/${exp}.${flipped}`,
      `/share/spectrogram/${other}/${token}`,
      `/share/detection/${other}/${token}/og`,
    ];
    for (const path of forged) assertError(await api.get(path, null), 403, 'INVALID_SHARE_LINK');
    // An expired forgery is still a forgery: the signature is checked before the expiry.
    assertError(await api.get(`/share/detection/${id}/1000.${sig}`, null), 403, 'INVALID_SHARE_LINK');
  });

  test('the link preview is Open Graph HTML with every value escaped', async () => {
    const id = await sharedDetection({ commonName: 'Robin <script>alert("x")</script> & co' });
    const link = await share(id);
    const res = await api.get(`${link.path}/og`, null);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.ok(!res.text.includes('<script>'), 'no markup from data');
    assert.ok(
      res.text.includes(
        '<meta property="og:title" content="Robin &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co (Erithacus rubecula)">',
      ),
      res.text,
    );
    assert.ok(res.text.includes(`<meta property="og:url" content="http://chorus.test/share/detection/${id}/${link.token}">`));
    assert.ok(res.text.includes(`<meta property="og:audio" content="http://chorus.test/api/share/audio/${id}/${link.token}">`));
    assert.ok(res.text.includes('confidence 88 %'));
    for (const secret of [team.id, team.name, sat.id, sat.name, chunkId])
      assert.ok(!res.text.includes(secret), `the preview does not mention ${secret}`);
  });

  test('a tentative or unpromoted detection is not shareable (409 NOT_SHAREABLE)', async () => {
    assertError(
      await api.get(`/detections/${await sharedDetection({ tentative: true, promoted: false })}/share`, viewer),
      409,
      'NOT_SHAREABLE',
    );
    assertError(await api.get(`/detections/${await sharedDetection({ promoted: false })}/share`, viewer), 409, 'NOT_SHAREABLE');
  });

  test('a category the team hides is not shareable (409 NOT_SHAREABLE)', async () => {
    // visible_categories leaves human voices out by default.
    assertError(await api.get(`/detections/${await sharedDetection({ category: 'human_voice' })}/share`, viewer), 409, 'NOT_SHAREABLE');
    const bird = await sharedDetection();
    try {
      const put = await api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: ['amphibian', 'insect'] }, owner);
      assert.equal(put.status, 200, put.text);
      assertError(await api.get(`/detections/${bird}/share`, viewer), 409, 'NOT_SHAREABLE');
    } finally {
      await api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: null }, owner);
    }
    assert.equal((await api.get(`/detections/${bird}/share`, viewer)).status, 200);
  });

  test('a link is checked again when read: hidden, tentative or deleted answers 404', async () => {
    const id = await sharedDetection();
    const link = await share(id);
    const audio = `/share/audio/${id}/${link.token}`;
    try {
      await api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: ['insect'] }, owner);
      assertError(await api.get(link.path, null), 404, 'NOT_FOUND');
      assertError(await api.get(audio, null), 404, 'NOT_FOUND');
    } finally {
      await api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: null }, owner);
    }
    assert.equal((await api.get(link.path, null)).status, 200, 'shown again once the category is');
    await hub.sql.query('UPDATE detections SET tentative = true, promoted = false WHERE id = $1', [id]);
    assertError(await api.get(link.path, null), 404, 'NOT_FOUND');
    await hub.sql.query('DELETE FROM detections WHERE id = $1', [id]);
    assertError(await api.get(link.path, null), 404, 'NOT_FOUND');
    assertError(await api.get(audio, null), 404, 'NOT_FOUND');
  });

  test("issuing is Viewer+ of the detection's team: other teams and unknown ids get 404", async () => {
    const id = await sharedDetection();
    assertError(await api.get(`/detections/${id}/share`, otherOwner), 404, 'NOT_FOUND');
    assertError(await api.get(`/detections/${newId()}/share`, viewer), 404, 'NOT_FOUND');
    assertError(await api.get(`/detections/${id}/share`, null), 401, 'UNAUTHENTICATED');
  });
  describe("the hub's name and the place, generalised (issue 23)", () => {
    test('the view names the hub ("Chorus" until set) and the place in whole degrees, never the exact position', async () => {
      await hub.sql.query('UPDATE satellites SET latitude = 52.3759, longitude = 9.7320 WHERE id = $1', [sat.id]);
      const id = await sharedDetection();
      const before = await api.get((await share(id)).path, null);
      assert.equal(before.status, 200, before.text);
      assert.equal(before.body.hubName, 'Chorus');
      assert.deepEqual(before.body.place, { name: null, latitude: 52, longitude: 10 });
      for (const exact of ['52.37', '9.73', '52.12', '4.65']) assert.ok(!before.text.includes(exact), `no ${exact}`);

      const root = await factories(hub).user({ admin: true });
      assert.equal((await api.put('/settings/platform', { hub_name: 'Marsh Listeners Hub' }, root)).status, 200);
      try {
        const res = await api.get((await share(id)).path, null);
        assert.equal(res.body.hubName, 'Marsh Listeners Hub');
      } finally {
        await api.put('/settings/platform', { hub_name: null }, root);
      }
    });

    test("the team's public place name replaces the area; a sensitive species gives no place at all", async () => {
      await hub.sql.query('UPDATE satellites SET latitude = 52.3759, longitude = 9.7320 WHERE id = $1', [sat.id]);
      const put = await api.put(`/settings/tenant?tenantId=${team.id}`, { public_place_name: 'Lower Saxony, Germany' }, owner);
      assert.equal(put.status, 200, put.text);
      try {
        const id = await sharedDetection();
        const named = await api.get((await share(id)).path, null);
        assert.deepEqual(named.body.place, { name: 'Lower Saxony, Germany', latitude: null, longitude: null });

        await api.put(`/settings/tenant?tenantId=${team.id}`, { sensitive_species_extra: ['eurrob1'] }, owner);
        const sensitive = await api.get((await share(id)).path, null);
        assert.equal(sensitive.status, 200);
        assert.equal(sensitive.body.place, null);
        assert.ok(!sensitive.text.includes('Lower Saxony'));
        assert.equal(sensitive.body.hubName, 'Chorus');
      } finally {
        await api.put(`/settings/tenant?tenantId=${team.id}`, { public_place_name: null, sensitive_species_extra: null }, owner);
      }
    });

    test('a satellite without a position and a team without a place name: place is null', async () => {
      await hub.sql.query('UPDATE satellites SET latitude = NULL, longitude = NULL WHERE id = $1', [sat.id]);
      const id = await sharedDetection();
      const res = await api.get((await share(id)).path, null);
      assert.equal(res.body.place, null);
      assert.ok('hubName' in res.body && 'place' in res.body);
    });
  });
});
