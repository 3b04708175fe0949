/**
 * The range filter (issue 35 point 1): a hub admin uploads a species-range model (kind `range`:
 * latitude, longitude, week → one score per label) beside the classifier; a detection whose species
 * scores below the team's threshold where and when its chunk was recorded is stored, listed and
 * flagged `outOfRange`, filterable, and raises no alert; the team's include list overrides the
 * model, its exclude list flags without one; no range model, nothing flagged. The species expected
 * at a satellite in a week is a view. All through the API and the broker; the models are made here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { audioBody, RawSatellite } from './helpers/raw-satellite.ts';
import { waitFor } from './helpers/wait.ts';
import { fakeService } from './helpers/fake-sources.ts';
import { fixedLogitsModel, identityModel, rangeModel } from './helpers/onnx-models.ts';

const BLACKBIRD = 'Turdus merula_Eurasian Blackbird';
const GREAT_TIT = 'Parus major_Great Tit';
const NORTH = { latitude: 52.09, longitude: 5.12 };
const SOUTH = { latitude: -33.9, longitude: 18.4 };

describe('range filter (issue 35)', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  let north: RawSatellite;
  let south: RawSatellite;
  let rangeId: string;
  const satellites: RawSatellite[] = [];

  async function upload(parts: { name: string; model: Buffer; labels: string; kind?: string }) {
    const form = new FormData();
    form.set('name', parts.name);
    if (parts.kind) form.set('kind', parts.kind);
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

  const setTeam = async (values: Record<string, unknown>) => {
    const res = await api.put(`/settings/tenant?tenantId=${team.id}`, values, owner);
    assert.equal(res.status, 200, res.text);
  };

  let chunksSent = 0;
  /**
   * Publishes a chunk and waits for its detections: recorded an hour before the last one (so no two
   * are stitched into one call), or at `recordedAt`; at the chunk's own position when given, else
   * the satellite's.
   */
  async function heard(sat: RawSatellite, over: Record<string, unknown> = {}) {
    const recordedAt = new Date(Date.now() - ++chunksSent * 3_600_000).toISOString();
    const body = audioBody(sat, { latitude: undefined, longitude: undefined, recordedAt, ...over });
    const ack = await sat.sendAudio(body, body.chunkId);
    assert.equal(ack.status, 'stored', JSON.stringify(ack));
    const rows = () =>
      hub.sql.query<{ id: string; species_code: string; out_of_range: boolean; range_source: string | null; range_score: number | null }>(
        'SELECT id, species_code, out_of_range, range_source, range_score FROM detections WHERE chunk_id = $1 ORDER BY species_code',
        [body.chunkId],
      );
    const got = await waitFor(`detections of ${body.chunkId}`, async () => ((await rows()).length === 2 ? rows() : false));
    return Object.fromEntries(got.map((r) => [r.species_code, r]));
  }

  const alertsOf = (detectionId: string) => hub.sql.query('SELECT id FROM alerts WHERE detection_id = $1', [detectionId]);

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    // A classifier that hears both species in every chunk, the team's pick.
    const classifier = await upload({
      name: 'Both',
      model: fixedLogitsModel({ inputSamples: 144_000, logits: [4, 4] }),
      labels: `${BLACKBIRD}\n${GREAT_TIT}\n`,
    });
    assert.equal(classifier.status, 201, classifier.text);
    await setTeam({ inference_model: classifier.body.id });
    north = await RawSatellite.register(hub, owner, team, 'North', NORTH);
    south = await RawSatellite.register(hub, owner, team, 'South', SOUTH);
    satellites.push(north, south);
    const rule = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'Every detection', type: 'detection', cooldownMinutes: 0 },
      owner,
    );
    assert.equal(rule.status, 201, rule.text);
  });
  after(async () => {
    for (const s of satellites) await s.close();
    await hub.close();
  });

  test('no range model: nothing is flagged, and the expected view says why', async () => {
    const rows = await heard(south);
    assert.equal(rows.eurbla.out_of_range, false);
    assert.equal(rows.eurbla.range_score, null);
    assert.equal(rows.eurbla.range_source, null);
    const view = await api.get(`/satellites/${south.id}/expected-species`, owner);
    assert.equal(view.status, 200, view.text);
    assert.equal(view.body.available, false);
    assert.equal(view.body.reason, 'no_range_model');
    assert.deepEqual(view.body.species, []);
    const stats = await api.get(`/stats/expected-species?tenantId=${team.id}&days=7`, owner);
    assert.deepEqual([stats.body.source, stats.body.available, stats.body.reason], ['ebird', false, 'not_configured']);
  });

  test('a range model is its own kind: listed as range, never a classifier, its shape checked', async () => {
    const wrong = await upload({ name: 'Not a range model', model: identityModel(144_000), labels: `${BLACKBIRD}\n`, kind: 'range' });
    assert.match(assertError(wrong as any, 400, 'INVALID_MODEL').message, /\[1, 3\]/);
    assertError((await upload({ name: 'x', model: rangeModel(), labels: `${BLACKBIRD}\n`, kind: 'meta' })) as any, 400, 'BAD_REQUEST');
    const res = await upload({ name: 'Range', model: rangeModel(), labels: `${BLACKBIRD}\n${GREAT_TIT}\n`, kind: 'range' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.kind, 'range');
    rangeId = res.body.id;
    const listed = (await api.get('/admin/models', hubAdmin)).body.models;
    assert.equal(listed.find((m: any) => m.id === rangeId).kind, 'range');
    assert.equal(listed.find((m: any) => m.id === 'builtin').kind, 'classifier');
    // Teams pick classifiers only.
    assert.ok(!(await api.get('/models', owner)).body.models.some((m: any) => m.id === rangeId));
    assertError(await api.post(`/admin/models/${rangeId}/default`, {}, hubAdmin), 409, 'MODEL_IS_RANGE');
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { inference_model: rangeId }, owner)).status, 400);
  });

  test('south of 50° the blackbird is flagged out of range and raises no alert; north of it, it is not', async () => {
    const s = await heard(south);
    assert.equal(s.eurbla.out_of_range, true);
    assert.equal(s.eurbla.range_source, 'range_model');
    assert.ok(Math.abs(s.eurbla.range_score! - 0.001) < 1e-4, String(s.eurbla.range_score));
    // Recorded now (late November, week 44): the great tit scores 44/48.
    assert.equal(s.gretit1.out_of_range, false);
    const n = await heard(north);
    assert.equal(n.eurbla.out_of_range, false);
    assert.ok(Math.abs(n.eurbla.range_score! - 0.9) < 1e-3);
    // The north detection's alert comes; by then the south one, recorded first, would have had its own.
    await waitFor('the north alert', async () => (await alertsOf(n.eurbla.id)).length === 1);
    assert.equal((await alertsOf(s.gretit1.id)).length, 1, 'the in-range species of the south chunk alerts');
    assert.deepEqual(await alertsOf(s.eurbla.id), [], 'an out-of-range detection raises no alert');

    // Listed with the flag, and a filter either way.
    const all = await api.get(`/detections?tenantId=${team.id}&satelliteId=${south.id}&species=eurbla`, owner);
    assert.equal(all.status, 200, all.text);
    const flagged = all.body.detections.find((d: any) => d.id === s.eurbla.id);
    assert.equal(flagged.outOfRange, true);
    assert.equal(flagged.rangeSource, 'range_model');
    assert.ok(Math.abs(flagged.rangeScore - 0.001) < 1e-4);
    const only = await api.get(`/detections?tenantId=${team.id}&outOfRange=true`, owner);
    assert.deepEqual(
      only.body.detections.map((d: any) => d.id),
      [s.eurbla.id],
    );
    assert.equal(only.body.total, 1);
    const others = await api.get(`/detections?tenantId=${team.id}&outOfRange=false`, owner);
    assert.ok(!others.body.detections.some((d: any) => d.id === s.eurbla.id));
    assert.ok(others.body.detections.some((d: any) => d.id === n.eurbla.id));
  });

  test("the chunk's week and position are the model's: week 1 puts the great tit out of range; a chunk recorded in the south is judged there", async () => {
    const jan = await heard(north, { recordedAt: '2026-01-03T10:00:00.000Z' });
    assert.equal(jan.gretit1.out_of_range, true);
    assert.ok(Math.abs(jan.gretit1.range_score! - 1 / 48) < 1e-4);
    const travelled = await heard(north, SOUTH);
    assert.equal(travelled.eurbla.out_of_range, true);
  });

  test("the team's include list overrides the model, its exclude list flags without it; the threshold is the team's", async () => {
    await setTeam({ range_include_species: ['eurbla'], range_exclude_species: ['gretit1'] });
    const s = await heard(south);
    assert.equal(s.eurbla.out_of_range, false);
    assert.equal(s.gretit1.out_of_range, true);
    assert.deepEqual([s.eurbla.range_source, s.gretit1.range_source, s.gretit1.range_score], ['team_list', 'team_list', null]);
    const view = (await api.get(`/satellites/${south.id}/expected-species`, owner)).body;
    assert.deepEqual(
      view.species.map((x: any) => [x.code, x.reason]),
      [['eurbla', 'include_list']],
    );
    assert.deepEqual(view.excluded, ['gretit1']);
    await setTeam({ range_include_species: [], range_exclude_species: [], range_filter_threshold: 0.95 });
    const n = await heard(north);
    assert.equal(n.eurbla.out_of_range, true, '0.9 is below a threshold of 0.95');
    assertError(await api.put(`/settings/tenant?tenantId=${team.id}`, { range_filter_threshold: 2 }, owner), 400, 'VALIDATION_FAILED');
    await setTeam({ range_filter_threshold: 0.03 });
    // Disabled, the range model judges nothing.
    assert.equal((await api.put(`/admin/models/${rangeId}`, { enabled: false }, hubAdmin)).status, 200);
    const off = await heard(south);
    assert.equal(off.eurbla.out_of_range, false);
    assert.equal((await api.put(`/admin/models/${rangeId}`, { enabled: true }, hubAdmin)).status, 200);
  });

  test('scheduled rules do not count out-of-range detections: no trend rise from them, no end to an absence', async () => {
    const f = factories(hub);
    const o = await f.user();
    const t = await f.team(o);
    const sat = await makeSatellite(hub, t, o);
    const now = hub.clock.now().getTime();
    const hour = 3_600_000;
    for (let i = 0; i < 2; i++) await makeDetection(hub, { satellite: sat, at: new Date(now - 1.5 * hour + i * 1000), code: 'eurbla' });
    // Six in the last hour, all out of range (as the worker flags them).
    const late = [];
    for (let i = 0; i < 6; i++)
      late.push(await makeDetection(hub, { satellite: sat, at: new Date(now - 0.5 * hour + i * 1000), code: 'eurbla' }));
    await hub.sql.query('UPDATE detections SET out_of_range = true, range_source = $2 WHERE id = ANY($1::uuid[])', [late, 'range_model']);
    const make = async (body: Record<string, unknown>) => {
      const res = await api.post('/alert-rules/rules', { tenantId: t.id, ...body }, o);
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const rise = await make({
      name: 'More',
      type: 'trend',
      conditions: { metric: 'detections', direction: 'rise', percent: 50, windowMinutes: 60 },
    });
    const silent = await make({ name: 'Quiet', type: 'absence', conditions: { minutes: 45 } });
    hub.clock.advance(60_000);
    await hub.services.alerting.scheduler.tick();
    const alertsOf = async (ruleId: string) =>
      ((await api.get(`/alerts?tenantId=${t.id}&limit=50`, o)).body.alerts as any[]).filter((a) => a.ruleId === ruleId);
    assert.equal((await alertsOf(rise)).length, 0, '2 → 6 only with out-of-range rows');
    // 46 minutes on, the only detection of the last 45 is out of range: the silence goes on.
    hub.clock.advance(46 * 60_000);
    const recent = await makeDetection(hub, { satellite: sat, at: new Date(hub.clock.now().getTime() - 5 * 60_000), code: 'eurbla' });
    await hub.sql.query('UPDATE detections SET out_of_range = true WHERE id = $1', [recent]);
    await hub.services.alerting.scheduler.tick();
    assert.equal((await alertsOf(silent)).length, 1, 'an out-of-range detection does not end an absence');
  });

  test('the expected-species statistics take the range model when one is installed', async () => {
    const res = await api.get(`/stats/expected-species?tenantId=${team.id}&satelliteId=${north.id}&days=7`, owner);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual([res.body.source, res.body.available], ['range_model', true]);
    // North of 50° in late November both are expected, and both were heard there.
    assert.deepEqual(res.body.expectedAndHeard.map((x: any) => x.code).sort(), ['eurbla', 'gretit1']);
    const southStats = await api.get(`/stats/expected-species?tenantId=${team.id}&satelliteId=${south.id}&days=7`, owner);
    assert.deepEqual(
      southStats.body.heardNotExpected.map((x: any) => x.code),
      ['eurbla'],
    );
  });

  test('the species expected at a satellite this week: the model at its position, by score; another team sees nothing', async () => {
    const n = await api.get(`/satellites/${north.id}/expected-species`, owner);
    assert.equal(n.status, 200, n.text);
    assert.equal(n.body.available, true);
    assert.equal(n.body.model.id, rangeId);
    assert.equal(n.body.threshold, 0.03);
    assert.deepEqual([n.body.latitude, n.body.longitude, n.body.positionSource], [NORTH.latitude, NORTH.longitude, 'profile']);
    // The hub's clock says the week (four per month): in late November, 44 or thereabouts.
    const now = hub.clock.now();
    assert.equal(n.body.week, now.getUTCMonth() * 4 + Math.min(Math.floor((now.getUTCDate() - 1) / 7) + 1, 4));
    assert.deepEqual(
      n.body.species.map((x: any) => x.code),
      n.body.week / 48 > 0.9 ? ['gretit1', 'eurbla'] : ['eurbla', 'gretit1'],
    );
    const s = await api.get(`/satellites/${south.id}/expected-species?week=1`, owner);
    assert.equal(s.body.week, 1);
    assert.deepEqual(s.body.species, [], 'south in week 1: neither species');
    const s48 = await api.get(`/satellites/${south.id}/expected-species?week=48`, owner);
    assert.deepEqual(
      s48.body.species.map((x: any) => [x.code, x.score]),
      [['gretit1', 1]],
    );
    assertError(await api.get(`/satellites/${south.id}/expected-species?week=49`, owner), 400, 'VALIDATION_FAILED');
    const stranger = await factories(hub).user();
    assert.equal((await api.get(`/satellites/${south.id}/expected-species`, stranger)).status, 404);
  });
});

