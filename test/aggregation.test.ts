/**
 * Temporal aggregation and stitched calls (spec hub-http-api §2 Detection tentative/promoted,
 * §4 GET /detections includeTentative and the aggregation member, §9 0.77.3; the rules are in
 * docs/decisions.md). Chunks are stored as ingest stores them and classified by the real worker
 * handler; only the classifier is replaced, so each chunk "hears" what the test says.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { classifyChunk } from './helpers/inference.ts';
import { sweepTentative } from '../src/modules/detections/aggregation.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import type { Prediction } from '../src/infra/classifier/types.ts';

const ROBIN = 'Erithacus rubecula_European Robin';
const TIT = 'Parus major_Great Tit';
const BLACKBIRD = 'Turdus merula_Eurasian Blackbird';
const CHAFFINCH = 'Fringilla coelebs_Common Chaffinch';
const CUCKOO = 'Cuculus canorus_Common Cuckoo';

describe('aggregation and stitched calls', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let viewer: TestUser;
  let root: TestUser;
  let team: TestTeam;
  let satA: { id: string };
  let satB: { id: string };
  let base: number;
  const catalog = speciesCatalog();
  const code = (label: string) => catalog.byLabel(label)!.code;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    viewer = await f.member(team, 'viewer');
    root = await f.user({ admin: true });
    satA = await makeSatellite(hub, team, null, 'A');
    satB = await makeSatellite(hub, team, null, 'B');
    base = hub.clock.now().getTime() - 30 * 60_000;
  });
  after(() => hub.close());

  /** A 3-second chunk of `sat` recorded `ms` after the base time, classified as hearing `species`. */
  async function chunk(sat: { id: string }, ms: number, species: Array<[string, number]>) {
    const made = await makeChunk(hub, { satellite: { id: sat.id, tenantId: team.id }, at: new Date(base + ms), audio: makeWav(144_000) });
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

  const row = (id: string) =>
    hub.sql.one<{ tentative: boolean; promoted: boolean; call_id: string | null; call_chunks: number }>(
      'SELECT tentative, promoted, call_id, call_chunks FROM detections WHERE id = $1',
      [id],
    );
  const states = async (ids: string[]) => Promise.all(ids.map(async (id) => ((await row(id)).tentative ? 'tentative' : 'promoted')));
  const MIN = 60_000;
  /** The detection ids the last chunk announced (MQTT detection message and WebSocket event). */
  let announced: string[] = [];

  test('with the rule off (the default) every detection is promoted at once', async () => {
    const [id] = await chunk(satA, 0, [[CUCKOO, 0.4]]);
    assert.deepEqual(await states([id]), ['promoted']);
    const list = await api.get(`/detections?tenantId=${team.id}&species=${code(CUCKOO)}`, viewer);
    assert.equal(list.body.total, 1);
    assert.deepEqual(list.body.aggregation, {});
    assert.deepEqual(announced, [id], 'a promoted detection is announced at once');
  });

  test('a detection in a category the team hides is stored but not announced', async () => {
    assert.equal(
      (await api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: ['amphibian', 'insect'] }, owner)).status,
      200,
    );
    try {
      const stored = await chunk(satB, 1000, [[CUCKOO, 0.6]]);
      assert.equal(stored.length, 1);
      assert.deepEqual(announced, []);
    } finally {
      assert.equal(
        (
          await api.put(
            `/settings/tenant?tenantId=${team.id}`,
            { visible_categories: ['bird', 'amphibian', 'insect', 'other_animal'] },
            owner,
          )
        ).status,
        200,
      );
    }
  });

  describe('with the rule on (count 3 in 10 minutes, confidenceHigh 0.9)', () => {
    before(async () => {
      const res = await api.put(
        `/settings/tenant?tenantId=${team.id}`,
        { aggregation: { enabled: true, count: 3, windowMinutes: 10, confidenceHigh: 0.9 } },
        owner,
      );
      assert.equal(res.status, 200, res.text);
    });

    test('tentative until the species reaches count detections from the satellite within the window, then the group is promoted', async () => {
      const [a] = await chunk(satA, 1 * MIN, [[ROBIN, 0.5]]);
      assert.deepEqual(announced, [], 'a tentative detection is not announced');
      const [b] = await chunk(satA, 5 * MIN, [[ROBIN, 0.6]]);
      assert.deepEqual(announced, []);
      assert.deepEqual(await states([a, b]), ['tentative', 'tentative']);
      assert.equal((await row(a)).promoted, false);
      // Another satellite's robin does not count toward satellite A's group.
      const [other] = await chunk(satB, 6 * MIN, [[ROBIN, 0.5]]);
      assert.deepEqual(await states([a, b, other]), ['tentative', 'tentative', 'tentative']);
      const [c] = await chunk(satA, 11 * MIN, [[ROBIN, 0.5]]); // a is exactly 10 minutes before: inside
      assert.deepEqual(await states([a, b, c, other]), ['promoted', 'promoted', 'promoted', 'tentative']);
      assert.deepEqual([...announced].sort(), [a, b, c].sort(), 'the promotion announces the whole group, once');
      assert.equal((await row(a)).promoted, true);
    });

    test('not promoted when the detections are spread wider than the window', async () => {
      const ids = [
        ...(await chunk(satA, 0, [[TIT, 0.5]])),
        ...(await chunk(satA, 6 * MIN, [[TIT, 0.5]])),
        ...(await chunk(satA, 12 * MIN + 1000, [[TIT, 0.5]])),
      ];
      assert.deepEqual(await states(ids), ['tentative', 'tentative', 'tentative']);
    });

    test('one detection at confidenceHigh promotes at once; a later one joins the promoted group', async () => {
      const [low] = await chunk(satA, 2 * MIN, [[CHAFFINCH, 0.4]]);
      assert.deepEqual(await states([low]), ['tentative']);
      const [high] = await chunk(satA, 3 * MIN, [[CHAFFINCH, 0.9]]);
      assert.deepEqual(await states([low, high]), ['promoted', 'promoted'], 'the tentative one in the window is promoted with it');
      assert.deepEqual([...announced].sort(), [low, high].sort());
      const [next] = await chunk(satA, 4 * MIN, [[CHAFFINCH, 0.3]]);
      assert.deepEqual(await states([next]), ['promoted']);
      assert.deepEqual(announced, [next]);
    });

    test('GET /detections lists tentative rows only with includeTentative, and maps their team to its rule', async () => {
      const plain = await api.get(`/detections?tenantId=${team.id}&species=${code(TIT)}`, viewer);
      assert.equal(plain.status, 200);
      assert.equal(plain.body.total, 0);
      assert.deepEqual(plain.body.aggregation, {});
      const all = await api.get(`/detections?tenantId=${team.id}&species=${code(TIT)}&includeTentative=true`, viewer);
      assert.equal(all.body.total, 3);
      assert.ok(all.body.detections.every((d: any) => d.tentative === true && d.promoted === false));
      assert.deepEqual(all.body.aggregation, {
        [team.id]: { enabled: true, count: 3, windowMinutes: 10, confidenceHigh: 0.9, retentionHours: 48 },
      });
      // Promoted rows only listed: no rule to map.
      const robins = await api.get(
        `/detections?tenantId=${team.id}&species=${code(ROBIN)}&satelliteId=${satA.id}&includeTentative=1`,
        viewer,
      );
      assert.equal(robins.body.total, 3);
      assert.deepEqual(robins.body.aggregation, {});
    });

    test('detections of adjacent chunks are stitched into one call: lists and counts show one row per call', async () => {
      const t = 20 * MIN;
      const [head] = await chunk(satA, t, [[BLACKBIRD, 0.5]]);
      const [second] = await chunk(satA, t + 3000, [[BLACKBIRD, 0.6]]);
      const [third] = await chunk(satA, t + 6000, [[BLACKBIRD, 0.55]]);
      assert.deepEqual(announced, [head], 'the promotion announces the call once, by its representative');
      // A missed chunk (3 s of silence) still continues the call; 6 s of silence ends it.
      const [fourth] = await chunk(satA, t + 12_000, [[BLACKBIRD, 0.5]]);
      assert.deepEqual(announced, [], 'a continuation of an announced call is not announced again');
      const [apart] = await chunk(satA, t + 21_000, [[BLACKBIRD, 0.5]]);
      assert.deepEqual(announced, [apart]);
      assert.equal((await row(head)).call_id, null);
      for (const id of [second, third, fourth]) assert.equal((await row(id)).call_id, head);
      assert.equal((await row(apart)).call_id, null);
      assert.equal((await row(head)).call_chunks, 4);
      // Each chunk the model heard it in counts toward the rule: the third promoted the group.
      assert.deepEqual(await states([head, second, third, fourth, apart]), ['promoted', 'promoted', 'promoted', 'promoted', 'promoted']);

      const list = await api.get(`/detections?tenantId=${team.id}&species=${code(BLACKBIRD)}&sortDir=asc`, viewer);
      assert.equal(list.body.total, 2);
      assert.deepEqual(
        list.body.detections.map((d: any) => d.id),
        [head, apart],
      );
      const call = list.body.detections[0];
      assert.equal(call.callId, head);
      assert.equal(call.callChunks, 4);
      assert.equal(call.callEndAt, new Date(base + t + 15_000).toISOString());
      assert.equal(list.body.detections[1].callChunks, 1);
      assert.equal(list.body.detections[1].callEndAt, new Date(base + t + 24_000).toISOString());

      const rows = await api.get(`/detections?tenantId=${team.id}&callId=${head}&sortDir=asc`, viewer);
      assert.equal(rows.status, 200);
      assert.deepEqual(
        rows.body.detections.map((d: any) => d.id),
        [head, second, third, fourth],
      );
      assert.equal(rows.body.total, 4);
      assert.ok(rows.body.detections.every((d: any) => d.callId === head));
      const detail = await api.get(`/detections/${third}`, viewer);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.callId, head);

      // The summary and the species timeline count calls too: two, not five.
      const window = `start=${new Date(base + t).toISOString()}&end=${new Date(base + t + 30_000).toISOString()}`;
      const summary = await api.get(`/detections/summary?tenantId=${team.id}&${window}`, viewer);
      assert.equal(summary.status, 200, summary.text);
      assert.equal(summary.body.species.find((s: any) => s.speciesCode === code(BLACKBIRD)).count, 2);
      const timeline = await api.get(`/detections/species-timeline?tenantId=${team.id}&${window}`, viewer);
      assert.equal(timeline.status, 200, timeline.text);
      const buckets = timeline.body.species.find((s: any) => s.speciesCode === code(BLACKBIRD)).buckets;
      assert.equal(
        buckets.reduce((n: number, b: any) => n + b.count, 0),
        2,
      );
    });

    test('stitching needs the same satellite and species', async () => {
      const t = 40 * MIN;
      const [a] = await chunk(satA, t, [[CUCKOO, 0.95]]);
      const [b] = await chunk(satB, t + 3000, [[CUCKOO, 0.95]]);
      const [c] = await chunk(satA, t + 3000, [
        [ROBIN, 0.95],
        [CUCKOO, 0.95],
      ]);
      assert.equal((await row(b)).call_id, null, 'another satellite');
      const rows = await hub.sql.query<{ species_code: string; call_id: string | null }>(
        'SELECT species_code, call_id FROM detections WHERE chunk_id = (SELECT chunk_id FROM detections WHERE id = $1)',
        [c],
      );
      assert.deepEqual(rows.find((r) => r.species_code === code(CUCKOO))?.call_id, a);
      assert.equal(rows.find((r) => r.species_code === code(ROBIN))?.call_id, null);
    });

    test('tentative detections older than retentionHours are removed by the sweep, and only while hub retention is on', async () => {
      assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { aggregation: { retentionHours: 1 } }, owner)).status, 200);
      const tentative = async () =>
        (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE tenant_id = $1 AND tentative', [team.id])).n;
      const promoted = async () =>
        (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE tenant_id = $1 AND NOT tentative', [team.id])).n;
      const before = { tentative: await tentative(), promoted: await promoted() };
      assert.equal(before.tentative, 4, "three tits and satellite B's robin");
      assert.deepEqual(
        await sweepTentative({ db: hub.infra.db, clock: hub.clock, settings: hub.services.settings }),
        {},
        'all younger than an hour',
      );

      // 39 minutes on, the hour cuts between 6 and 12 minutes after the base time.
      hub.clock.advanceMinutes(39);
      assert.equal((await api.put('/settings/platform', { retention_enabled: false }, root)).status, 200);
      try {
        assert.deepEqual(
          await sweepTentative({ db: hub.infra.db, clock: hub.clock, settings: hub.services.settings }),
          {},
          'hub retention off: nothing is removed',
        );
      } finally {
        await api.put('/settings/platform', { retention_enabled: null }, root);
      }
      assert.equal(await tentative(), 4);
      // The robin of satellite B and the tits at 0 and 6 minutes are older than an hour; the tit at 12 minutes is not yet.
      assert.deepEqual(await sweepTentative({ db: hub.infra.db, clock: hub.clock, settings: hub.services.settings }), { [team.id]: 3 });
      assert.equal(await tentative(), 1);
      assert.equal(await promoted(), before.promoted, 'promoted detections stay');
      hub.clock.advanceMinutes(10);
      assert.deepEqual(await sweepTentative({ db: hub.infra.db, clock: hub.clock, settings: hub.services.settings }), { [team.id]: 1 });
      assert.equal(await tentative(), 0);
    });
  });
});
