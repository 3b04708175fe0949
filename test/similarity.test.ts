/**
 * Search by sound (issue 35 point 4): "Find similar calls" answers the team's nearest recordings
 * by cosine similarity of the window embeddings, among the same model's only, never another
 * team's; "label all like this" proposes votes and casts only those the person keeps, through
 * the review rules. Embedded hubs search through pgvector's HNSW index; a hub on PostgreSQL
 * without pgvector (DATABASE_URL, as on this machine and CI) through the exact scan: this file
 * runs on both, and says which it expects.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { createDetectionsRepo } from '../src/modules/detections/repo.ts';
import { indexName } from '../src/modules/similarity/repo.ts';

type World = Awaited<ReturnType<ReturnType<typeof factories>['world']>>;

// A PostgreSQL here has no pgvector (none can be installed): the exact scan answers there.
const EXPECTED_INDEX = process.env.DATABASE_URL ? 'exact' : 'hnsw';
const MODEL = 'test-embedder';
const DIMS = 8;

/** A unit vector at `deg` degrees from the first axis in the plane of the first two: its cosine to e1 is cos(deg). */
const atAngle = (deg: number, dims = DIMS) => {
  const v = new Array<number>(dims).fill(0);
  v[0] = Math.cos((deg * Math.PI) / 180);
  v[1] = Math.sin((deg * Math.PI) / 180);
  return v;
};
const cos = (deg: number) => Math.cos((deg * Math.PI) / 180);

