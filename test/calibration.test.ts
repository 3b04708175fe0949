/**
 * Confidence calibration (spec hub-http-api §4 "Calibration", §2 calibrated_confidence, §9 0.30):
 * an isotonic (pool-adjacent-violators) fit per (team, model) over confirmed (1) and rejected (0)
 * detections, refreshed by admins, read by every row of GET /detections. The expected curve below
 * is worked out by hand.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { calibrate, fitIsotonic } from '../src/modules/calibration/pav.ts';

/**
 * Ten verified detections, in confidence order (1 = confirmed, 0 = rejected):
 *   0.30:0 0.35:1 0.40:0 0.50:0 0.55:1 0.60:1 0.65:0 0.70:1 0.80:1 0.90:1
 * Pooling by hand: 0.35:1 > 0.40:0 → {0.35–0.40: 1/2}; > 0.50:0 → {0.35–0.50: 1/3};
 * 0.55:1 = 0.60:1 → {0.55–0.60: 1}; > 0.65:0 → {0.55–0.65: 2/3}; 0.70, 0.80, 0.90 all 1 → {0.70–0.90: 1}.
 */
const VERIFIED: Array<[number, 0 | 1]> = [
  [0.3, 0],
  [0.35, 1],
  [0.4, 0],
  [0.5, 0],
  [0.55, 1],
  [0.6, 1],
  [0.65, 0],
  [0.7, 1],
  [0.8, 1],
  [0.9, 1],
];
const EXPECTED = [
  { minConfidence: 0.3, maxConfidence: 0.3, calibrated: 0, samples: 1 },
  { minConfidence: 0.35, maxConfidence: 0.5, calibrated: 1 / 3, samples: 3 },
  { minConfidence: 0.55, maxConfidence: 0.65, calibrated: 2 / 3, samples: 3 },
  { minConfidence: 0.7, maxConfidence: 0.9, calibrated: 1, samples: 3 },
];
/** Raw → calibrated, by hand: inside a bucket its value, between buckets a straight line, beyond the ends the end value. */
const READINGS: Array<[number, number]> = [
  [0.2, 0], // below the first bucket
  [0.32, 0.4 * (1 / 3)], // 0.30 (0) → 0.35 (1/3), two fifths of the way
  [0.45, 1 / 3],
  [0.6, 2 / 3],
  [0.675, 2 / 3 + 0.5 * (1 / 3)], // halfway from 0.65 (2/3) to 0.70 (1)
  [0.95, 1], // above the last bucket
];

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-6, `${what}: ${a} ≠ ${b}`);

