/**
 * One call, several recorders (issue 35 point 3; src/modules/detections/observations.ts). Chunks
 * are stored as ingest stores them and classified by the real worker handler with the team's
 * settings; only the classifier is replaced, so each chunk "hears" what the test says. Satellites
 * A and B stand 100 m apart, C 1 km from A, D has no position.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { classifyChunk } from './helpers/inference.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { waitFor } from './helpers/wait.ts';
import { fetchBytes, tsv, unzip } from './helpers/export-files.ts';
import { distanceM } from '../src/modules/detections/observations.ts';
import type { Prediction } from '../src/infra/classifier/types.ts';

const ROBIN = 'Erithacus rubecula_European Robin';
const TIT = 'Parus major_Great Tit';
const BLACKBIRD = 'Turdus merula_Eurasian Blackbird';
const CHAFFINCH = 'Fringilla coelebs_Common Chaffinch';
const CUCKOO = 'Cuculus canorus_Common Cuckoo';

const HOME = { lat: 52.52, lon: 13.405 };
/** 100 m north of HOME (0.0009° of latitude ≈ 100 m). */
const NEAR = { lat: 52.5209, lon: 13.405 };
/** About 1 km north of HOME. */
const FAR = { lat: 52.529, lon: 13.405 };

describe('one call, several recorders', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  let satA: { id: string };
  let satB: { id: string };
  let satC: { id: string };
  let satD: { id: string };
  let base: number;
  const catalog = speciesCatalog();
  const code = (label: string) => catalog.byLabel(label)!.code;
  /** The detection ids the last chunk announced (the alert rules hear of these). */
  let announced: string[] = [];

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    satA = await makeSatellite(hub, team, null, 'A');
    satB = await makeSatellite(hub, team, null, 'B');
    satC = await makeSatellite(hub, team, null, 'C');
    satD = await makeSatellite(hub, team, null, 'D');
    // A and C by their profile position, B by the position its chunks carry, D nowhere.
    await hub.sql.query('UPDATE satellites SET latitude = $2, longitude = $3 WHERE id = $1', [satA.id, HOME.lat, HOME.lon]);
    await hub.sql.query('UPDATE satellites SET latitude = $2, longitude = $3 WHERE id = $1', [satC.id, FAR.lat, FAR.lon]);
    base = hub.clock.now().getTime() - 60 * 60_000;
    // Every announced detection alerts (no cooldown): alerts count announcements.
    const rule = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'Every bird', type: 'detection', cooldownMinutes: 0 },
      owner,
    );
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
  });
  after(() => hub.close());

  /** A chunk of `sat` recorded `ms` after the base time, classified as hearing `species`; the ids stored. */
  async function chunk(sat: { id: string }, ms: number, species: Array<[string, number]>) {
    const at = sat === satB ? { latitude: NEAR.lat, longitude: NEAR.lon } : {};
    const made = await makeChunk(hub, {
      satellite: { id: sat.id, tenantId: team.id },
      at: new Date(base + ms),
      audio: makeWav(144_000),
      ...at,
    });
    const { stored, announced: sent } = await classifyChunk(hub, made, {
      settings: hub.services.settings,
      loadClassifier: async () => ({
        classify: async () =>
          species.map(
            ([label, confidence], index) =>
              ({ label, scientificName: label.split('_')[0], commonName: label.split('_')[1], index, logit: 0, confidence }) as Prediction,
          ),
      }),
    });
    announced = sent.map((m) => m.id);
    return stored.map((d) => d.id);
  }

  /** The Detections page's rows of a species in [from, to) ms after the base time. */
  async function listed(label: string, from: number, to: number) {
    const start = new Date(base + from).toISOString();
    const end = new Date(base + to).toISOString();
    const res = await api.get(`/detections?tenantId=${team.id}&species=${code(label)}&start=${start}&end=${end}`, owner);
    assert.equal(res.status, 200);
    return res.body as { total: number; detections: Array<{ id: string; satelliteId: string; recorders: number; isFirstOfDay: boolean }> };
  }

  const setMerge = async (values: Record<string, unknown>) =>
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, values, owner)).status, 200);

  test('the positions are as the test says', () => {
    assert.ok(Math.abs(distanceM(HOME, NEAR) - 100) < 1);
    assert.ok(Math.abs(distanceM(HOME, FAR) - 1001) < 2);
  });

  test('off (the default): each satellite that heard the call has its row, each announced', async () => {
    const [a] = await chunk(satA, 0, [[ROBIN, 0.8]]);
    assert.deepEqual(announced, [a]);
    const [b] = await chunk(satB, 500, [[ROBIN, 0.7]]);
    assert.deepEqual(announced, [b]);
    const list = await listed(ROBIN, 0, 10_000);
    assert.equal(list.total, 2);
    assert.deepEqual(
      list.detections.map((d) => d.recorders),
      [1, 1],
    );
  });

  test('on: a nearby satellite within the window joins the observation; the better recording leads; announced once', async () => {
    await setMerge({ observation_merge_enabled: true });
    // Turning it on rewrites no history: the call recorded while off keeps its two rows.
    assert.equal((await listed(ROBIN, 0, 10_000)).total, 2);

    const [a] = await chunk(satA, 60_000, [[BLACKBIRD, 0.6]]);
    assert.deepEqual(announced, [a]);
    const [b] = await chunk(satB, 61_500, [[BLACKBIRD, 0.9]]);
    assert.deepEqual(announced, [], 'the observation was announced already: one alert per observation');
    const list = await listed(BLACKBIRD, 50_000, 70_000);
    assert.equal(list.total, 1);
    assert.equal(list.detections[0].id, b, 'the most confident recording leads');
    assert.equal(list.detections[0].recorders, 2);
    assert.equal(list.detections[0].isFirstOfDay, true, "the lead keeps the observation's first of the day");

    // The detail page of either row lists both recordings, the lead first.
    for (const id of [a, b]) {
      const detail = await api.get(`/detections/${id}`, owner);
      assert.equal(detail.status, 200);
      assert.deepEqual(
        detail.body.recordings.map((r: { detectionId: string; lead: boolean }) => [r.detectionId, r.lead]),
        [
          [b, true],
          [a, false],
        ],
      );
    }

    // A's next chunk continues A's part of the call: stitched, not announced, still one row.
    const [a2] = await chunk(satA, 64_000, [[BLACKBIRD, 0.5]]);
    assert.deepEqual(announced, []);
    const rows = await hub.sql.query<{ id: string; call_id: string | null; call_chunks: number }>(
      'SELECT id, call_id, call_chunks FROM detections WHERE id = ANY($1::uuid[])',
      [[a, b, a2]],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.equal(byId.get(a2)!.call_id, b);
    assert.equal(byId.get(a)!.call_chunks, 2, "A's own part of the call grew");
    assert.equal(byId.get(b)!.call_chunks, 1);
    assert.equal((await listed(BLACKBIRD, 50_000, 70_000)).total, 1);
    // Only the lead's satellite goes into a whole-call recording (xeno-canto).
    const chunks = await hub.services.detections.callChunkIds(team.id, b, 10);
    const sats = await hub.sql.query<{ satellite_id: string }>('SELECT DISTINCT satellite_id FROM chunks WHERE id = ANY($1::uuid[])', [
      chunks,
    ]);
    assert.deepEqual(
      sats.map((s) => s.satellite_id),
      [satB.id],
    );
  });

  test('a reviewed lead keeps the lead when a better recording joins', async () => {
    const [a] = await chunk(satA, 120_000, [[TIT, 0.5]]);
    assert.equal((await api.post(`/detections/${a}/verify`, { vote: 'confirm' }, owner)).status, 200);
    const [b] = await chunk(satB, 121_000, [[TIT, 0.95]]);
    assert.deepEqual(announced, []);
    const list = await listed(TIT, 110_000, 130_000);
    assert.equal(list.total, 1);
    assert.equal(list.detections[0].id, a);
    assert.equal(list.detections[0].recorders, 2);
    assert.equal((await hub.sql.one<{ call_id: string }>('SELECT call_id FROM detections WHERE id = $1', [b])).call_id, a);
  });

  test('beyond the window, beyond the distance, or without a position: two rows', async () => {
    await chunk(satA, 180_000, [[CHAFFINCH, 0.6]]);
    await chunk(satB, 182_500, [[CHAFFINCH, 0.6]]); // 2.5 s after: outside ±2 s
    assert.equal((await listed(CHAFFINCH, 170_000, 190_000)).total, 2);

    await chunk(satA, 240_000, [[CUCKOO, 0.6]]);
    await chunk(satC, 240_500, [[CUCKOO, 0.7]]); // 1 km away
    assert.equal((await listed(CUCKOO, 230_000, 250_000)).total, 2);

    await chunk(satA, 300_000, [[ROBIN, 0.6]]);
    await chunk(satD, 300_200, [[ROBIN, 0.7]]); // no position
    assert.equal((await listed(ROBIN, 290_000, 310_000)).total, 2);
  });

  test('the distance and window are settings', async () => {
    await setMerge({ observation_merge_distance_m: 1500, observation_merge_window_sec: 3 });
    try {
      await chunk(satA, 360_000, [[CHAFFINCH, 0.6]]);
      await chunk(satB, 362_500, [[CHAFFINCH, 0.5]]);
      assert.equal((await listed(CHAFFINCH, 350_000, 370_000)).total, 1, '2.5 s apart is inside ±3 s');
      await chunk(satA, 420_000, [[CUCKOO, 0.6]]);
      await chunk(satC, 420_500, [[CUCKOO, 0.7]]);
      assert.equal((await listed(CUCKOO, 410_000, 430_000)).total, 1, '1 km is inside 1.5 km');
    } finally {
      await setMerge({ observation_merge_distance_m: null, observation_merge_window_sec: null });
    }
  });

  test('counts, stats aggregates and alerts follow the observations', async () => {
    const all = await api.get(`/detections?tenantId=${team.id}&limit=100`, owner);
    const raw = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE tenant_id = $1', [team.id]);
    assert.ok(raw.n > all.body.total, 'rows of observations are stored, not listed');
    const dash = await api.get(`/stats/dashboard?tenantId=${team.id}`, owner);
    assert.equal(dash.status, 200);
    assert.equal(dash.body.detectionCount, all.body.total);
    const agg = await hub.sql.one<{ n: number }>(
      `SELECT coalesce(sum(listed), 0)::int AS n FROM detection_hour_counts WHERE tenant_id = $1 AND dim = 'all'`,
      [team.id],
    );
    assert.equal(agg.n, all.body.total);
    // Per satellite, an observation counts on its leader's satellite only.
    const perSat = await hub.sql.query<{ satellite: string; n: number }>(
      `SELECT satellite, sum(listed)::int AS n FROM detection_period_counts
       WHERE tenant_id = $1 AND grain = 'day' AND dims = 'satellite' GROUP BY satellite HAVING sum(listed) > 0 ORDER BY satellite`,
      [team.id],
    );
    const listedPerSat = new Map<string, number>();
    for (const d of all.body.detections as Array<{ satelliteId: string }>)
      listedPerSat.set(d.satelliteId, (listedPerSat.get(d.satelliteId) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(perSat.map((p) => [p.satellite, p.n])), Object.fromEntries(listedPerSat));
    // Exports list one row per observation; each row's detection link opens the observation's recordings.
    const csv = await fetchBytes(hub, `/export/detections?tenantId=${team.id}&format=csv`, owner);
    assert.equal(csv.status, 200);
    assert.equal(csv.body.toString('utf8').trim().split('\r\n').length - 1, all.body.total);
    const dwca = await fetchBytes(hub, `/export/observation?tenantId=${team.id}&format=dwca`, owner);
    assert.equal(dwca.status, 200);
    const occurrences = tsv((await unzip(dwca.body)).get('occurrence.txt')!);
    assert.deepEqual(occurrences.map((o) => o.occurrenceID).sort(), all.body.detections.map((d: { id: string }) => d.id).sort());
    // One alert per announced detection: per observation, not per recorder.
    await waitFor('an alert per listed observation', async () => {
      const alerts = await api.get(`/alerts?tenantId=${team.id}`, owner);
      return alerts.body.alerts?.length === all.body.total;
    });
  });

  test("deleting the lead's satellite hands the observation to the other recording", async () => {
    const before = await listed(BLACKBIRD, 50_000, 70_000);
    assert.equal(before.total, 1);
    assert.equal(before.detections[0].satelliteId, satB.id);
    assert.equal(before.detections[0].recorders, 2);
    const res = await api.del(`/satellites/${satB.id}`, owner, {});
    assert.equal(res.status, 204, JSON.stringify(res.body));
    const after = await listed(BLACKBIRD, 50_000, 70_000);
    assert.equal(after.total, 1);
    assert.equal(after.detections[0].satelliteId, satA.id);
    assert.equal(after.detections[0].recorders, 1);
    // The tit observation A led loses B's part: still listed, one recorder.
    const tit = await listed(TIT, 110_000, 130_000);
    assert.equal(tit.total, 1);
    assert.equal(tit.detections[0].recorders, 1);
    const agg = await hub.sql.one<{ n: number }>(
      `SELECT coalesce(sum(listed), 0)::int AS n FROM detection_hour_counts WHERE tenant_id = $1 AND dim = 'all'`,
      [team.id],
    );
    const all = await api.get(`/detections?tenantId=${team.id}&limit=100`, owner);
    assert.equal(agg.n, all.body.total);
  });
});