describe('range filter without a range model: eBird (issue 35)', () => {
  const KEY = 'test-ebird-key-range';
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let ebird: Awaited<ReturnType<typeof fakeService>>;
  let owner: TestUser;
  let team: TestTeam;
  const satellites: RawSatellite[] = [];

  before(async () => {
    // eBird reports the great tit near every position, never the blackbird.
    ebird = await fakeService(() => ({
      body: JSON.stringify([
        { speciesCode: 'gretit1', comName: 'Great Tit', sciName: 'Parus major', obsDt: '2026-11-20 08:15', howMany: 2 },
      ]),
    }));
    hub = await startHub({ env: { EBIRD_API_URL: ebird.url, EBIRD_API_KEY: KEY } });
    api = client(hub.url);
    const f = factories(hub);
    const hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    const form = new FormData();
    form.set('name', 'Both');
    form.set('model', new Blob([new Uint8Array(fixedLogitsModel({ inputSamples: 144_000, logits: [4, 4] }))]), 'model.onnx');
    form.set('labels', new Blob([`${BLACKBIRD}\n${GREAT_TIT}\n`]), 'labels.txt');
    const up = await fetch(`${hub.url}/api/admin/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hubAdmin.token}` },
      body: form,
    });
    assert.equal(up.status, 201);
    const picked = await api.put(
      `/settings/tenant?tenantId=${team.id}`,
      { inference_model: ((await up.json()) as { id: string }).id },
      owner,
    );
    assert.equal(picked.status, 200, picked.text);
  });
  after(async () => {
    for (const s of satellites) await s.close();
    await hub.close();
    await ebird.close();
  });

  async function heardAt(position: { latitude: number; longitude: number }) {
    const sat = await RawSatellite.register(hub, owner, team, undefined, position);
    satellites.push(sat);
    const body = audioBody(sat, { latitude: undefined, longitude: undefined });
    assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
    const rows = () =>
      hub.sql.query<{ species_code: string; out_of_range: boolean; range_source: string | null }>(
        'SELECT species_code, out_of_range, range_source FROM detections WHERE chunk_id = $1 ORDER BY species_code',
        [body.chunkId],
      );
    const got = await waitFor('detections', async () => ((await rows()).length === 2 ? rows() : false));
    return { sat, rows: Object.fromEntries(got.map((r) => [r.species_code, r])) };
  }

  test('a bird eBird users did not report within 50 km over 30 days is flagged; the key stays in the header', async () => {
    const { sat, rows } = await heardAt(SOUTH);
    assert.deepEqual([rows.eurbla.out_of_range, rows.eurbla.range_source], [true, 'ebird']);
    assert.deepEqual([rows.gretit1.out_of_range, rows.gretit1.range_source], [false, 'ebird']);
    const asked = ebird.requests.filter((r) => r.path === '/v2/data/obs/geo/recent');
    assert.equal(asked.length, 1);
    assert.deepEqual([asked[0].query.get('dist'), asked[0].query.get('back'), asked[0].query.get('lat')], ['50', '30', '-33.90']);
    assert.equal(asked[0].headers['x-ebirdapitoken'], KEY);
    const view = await api.get(`/satellites/${sat.id}/expected-species`, owner);
    assert.equal(view.status, 200, view.text);
    assert.deepEqual([view.body.source, view.body.available], ['ebird', true]);
    assert.deepEqual(
      view.body.species.map((x: any) => [x.code, x.reason]),
      [['gretit1', 'ebird']],
    );
    assert.ok(!view.text.includes(KEY));
  });

  test('eBird failing flags nothing, and is not asked again for a while', async () => {
    ebird.state.answer = () => ({ status: 500, body: 'down' });
    const before = ebird.requests.length;
    const first = await heardAt(NORTH);
    assert.deepEqual([first.rows.eurbla.out_of_range, first.rows.eurbla.range_source], [false, null]);
    const second = await heardAt({ latitude: 48.1, longitude: 11.6 });
    assert.equal(second.rows.eurbla.range_source, null);
    assert.equal(ebird.requests.length - before, 1, 'one request, then the failure is remembered');
  });
});
