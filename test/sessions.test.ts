/**
 * Recording sessions (spec hub-http-api §2 "Session", §4 "Sessions", §8 "Session gap"): a
 * satellite's consecutive chunks; 5 minutes or more of silence between one chunk's end and the
 * next chunk's start begins a new session. Counts are what the Detections page lists: promoted
 * detections, one per stitched call.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';

const S = 1000;
const M = 60 * S;

describe('sessions', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let viewer: TestUser;
  let otherOwner: TestUser;
  let team: TestTeam;
  let otherTeam: TestTeam;
  let sat1: { id: string };
  let sat2: { id: string };
  let foreignSat: { id: string };
  const base = Date.UTC(2026, 4, 10, 6, 0, 0);
  const iso = (ms: number) => new Date(base + ms).toISOString();
  /** Session name → its chunk ids in time order. */
  const chunks: Record<string, string[]> = { S1: [], S2: [], S3: [], S4: [] };

  async function chunk(sat: { id: string }, ms: number, session: string) {
    const { id } = await makeChunk(hub, { satellite: { id: sat.id, tenantId: team.id }, at: new Date(base + ms) });
    chunks[session].push(id);
    return id;
  }

  async function detection(
    sat: { id: string },
    chunkId: string,
    ms: number,
    species: [string, string],
    opts: { callId?: string; callChunks?: number; tentative?: boolean } = {},
  ) {
    return makeDetection(hub, {
      satellite: { id: sat.id, tenantId: team.id },
      chunkId,
      code: species[0],
      scientificName: 'x',
      commonName: species[1],
      confidence: 0.7,
      at: new Date(base + ms),
      tentative: opts.tentative ?? false,
      promoted: !(opts.tentative ?? false),
      callId: opts.callId ?? null,
      callChunks: opts.callChunks ?? 1,
    });
  }

  const ROBIN: [string, string] = ['eurrob1', 'European Robin'];
  const TIT: [string, string] = ['gretit1', 'Great Tit'];
  const BLACKBIRD: [string, string] = ['eurbla', 'Eurasian Blackbird'];
  let robinHead: string;
  let tit: string;
  let robinS2: string;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    viewer = await f.member(team, 'viewer');
    otherOwner = await f.user();
    otherTeam = await f.team(otherOwner);
    sat1 = await makeSatellite(hub, team, null, 'one');
    sat2 = await makeSatellite(hub, team, null, 'two');
    foreignSat = await makeSatellite(hub, otherTeam, null, 'foreign');

    // S1: three adjacent chunks (0–9 s); a robin call over the first two, a tit in the third.
    const c1 = await chunk(sat1, 0, 'S1');
    const c2 = await chunk(sat1, 3 * S, 'S1');
    const c3 = await chunk(sat1, 6 * S, 'S1');
    robinHead = await detection(sat1, c1, 0, ROBIN, { callChunks: 2 });
    await detection(sat1, c2, 3 * S, ROBIN, { callId: robinHead });
    tit = await detection(sat1, c3, 6 * S, TIT);
    // S2: exactly 5 minutes after S1 ended, a new session; the next chunk 4:59 after, the same one.
    const c4 = await chunk(sat1, 9 * S + 5 * M, 'S2');
    const c5 = await chunk(sat1, 12 * S + 5 * M + 4 * M + 59 * S, 'S2');
    robinS2 = await detection(sat1, c4, 9 * S + 5 * M, ROBIN);
    await detection(sat1, c5, 12 * S + 9 * M + 59 * S, TIT, { tentative: true });
    // S3: two hours in, one chunk, nothing heard.
    await chunk(sat1, 120 * M, 'S3');
    // S4: the other satellite, an hour in, four chunks: blackbird twice, robin once.
    const d = [];
    for (let i = 0; i < 4; i++) d.push(await chunk(sat2, 60 * M + i * 3 * S, 'S4'));
    await detection(sat2, d[0], 60 * M, BLACKBIRD);
    await detection(sat2, d[2], 60 * M + 6 * S, BLACKBIRD);
    await detection(sat2, d[3], 60 * M + 9 * S, ROBIN);
  });
  after(() => hub.close());

  const list = async (q = '') => {
    const res = await api.get(`/sessions?tenantId=${team.id}${q ? '&' + q : ''}`, viewer);
    assert.equal(res.status, 200, res.text);
    return res.body as { sessions: any[]; total: number };
  };
  const names = (b: { sessions: any[] }) => b.sessions.map((s) => Object.keys(chunks).find((k) => chunks[k][0] === s.id));

  test('a gap of 5 minutes or more splits sessions; each has its extent, chunk and detection counts', async () => {
    const b = await list();
    assert.equal(b.total, 4);
    assert.deepEqual(names(b), ['S3', 'S4', 'S2', 'S1'], 'newest first');
    const [s3, s4, s2, s1] = b.sessions;
    assert.deepEqual(
      {
        satelliteId: s1.satelliteId,
        start: s1.start,
        end: s1.end,
        chunkCount: s1.chunkCount,
        detectionCount: s1.detectionCount,
        speciesCount: s1.speciesCount,
      },
      { satelliteId: sat1.id, start: iso(0), end: iso(9 * S), chunkCount: 3, detectionCount: 2, speciesCount: 2 },
      'the stitched robin call counts once',
    );
    assert.equal(s1.tenantId, team.id);
    assert.equal(s1.satelliteName, 'one');
    assert.equal(s1.durationMs, 9 * S);
    assert.deepEqual(
      [s2.start, s2.end, s2.chunkCount, s2.detectionCount, s2.speciesCount],
      [iso(9 * S + 5 * M), iso(15 * S + 9 * M + 59 * S), 2, 1, 1],
      'the tentative tit is not counted',
    );
    assert.deepEqual([s3.chunkCount, s3.detectionCount, s3.speciesCount, s3.topSpecies], [1, 0, 0, []]);
    assert.deepEqual([s4.satelliteId, s4.chunkCount, s4.detectionCount, s4.speciesCount], [sat2.id, 4, 3, 2]);
    assert.deepEqual(s4.topSpecies, [
      { speciesCode: 'eurbla', commonName: 'Eurasian Blackbird', count: 2 },
      { speciesCode: 'eurrob1', commonName: 'European Robin', count: 1 },
    ]);
  });

  test('filter: with-detections and empty; satelliteId', async () => {
    const withD = await list('filter=with-detections');
    assert.deepEqual(names(withD), ['S4', 'S2', 'S1']);
    assert.equal(withD.total, 3);
    const empty = await list('filter=empty');
    assert.deepEqual(names(empty), ['S3']);
    assert.equal(empty.total, 1);
    assert.deepEqual(names(await list(`satelliteId=${sat2.id}`)), ['S4']);
  });

  test('sorting: date, duration, detections, species, chunks, both directions', async () => {
    assert.deepEqual(names(await list('sortDir=asc')), ['S1', 'S2', 'S4', 'S3']);
    assert.deepEqual(names(await list('sortBy=duration')), ['S2', 'S4', 'S1', 'S3']);
    assert.deepEqual(names(await list('sortBy=detections')), ['S4', 'S1', 'S2', 'S3']);
    assert.deepEqual(names(await list('sortBy=species')), ['S4', 'S1', 'S2', 'S3'], 'equal counts: newer first');
    assert.deepEqual(names(await list('sortBy=chunks&sortDir=asc')), ['S3', 'S2', 'S1', 'S4']);
  });

  test('start and end bound the chunks considered (end exclusive); a session crossing a bound is cut there', async () => {
    const b = await list(`start=${iso(3 * S)}&end=${iso(120 * M)}`);
    assert.equal(b.sessions.length, 3);
    assert.equal(b.total, 3);
    const [s4, s2, s1] = b.sessions;
    assert.deepEqual(
      [s4.satelliteId, s2.start, s1.id, s1.start, s1.chunkCount, s1.detectionCount],
      [sat2.id, iso(9 * S + 5 * M), chunks.S1[1], iso(3 * S), 2, 1],
    );
    assert.equal((await api.get(`/sessions?tenantId=${team.id}&start=soon`, viewer)).status, 400);
  });

  test('paging: limit and offset; total counts every session', async () => {
    const p = await list('limit=2&offset=1');
    assert.deepEqual(names(p), ['S4', 'S2']);
    assert.equal(p.total, 4);
    const past = await list('offset=10');
    assert.deepEqual(past.sessions, []);
    assert.equal(past.total, 4);
  });

  test("bad parameters answer 400; another team 404; without tenantId only the caller's teams", async () => {
    for (const q of ['sortBy=name', 'filter=all', 'sortDir=up', 'limit=0', 'limit=201', 'satelliteId=nope']) {
      const res = await api.get(`/sessions?tenantId=${team.id}&${q}`, viewer);
      assert.equal(res.status, 400, q);
      assert.equal(typeof res.body.error.code, 'string');
    }
    assert.equal((await api.get(`/sessions?tenantId=${team.id}`, otherOwner)).status, 404);
    const own = await api.get('/sessions', otherOwner);
    assert.equal(own.status, 200);
    assert.deepEqual(own.body, { sessions: [], total: 0 });
    assert.equal((await api.get('/sessions', viewer)).body.total, 4);
  });

  test('timeline: the chunks and listed detections of one satellite in [from, to)', async () => {
    const res = await api.get(`/sessions/timeline?tenantId=${team.id}&satelliteId=${sat1.id}&from=${iso(0)}&to=${iso(10 * M)}`, viewer);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.chunks.map((c: any) => c.id),
      [...chunks.S1, chunks.S2[0]],
    );
    assert.deepEqual(res.body.chunks[0], { id: chunks.S1[0], recordedAt: iso(0), durationMs: 3000 });
    assert.deepEqual(
      res.body.detections.map((d: any) => d.id),
      [robinHead, tit, robinS2],
      'one row per call, promoted only',
    );
    const head = res.body.detections[0];
    assert.equal(head.callChunks, 2);
    assert.equal(head.speciesCode, 'eurrob1');
    assert.equal(head.calibrated_confidence, head.confidence);
    assert.equal(res.body.from, iso(0));
    assert.equal(res.body.to, iso(10 * M));
  });

  test('timeline: range over 24 hours, reversed, unparsable or incomplete → 400; a satellite of another team → 404', async () => {
    const t = (q: string) => api.get(`/sessions/timeline?tenantId=${team.id}&${q}`, viewer);
    const long = await t(`satelliteId=${sat1.id}&from=${iso(0)}&to=${iso(24 * 60 * M + 1)}`);
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, 'RANGE_TOO_LONG');
    assert.equal((await t(`satelliteId=${sat1.id}&from=${iso(24 * 60 * M)}&to=${iso(0)}`)).status, 400);
    assert.equal((await t(`satelliteId=${sat1.id}&from=${iso(0)}&to=${iso(0)}`)).status, 400);
    assert.equal((await t(`satelliteId=${sat1.id}&from=yesterday&to=${iso(0)}`)).status, 400);
    assert.equal((await t(`from=${iso(0)}&to=${iso(M)}`)).status, 400);
    assert.equal((await t(`satelliteId=${sat1.id}&from=${iso(0)}&to=${iso(24 * 60 * M)}`)).status, 200, 'exactly 24 hours');
    assert.equal((await t(`satelliteId=${foreignSat.id}&from=${iso(0)}&to=${iso(M)}`)).status, 404);
    assert.equal(
      (await api.get(`/sessions/timeline?tenantId=${team.id}&satelliteId=${sat1.id}&from=${iso(0)}&to=${iso(M)}`, otherOwner)).status,
      404,
    );
  });
});