describe('search by sound', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let w: World;
  let sat: { id: string; tenantId: string };
  let source: string;
  /** Robins at 10°, 20°, 30°, 60°; a wren at 15°; in degrees from the source. */
  const near: Record<string, string> = {};

  async function embed(detectionId: string, tenantId: string, values: number[], modelId = MODEL) {
    // The writer the inference worker uses (repo.insertEmbeddings), bytes and all.
    const repo = createDetectionsRepo(hub.infra.db);
    await hub.infra.db.tx((tx) => repo.insertEmbeddings(tx, [{ detectionId, tenantId, modelId, vector: Float32Array.from(values) }]));
  }
  async function detection(spec: Parameters<typeof makeDetection>[1], values: number[] | null, modelId = MODEL) {
    const id = await makeDetection(hub, { satellite: sat, modelId, ...spec });
    if (values) await embed(id, sat.tenantId, values, modelId);
    return id;
  }

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    w = await factories(hub).world();
    sat = await makeSatellite(hub, w.team, w.owner, 'Orchard Mic');
    const t0 = hub.clock.now().getTime() - 3_600_000;
    source = await detection({ at: new Date(t0) }, atAngle(0));
    near.robin10 = await detection({ at: new Date(t0 + 60_000), confidence: 0.81 }, atAngle(10));
    near.robin20 = await detection({ at: new Date(t0 + 120_000), confidence: 0.72 }, atAngle(20));
    near.robin30 = await detection({ at: new Date(t0 + 180_000), confidence: 0.63 }, atAngle(30));
    near.robin60 = await detection({ at: new Date(t0 + 240_000), confidence: 0.55 }, atAngle(60));
    near.wren15 = await detection(
      { at: new Date(t0 + 300_000), code: 'winwre4', commonName: 'Eurasian Wren', scientificName: 'Troglodytes troglodytes' },
      atAngle(15),
    );
    // What the list leaves out is left out here too: a call's later row, a category the team hides.
    near.continuation = await detection({ at: new Date(t0 + 360_000), callId: near.robin10 }, atAngle(1));
    near.hidden = await detection({ at: new Date(t0 + 420_000), category: 'anthropogenic', code: 'engine' }, atAngle(2));
    // The same direction from another model (its own space) and from another team: never an answer.
    near.otherModel = await detection({ at: new Date(t0 + 480_000) }, atAngle(0, 16), 'another-model');
    const otherSat = await makeSatellite(hub, w.otherTeam, w.otherOwner, 'Their Mic');
    const theirs = await makeDetection(hub, { satellite: otherSat, modelId: MODEL });
    await embed(theirs, otherSat.tenantId, atAngle(0));
    near.theirs = theirs;
    near.noEmbedding = await detection({ at: new Date(t0 + 540_000) }, null);
  });

  after(async () => {
    await hub?.close();
  });

  test("the team's nearest calls of the same model, most similar first, with species, confidence, votes, satellite and time", async () => {
    const res = await api.get(`/detections/${source}/similar`, w.viewer);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.index, EXPECTED_INDEX);
    assert.equal(res.body.modelId, MODEL);
    assert.equal(res.body.searchable, true);
    const ids = res.body.similar.map((s: { id: string }) => s.id);
    assert.deepEqual(ids, [near.robin10, near.wren15, near.robin20, near.robin30, near.robin60]);
    const degrees = [10, 15, 20, 30, 60];
    res.body.similar.forEach((s: { similarity: number }, i: number) =>
      assert.ok(Math.abs(s.similarity - cos(degrees[i])) < 1e-5, `${i}: ${s.similarity}`),
    );
    const first = res.body.similar[0];
    assert.equal(first.speciesCode, 'eurrob1');
    assert.equal(first.commonName, 'European Robin');
    assert.equal(first.confidence, 0.81);
    assert.equal(first.satelliteName, 'Orchard Mic');
    assert.equal(first.satelliteId, sat.id);
    assert.deepEqual(first.votes, { confirm: 0, reject: 0, unsure: 0 });
    assert.equal(first.myVote, null);
    assert.equal(typeof first.audioChunkId, 'string');
    assert.ok(!Number.isNaN(Date.parse(first.detectedAt)));
    assert.equal(res.body.similar[1].commonName, 'Eurasian Wren');

    const two = await api.get(`/detections/${source}/similar?limit=2`, w.viewer);
    assert.deepEqual(
      two.body.similar.map((s: { id: string }) => s.id),
      [near.robin10, near.wren15],
    );
  });

  test('the index in force is the one the system status names; on pgvector each model has its own HNSW index', async () => {
    const status = await api.get('/system/status', w.hubAdmin);
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.data.similarity.index, EXPECTED_INDEX);
    const idx = await hub.sql.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE indexname = $1', [indexName(MODEL, DIMS)]);
    if (EXPECTED_INDEX === 'hnsw') {
      assert.equal(idx.length, 1);
      assert.match(idx[0].indexdef, /USING hnsw .*vector_cosine_ops/);
    } else assert.equal(idx.length, 0);
  });

  test("never another team's: their detection is not found, and their embeddings are never an answer", async () => {
    assertError(await api.get(`/detections/${near.theirs}/similar`, w.owner), 404, 'NOT_FOUND');
    const theirs = await api.get(`/detections/${near.theirs}/similar`, w.otherOwner);
    assert.equal(theirs.status, 200);
    // Their team holds one embedding of the model: theirs. Ours are never among its neighbours.
    assert.deepEqual(theirs.body.similar, []);
  });

  test('a detection whose model keeps no embedding says it cannot be searched', async () => {
    const res = await api.get(`/detections/${near.noEmbedding}/similar`, w.member);
    assert.equal(res.status, 200);
    assert.deepEqual(
      { searchable: res.body.searchable, modelId: res.body.modelId, similar: res.body.similar },
      {
        searchable: false,
        modelId: null,
        similar: [],
      },
    );
  });

  test('"label all like this": proposals are the same species at the chosen similarity, nothing is cast until the person confirms', async () => {
    for (const who of [w.viewer, w.key]) {
      const res = await api.get(`/detections/${source}/similar/proposals?vote=confirm`, who);
      assert.equal(res.status, 403, `${res.status} ${res.text}`);
    }
    const res = await api.get(`/detections/${source}/similar/proposals?vote=confirm&minSimilarity=0.85`, w.member);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.speciesCode, 'eurrob1');
    // The wren is as near but another species; the robin at 60° is below 0.85.
    assert.deepEqual(
      res.body.proposals.map((p: { id: string }) => p.id),
      [near.robin10, near.robin20, near.robin30],
    );
    const votes = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detection_votes WHERE tenant_id = $1', [w.team.id]);
    assert.equal(votes.n, 0, 'proposing casts nothing');
  });

  test('the kept proposals are voted through the review rules, each audited; anything else is skipped', async () => {
    const body = { vote: 'confirm', minSimilarity: 0.85, detectionIds: [near.robin10, near.robin30, near.wren15, near.robin60] };
    assertError(await api.post(`/detections/${source}/similar/label`, body, w.viewer), 403, 'FORBIDDEN');
    const res = await api.post(`/detections/${source}/similar/label`, body, w.member);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.voted, [near.robin10, near.robin30]);
    assert.deepEqual(res.body.skipped, [near.wren15, near.robin60]);
    const rows = await hub.sql.query<{ detection_id: string; vote: string; status: string }>(
      `SELECT v.detection_id, v.vote, d.verification_status AS status FROM detection_votes v JOIN detections d ON d.id = v.detection_id
       WHERE v.user_id = $1 ORDER BY d.detected_at`,
      [w.member.id],
    );
    assert.deepEqual(
      rows.map((r) => [r.detection_id, r.vote, r.status]),
      [
        [near.robin10, 'confirm', 'confirmed'],
        [near.robin30, 'confirm', 'confirmed'],
      ],
    );
    const audited = await hub.sql.query<{ target_id: string }>(
      `SELECT target_id FROM audit_log WHERE action = 'detection.voted' AND actor_user_id = $1 ORDER BY target_id`,
      [w.member.id],
    );
    assert.deepEqual(audited.map((a) => a.target_id).sort(), [near.robin10, near.robin30].sort());

    // What the person already voted so is no longer proposed to them; the neighbours show the votes.
    const again = await api.get(`/detections/${source}/similar/proposals?vote=confirm&minSimilarity=0.85`, w.member);
    assert.deepEqual(
      again.body.proposals.map((p: { id: string }) => p.id),
      [near.robin20],
    );
    const similar = await api.get(`/detections/${source}/similar`, w.member);
    const robin10 = similar.body.similar.find((s: { id: string }) => s.id === near.robin10);
    assert.deepEqual(robin10.votes, { confirm: 1, reject: 0, unsure: 0 });
    assert.equal(robin10.myVote, 'confirm');
    assert.equal(robin10.verificationStatus, 'confirmed');
  });

  test('the nearest ten of a few hundred agree with a brute-force cosine ranking', async () => {
    const model = 'recall-check';
    const dims = 24;
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const vectors: Array<{ id: string; v: number[] }> = [];
    for (let i = 0; i < 300; i++) {
      const v = Array.from({ length: dims }, rand);
      vectors.push({ id: await detection({}, v, model), v });
    }
    const q = vectors[0];
    const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0) / (norm(a) * norm(b));
    const want = vectors
      .slice(1)
      .map((x) => ({ id: x.id, s: Math.fround(cosine(q.v.map(Math.fround), x.v.map(Math.fround))) }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 10);
    const scans = () =>
      hub.sql.maybeOne<{ n: number }>('SELECT idx_scan::int AS n FROM pg_stat_user_indexes WHERE indexrelname = $1', [
        indexName(model, dims),
      ]);
    const before = (await scans())?.n ?? 0;
    const res = await api.get(`/detections/${q.id}/similar?limit=10`, w.member);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.index, EXPECTED_INDEX);
    if (EXPECTED_INDEX === 'hnsw') {
      // The model's HNSW index answered (a team this size fills the candidates: no exact fallback).
      await hub.sql.query('SELECT pg_stat_force_next_flush()');
      assert.ok(((await scans())?.n ?? 0) > before, 'the HNSW index was scanned');
    }
    const got: Array<{ id: string; similarity: number }> = res.body.similar;
    assert.equal(got.length, 10);
    const overlap = got.filter((g) => want.some((x) => x.id === g.id)).length;
    // The exact scan is exact; HNSW is approximate, and at this size finds them all in practice.
    assert.ok(overlap >= (EXPECTED_INDEX === 'exact' ? 10 : 9), `overlap ${overlap}`);
    for (const g of got) {
      const v = vectors.find((x) => x.id === g.id)!.v;
      assert.ok(Math.abs(g.similarity - cosine(q.v, v)) < 1e-4, `${g.similarity} vs ${cosine(q.v, v)}`);
    }
    for (let i = 1; i < got.length; i++) assert.ok(got[i - 1].similarity >= got[i].similarity, 'most similar first');
  });
});
