/**
 * Per-species thresholds (issue 35 item 2; docs/model.md "Per-species thresholds"): learned from
 * the team's votes on one species at known confidences, recorded as history, applied to new
 * detections (held tentative, marked) and to alert rules, pinned or reset by a team admin only.
 * Detections to vote on are rows as the worker writes them; new ones go through the real worker
 * handler with a classifier that hears what the test says.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { classifyChunk } from './helpers/inference.ts';
import { waitFor } from './helpers/wait.ts';
import { makeWav } from '../src/protocol/wav.ts';
import type { Prediction } from '../src/infra/classifier/types.ts';

const ROBIN = 'Erithacus rubecula_European Robin';
const CODE = 'eurrob1';
const DAY = 86_400_000;

describe('per-species thresholds', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let member: TestUser;
  let viewer: TestUser;
  let team: TestTeam;
  let voted: { id: string; tenantId: string };
  let live: { id: string; tenantId: string };

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    member = await f.member(team, 'member');
    viewer = await f.member(team, 'viewer');
    voted = await makeSatellite(hub, team, null, 'Voted');
    live = await makeSatellite(hub, team, null, 'Live');
  });
  after(() => hub.close());

  const detail = async (code = CODE) => {
    const res = await api.get(`/species-thresholds/${code}?tenantId=${team.id}`, viewer);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  /** A detection of the species at this confidence, two days back on the satellite nobody listens to, and the owner's vote on it. */
  async function verified(code: string, confidence: number, vote: 'confirm' | 'reject', i: number) {
    const id = await makeDetection(hub, {
      satellite: voted,
      code,
      confidence,
      at: new Date(hub.clock.now().getTime() - 2 * DAY + i * 60_000),
      ...(code === CODE ? {} : { scientificName: 'Parus major', commonName: 'Great Tit' }),
    });
    const res = await api.post(`/detections/${id}/verify`, { vote }, owner);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.verificationStatus, vote === 'confirm' ? 'confirmed' : 'rejected');
    return id;
  }

  /** A chunk of the live satellite `ago` ms back, classified as hearing a robin at `confidence`; the stored row and whether it was announced. */
  async function heard(confidence: number, ago: number) {
    const made = await makeChunk(hub, { satellite: live, at: new Date(hub.clock.now().getTime() - ago), audio: makeWav(144_000) });
    const { stored, announced } = await classifyChunk(hub, made, {
      loadClassifier: async () => ({
        classify: async () => [
          {
            label: ROBIN,
            scientificName: 'Erithacus rubecula',
            commonName: 'European Robin',
            index: 0,
            logit: 0,
            confidence,
          } as Prediction,
        ],
      }),
    });
    assert.equal(stored.length, 1);
    return { id: stored[0].id, announced: announced.some((m) => m.id === stored[0].id) };
  }

  const row = (id: string) =>
    hub.sql.one<{ tentative: boolean; promoted: boolean; below_threshold: number | null }>(
      'SELECT tentative, promoted, below_threshold FROM detections WHERE id = $1',
      [id],
    );

  // 17 confirmed (0.50, 0.55, 0.66 … 0.94) and 5 rejected (0.30 … 0.45, and 0.65 among the confident ones).
  const CONFIRMED = [0.5, 0.55, ...Array.from({ length: 15 }, (_, i) => Math.round((0.66 + 0.02 * i) * 100) / 100)];
  const REJECTED = [0.3, 0.35, 0.4, 0.45, 0.65];

  test('too few votes, or too few of one outcome, set no threshold; the 20th vote with 5 of each does, and every recomputation is kept', async () => {
    const before = await detail();
    assert.equal(before.threshold, null);
    assert.deepEqual(before.history, []);
    assert.equal(before.target, 0.9);
    assert.equal(before.minVotes, 20);
    assert.equal(before.minEach, 5);

    let i = 0;
    for (const c of CONFIRMED) await verified(CODE, c, 'confirm', i++);
    for (const c of REJECTED.slice(0, 4)) await verified(CODE, c, 'reject', i++);
    // 21 votes, only 4 rejected: no threshold yet.
    const early = await detail();
    assert.equal(early.threshold, null);
    assert.equal(early.learned, null);
    assert.equal(early.votes, 21);
    assert.equal(early.history.length, 21);
    assert.deepEqual(
      early.history.map((h: { reason: string }) => h.reason),
      new Array(21).fill('too_few_votes'),
    );

    // The injected clock names the recomputation's time.
    hub.clock.freeze();
    const at = hub.clock.now().toISOString();
    await verified(CODE, 0.65, 'reject', i);
    const d = await detail();
    // 0.66 and above: 15 of 15 confirmed, Wilson lower bound 0.901 ≥ 0.9; at 0.65 (a rejection) 15 of 16 falls short.
    assert.equal(d.threshold, 0.66);
    assert.equal(d.learned, 0.66);
    assert.equal(d.mode, 'learned');
    assert.deepEqual([d.votes, d.confirmed, d.rejected, d.precision], [22, 17, 5, 1]);
    assert.equal(d.computedAt, at);
    assert.equal(d.history[0].computedAt, at);
    hub.clock.advance(60_000);
    assert.equal(d.history.length, 22);
    const [last, previous] = d.history;
    assert.deepEqual(
      {
        threshold: last.threshold,
        votes: last.votes,
        confirmed: last.confirmed,
        rejected: last.rejected,
        precision: last.precision,
        reason: last.reason,
      },
      { threshold: 0.66, votes: 22, confirmed: 17, rejected: 5, precision: 1, reason: 'learned' },
    );
    assert.ok(Math.abs(last.lowerBound - 0.9013) < 1e-3, String(last.lowerBound));
    assert.equal(previous.votes, 21);
    assert.equal(previous.threshold, null);

    // The list names the species; another species with 20 unanimous votes has none.
    let j = 100;
    for (let k = 0; k < 20; k++) await verified('gretit1', 0.5 + k / 50, 'confirm', j++);
    const tit = await detail('gretit1');
    assert.equal(tit.threshold, null);
    assert.equal(tit.votes, 20);
    assert.equal(tit.history[0].reason, 'too_few_votes');
    const list = await api.get(`/species-thresholds?tenantId=${team.id}`, viewer);
    assert.equal(list.status, 200, list.text);
    const robin = list.body.thresholds.find((t: { speciesCode: string }) => t.speciesCode === CODE);
    assert.equal(robin.threshold, 0.66);
  });

  test('a new detection below the threshold is stored tentative and marked, not announced, and fires no alert; one above does', async () => {
    const rule = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'Robins', type: 'detection', conditions: { species: [CODE] } },
      owner,
    );
    assert.equal(rule.status, 201, rule.text);

    const low = await heard(0.6, 10 * 60_000);
    assert.deepEqual(await row(low.id), { tentative: true, promoted: false, below_threshold: 0.66 });
    assert.equal(low.announced, false);
    const high = await heard(0.8, 5 * 60_000);
    assert.deepEqual(await row(high.id), { tentative: false, promoted: true, below_threshold: null });
    assert.equal(high.announced, true);

    const alerts = await waitFor('the alert of the confident robin', async () => {
      const res = await api.get(`/alerts?tenantId=${team.id}`, viewer);
      return res.body.alerts.some((a: { detectionId: string }) => a.detectionId === high.id) && res.body.alerts;
    });
    assert.deepEqual(
      alerts.map((a: { detectionId: string }) => a.detectionId),
      [high.id],
    );

    // The list leaves the held one out unless tentative rows are asked for, and then says why it waits.
    const listed = await api.get(`/detections?tenantId=${team.id}&satelliteId=${live.id}`, viewer);
    assert.deepEqual(
      listed.body.detections.map((d: { id: string }) => d.id),
      [high.id],
    );
    const all = await api.get(`/detections?tenantId=${team.id}&satelliteId=${live.id}&includeTentative=true`, viewer);
    const held = all.body.detections.find((d: { id: string }) => d.id === low.id);
    assert.equal(held.tentative, true);
    assert.equal(held.belowThreshold, 0.66);
    assert.equal(all.body.detections.find((d: { id: string }) => d.id === high.id).belowThreshold, null);
  });

  test('an alert rule does not fire on confirmation of a detection below the threshold in force', async () => {
    // Recorded before any threshold (not held), then confirmed while a pinned 0.9 is in force.
    const rule = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'Confirmed robins', type: 'detection', conditions: { species: [CODE], verifiedOnly: true } },
      owner,
    );
    assert.equal(rule.status, 201, rule.text);
    const ruleId = rule.body.id;
    const old = await makeDetection(hub, {
      satellite: voted,
      code: CODE,
      confidence: 0.85,
      at: new Date(hub.clock.now().getTime() - 3 * DAY),
    });
    const sure = await makeDetection(hub, {
      satellite: voted,
      code: CODE,
      confidence: 0.97,
      at: new Date(hub.clock.now().getTime() - 3 * DAY + 60_000),
    });
    assert.equal((await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'pinned', threshold: 0.9 }, owner)).status, 200);
    assert.equal((await api.post(`/detections/${old}/verify`, { vote: 'confirm' }, owner)).status, 200);
    assert.equal((await api.post(`/detections/${sure}/verify`, { vote: 'confirm' }, owner)).status, 200);
    const alerts = await waitFor('the alert of the confirmed confident robin', async () => {
      const res = await api.get(`/alerts?tenantId=${team.id}`, viewer);
      const mine = res.body.alerts.filter((a: { ruleId: string }) => a.ruleId === ruleId);
      return mine.some((a: { detectionId: string }) => a.detectionId === sure) && mine;
    });
    assert.deepEqual(
      alerts.map((a: { detectionId: string }) => a.detectionId),
      [sure],
    );
    assert.equal((await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'learned' }, owner)).status, 200);
  });

  test('an admin pins a value, resets to none and gives it back to the votes, each audited; members and viewers cannot', async () => {
    const body = { tenantId: team.id, mode: 'none' };
    assertError(await api.put(`/species-thresholds/${CODE}`, body, member), 403, 'FORBIDDEN');
    assertError(await api.put(`/species-thresholds/${CODE}`, body, viewer), 403, 'FORBIDDEN');
    assertError(await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'pinned' }, owner), 400, 'VALIDATION_FAILED');
    assertError(
      await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'none', threshold: 0.5 }, owner),
      400,
      'VALIDATION_FAILED',
    );
    assertError(
      await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'pinned', threshold: 1.5 }, owner),
      400,
      'VALIDATION_FAILED',
    );
    assert.equal((await detail()).threshold, 0.66, 'refused changes change nothing');
    const audited = () =>
      hub.sql.query<{ action: string; details: any }>(
        "SELECT action, details FROM audit_log WHERE tenant_id = $1 AND action LIKE 'admin.species_threshold_%' ORDER BY id",
        [team.id],
      );
    const before = (await audited()).length;

    const pinned = await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'pinned', threshold: 0.85 }, owner);
    assert.equal(pinned.status, 200, pinned.text);
    assert.deepEqual([pinned.body.mode, pinned.body.threshold, pinned.body.pinned, pinned.body.learned], ['pinned', 0.85, 0.85, 0.66]);
    const held = await heard(0.8, 4 * 60_000);
    assert.equal((await row(held.id)).below_threshold, 0.85);

    const reset = await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'none' }, owner);
    assert.equal(reset.status, 200, reset.text);
    assert.deepEqual([reset.body.mode, reset.body.threshold, reset.body.learned], ['none', null, 0.66]);
    const free = await heard(0.5, 3 * 60_000);
    assert.deepEqual(await row(free.id), { tentative: false, promoted: true, below_threshold: null });

    const learned = await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'learned' }, owner);
    assert.deepEqual([learned.body.mode, learned.body.threshold], ['learned', 0.66]);

    const entries = (await audited()).slice(before);
    assert.deepEqual(
      entries.map((e) => e.action),
      ['admin.species_threshold_pinned', 'admin.species_threshold_reset', 'admin.species_threshold_learned'],
    );
    assert.deepEqual(entries[0].details, {
      speciesCode: CODE,
      mode: 'pinned',
      threshold: 0.85,
      previous: { mode: 'learned', threshold: 0.66 },
    });
    assert.deepEqual(entries[1].details, {
      speciesCode: CODE,
      mode: 'none',
      threshold: null,
      previous: { mode: 'pinned', threshold: 0.85 },
    });
    assert.deepEqual(entries[2].details, {
      speciesCode: CODE,
      mode: 'learned',
      threshold: 0.66,
      previous: { mode: 'none', threshold: null },
    });
  });

  test('another team sees none of it', async () => {
    const f = factories(hub);
    const stranger = await f.user();
    await f.team(stranger);
    assert.equal((await api.get(`/species-thresholds/${CODE}?tenantId=${team.id}`, stranger)).status, 404);
    assert.equal((await api.put(`/species-thresholds/${CODE}`, { tenantId: team.id, mode: 'none' }, stranger)).status, 404);
  });
});