describe('calibration', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let viewer: TestUser;
  let root: TestUser;
  let team: TestTeam;
  let otherOwner: TestUser;
  let otherTeam: TestTeam;
  let at: number;

  async function insert(t: TestTeam, confidence: number, status: string, modelId = 'builtin') {
    return makeDetection(hub, { team: t, confidence, verificationStatus: status, modelId, at: new Date((at += 60_000)) });
  }

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    admin = await f.member(team, 'admin');
    member = await f.member(team, 'member');
    viewer = await f.member(team, 'viewer');
    root = await f.user({ admin: true });
    otherOwner = await f.user();
    otherTeam = await f.team(otherOwner);
    at = Date.UTC(2026, 4, 1);
    for (const [c, outcome] of VERIFIED) await insert(team, c, outcome ? 'confirmed' : 'rejected');
    // A second model with too few verified detections, and unverified rows to read the curve with.
    for (const [c, s] of [
      [0.5, 'confirmed'],
      [0.6, 'confirmed'],
      [0.4, 'rejected'],
    ] as const)
      await insert(team, c, s, 'other');
    for (const [c] of READINGS) await insert(team, c, 'unverified');
    // The other team: enough samples of its own (every one the same outcome on each side of 0.5).
    for (let i = 0; i < 10; i++) await insert(otherTeam, 0.3 + i * 0.05, i < 5 ? 'rejected' : 'confirmed');
  });
  after(() => hub.close());

  const listed = async () => {
    const res = await api.get(`/detections?tenantId=${team.id}&limit=200`, viewer);
    assert.equal(res.status, 200, res.text);
    return res.body.detections as Array<{
      id: string;
      confidence: number;
      calibrated_confidence: number;
      modelId: string;
      verificationStatus: string;
    }>;
  };

  test('the fit pools adjacent violators (equal confidences pooled first)', () => {
    assert.deepEqual(
      fitIsotonic([
        { confidence: 0.5, outcome: 1 },
        { confidence: 0.5, outcome: 0 },
        { confidence: 0.4, outcome: 1 },
      ]),
      [{ minConfidence: 0.4, maxConfidence: 0.5, calibrated: 2 / 3, samples: 3 }],
    );
    assert.equal(calibrate([], 0.42), 0.42, 'no curve: the raw confidence');
  });

  test('before any refresh: no curve, calibrated_confidence equals the raw confidence', async () => {
    const curve = await api.get(`/calibration/curve?tenantId=${team.id}&modelId=builtin`, viewer);
    assert.equal(curve.status, 200, curve.text);
    assert.deepEqual(curve.body, { tenantId: team.id, modelId: 'builtin', fittedAt: null, samples: 0, buckets: [] });
    for (const d of await listed()) assert.equal(d.calibrated_confidence, d.confidence);
  });

  test('refresh is Admin+: viewers and members get 403, another team 404', async () => {
    assert.equal((await api.post('/calibration/refresh', { tenantId: team.id }, viewer)).status, 403);
    assert.equal((await api.post('/calibration/refresh', { tenantId: team.id }, member)).status, 403);
    assert.equal((await api.post('/calibration/refresh', { tenantId: team.id }, otherOwner)).status, 404);
    assert.equal((await api.post('/calibration/refresh', { tenantId: team.id, modelId: '' }, admin)).status, 400);
  });

  test('an admin refreshes the team: the curve is the hand-computed PAV fit, the thin model is skipped, the refresh is audited', async () => {
    const res = await api.post('/calibration/refresh', { tenantId: team.id }, admin);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.refreshed.map((r: any) => [r.tenantId, r.modelId, r.samples, r.buckets]),
      [[team.id, 'builtin', 10, 4]],
    );
    assert.deepEqual(
      res.body.skipped.map((r: any) => [r.tenantId, r.modelId, r.samples]),
      [[team.id, 'other', 3]],
    );

    const curve = await api.get(`/calibration/curve?tenantId=${team.id}&modelId=builtin`, viewer);
    assert.equal(curve.status, 200);
    assert.equal(curve.body.samples, 10);
    assert.equal(curve.body.fittedAt, res.body.refreshed[0].fittedAt);
    assert.equal(curve.body.buckets.length, EXPECTED.length);
    EXPECTED.forEach((e, i) => {
      const b = curve.body.buckets[i];
      close(b.minConfidence, e.minConfidence, `bucket ${i} min`);
      close(b.maxConfidence, e.maxConfidence, `bucket ${i} max`);
      close(b.calibrated, e.calibrated, `bucket ${i} value`);
      assert.equal(b.samples, e.samples);
    });
    assert.deepEqual((await api.get(`/calibration/curve?tenantId=${team.id}&modelId=other`, viewer)).body.buckets, []);

    const audit = await hub.sql.query<{ details: any; actor_user_id: string }>(
      `SELECT details, actor_user_id FROM audit_log WHERE action = 'admin.calibration_refreshed' AND tenant_id = $1`,
      [team.id],
    );
    assert.equal(audit.length, 1);
    assert.equal(audit[0].actor_user_id, admin.id);
    assert.deepEqual(audit[0].details.models.map((m: any) => m.modelId).sort(), ['builtin', 'other']);
  });

  test('every row of GET /detections and the detail carry calibrated_confidence read from the curve', async () => {
    const rows = await listed();
    for (const [raw, want] of READINGS) {
      const d = rows.find((r) => r.verificationStatus === 'unverified' && Math.abs(r.confidence - raw) < 1e-6)!;
      assert.ok(d, `row at ${raw}`);
      close(d.calibrated_confidence, want, `calibrated ${raw}`);
    }
    for (const [raw, outcome] of VERIFIED) {
      const d = rows.find((r) => r.modelId === 'builtin' && r.verificationStatus !== 'unverified' && Math.abs(r.confidence - raw) < 1e-6)!;
      const bucket = EXPECTED.find((b) => raw >= b.minConfidence - 1e-9 && raw <= b.maxConfidence + 1e-9)!;
      close(d.calibrated_confidence, bucket.calibrated, `verified ${raw} (${outcome})`);
    }
    // The model without a curve reads raw.
    for (const d of rows.filter((r) => r.modelId === 'other')) assert.equal(d.calibrated_confidence, d.confidence);
    const target = rows.find((r) => Math.abs(r.confidence - 0.675) < 1e-6)!;
    const detail = await api.get(`/detections/${target.id}`, viewer);
    close(detail.body.calibrated_confidence, 2 / 3 + 1 / 6, 'detail');
  });

  test('coverage (Admin+): verified counts per (team, model) and the curve in force', async () => {
    assert.equal((await api.get(`/calibration/coverage?tenantId=${team.id}`, viewer)).status, 403);
    const res = await api.get(`/calibration/coverage?tenantId=${team.id}`, admin);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.minSamples, 10);
    const byModel = Object.fromEntries(res.body.coverage.map((c: any) => [c.modelId, c]));
    assert.deepEqual(Object.keys(byModel).sort(), ['builtin', 'other']);
    assert.equal(byModel.builtin.tenantId, team.id);
    assert.deepEqual(
      [byModel.builtin.confirmed, byModel.builtin.rejected, byModel.builtin.samples, byModel.builtin.enough],
      [6, 4, 10, true],
    );
    assert.equal(byModel.builtin.curve.samples, 10);
    assert.equal(byModel.builtin.curve.buckets, 4);
    assert.deepEqual([byModel.other.confirmed, byModel.other.rejected, byModel.other.enough, byModel.other.curve], [2, 1, false, null]);
    // Without tenantId, a team admin sees their own teams only.
    const mine = await api.get('/calibration/coverage', admin);
    assert.ok(mine.body.coverage.every((c: any) => c.tenantId === team.id));
  });

  test('a team admin without tenantId refreshes only their teams; a hub admin refreshes every pair', async () => {
    const own = await api.post('/calibration/refresh', {}, owner);
    assert.equal(own.status, 200, own.text);
    assert.ok(own.body.refreshed.every((r: any) => r.tenantId === team.id));
    assert.deepEqual((await api.get(`/calibration/curve?tenantId=${otherTeam.id}&modelId=builtin`, otherOwner)).body.buckets, []);

    const all = await api.post('/calibration/refresh', {}, root);
    assert.equal(all.status, 200, all.text);
    const pairs = all.body.refreshed.map((r: any) => `${r.tenantId}/${r.modelId}`);
    assert.ok(pairs.includes(`${team.id}/builtin`) && pairs.includes(`${otherTeam.id}/builtin`));
    const other = await api.get(`/calibration/curve?tenantId=${otherTeam.id}&modelId=builtin`, otherOwner);
    assert.deepEqual(
      other.body.buckets.map((b: any) => b.calibrated),
      [0, 1],
    );
    assert.equal((await api.get(`/calibration/curve?tenantId=${team.id}&modelId=builtin`, otherOwner)).status, 404);
    assert.equal((await api.get(`/calibration/curve?tenantId=${team.id}`, viewer)).status, 400, 'modelId is required');
  });

  test('a pair that falls below the minimum loses its curve and reads raw again', async () => {
    await hub.sql.query(
      `UPDATE detections SET verification_status = 'unverified' WHERE tenant_id = $1 AND confidence > 0.75 AND model_id = 'builtin'`,
      [team.id],
    );
    const res = await api.post('/calibration/refresh', { tenantId: team.id, modelId: 'builtin' }, admin);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.refreshed, []);
    assert.deepEqual(
      res.body.skipped.map((s: any) => [s.modelId, s.samples]),
      [['builtin', 8]],
    );
    assert.deepEqual((await api.get(`/calibration/curve?tenantId=${team.id}&modelId=builtin`, viewer)).body.buckets, []);
    for (const d of await listed()) assert.equal(d.calibrated_confidence, d.confidence);
  });
});
