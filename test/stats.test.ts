/**
 * The /stats endpoints (issue 19) against figures computed by hand from a small seeded set in
 * Europe/Berlin around the start of summer time (Sunday 2026-03-29: 02:00 CET became 03:00 CEST,
 * so local 29 March has 23 hours, from 28T23:00Z to 29T22:00Z). The set holds a stitched call
 * (its continuations must not count), a tentative row and a hidden category (human voice) that
 * must not count, another team's row, and rows just outside the window.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { newId } from '../src/core/crypto.ts';
import { insertRows, type Row } from './helpers/stats.ts';

/** The window of most tests: local 27–30 March in Berlin. */
const W = 'from=2026-03-27&to=2026-03-31';
const near = (a: number | null, b: number, msg?: string) => {
  assert.ok(a !== null && Math.abs(a - b) < 1e-9, `${msg ?? ''} ${a} ≉ ${b}`);
};

describe('stats endpoints against hand-computed figures', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let alma: TestUser;
  let bruno: TestUser;
  let hubAdmin: TestUser;
  let team: TestTeam;
  let other: TestTeam;
  let A: { id: string };
  let B: { id: string };
  let C: { id: string };
  const id: Record<string, string> = {};

  const get = async (path: string, as: TestUser = owner) => {
    const res = await api.get(`/stats/${path}`, as);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.body;
  };

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    hub.clock.freeze(new Date('2026-03-30T12:00:00Z'));
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    alma = await f.member(team, 'member', { name: 'Alma' });
    bruno = await f.member(team, 'member', { name: 'Bruno' });
    hubAdmin = await f.user({ admin: true });
    other = await f.team(await f.user());
    A = await makeSatellite(hub, team, null, 'Alpha');
    B = await makeSatellite(hub, team, null, 'Bravo');
    C = await makeSatellite(hub, team, null, 'Charlie');
    const otherSat = await makeSatellite(hub, other, null, 'Other');
    const tz = await api.put(`/settings/tenant?tenantId=${team.id}`, { time_zone: 'Europe/Berlin' }, owner);
    assert.equal(tz.status, 200, tz.text);

    const named: Array<[string, Row]> = [
      ['r1', { sat: A, code: 'eurrob1', at: '2026-03-28T22:30:00Z' }], // local 28th 23:30 CET
      ['r2', { sat: A, code: 'eurrob1', at: '2026-03-28T23:30:00Z', status: 'confirmed' }], // 29th 00:30 CET
      ['r3', { sat: A, code: 'gretit1', at: '2026-03-29T01:30:00Z' }], // 29th 03:30 CEST
      ['r4', { sat: B, code: 'eurrob1', at: '2026-03-29T21:30:00Z' }], // 29th 23:30 CEST
      ['r5', { sat: B, code: 'comcha', at: '2026-03-29T22:30:00Z' }], // 30th 00:30
      ['r6', { sat: A, code: 'gretit1', at: '2026-03-30T08:10:00Z', status: 'confirmed' }], // 30th 10:10
      ['r7', { sat: B, code: 'gretit1', at: '2026-03-30T08:20:00Z', status: 'rejected' }], // 30th 10:20
      ['r8', { sat: A, code: 'eurrob1', at: '2026-03-30T06:00:00Z', status: 'pending_review', confidence: 0.95 }], // 30th 08:00, a call
      ['r13', { sat: A, code: 'eurbla', at: '2026-03-30T21:59:00Z' }], // 30th 23:59, last minute of the window
      ['tentative', { sat: B, code: 'eurrob1', at: '2026-03-30T07:00:00Z', tentative: true }],
      ['human', { sat: A, code: 'human', at: '2026-03-30T09:00:00Z', category: 'human_voice' }],
      ['atEnd', { sat: A, code: 'eurrob1', at: '2026-03-30T22:00:00Z' }], // local 31st 00:00: outside
      ['before', { sat: A, code: 'eurrob1', at: '2026-03-26T12:00:00Z' }], // March, outside the small window
      ['marchLast', { sat: A, code: 'gretit1', at: '2026-03-31T21:30:00Z' }], // local 31 March 23:30
      ['aprilFirst', { sat: A, code: 'eurrob1', at: '2026-03-31T22:30:00Z' }], // local 1 April 00:30
    ];
    const ids = await insertRows(
      hub,
      team,
      named.map(([, r]) => r),
    );
    named.forEach(([k], i) => (id[k] = ids[i]));
    // Two continuations stitched into r8's call: one row on the list, whatever the call's length.
    await insertRows(hub, team, [
      { sat: A, code: 'eurrob1', at: '2026-03-30T06:00:03Z', callId: id.r8 },
      { sat: A, code: 'eurrob1', at: '2026-03-30T06:00:06Z', callId: id.r8, status: 'confirmed' },
    ]);
    await insertRows(hub, other, [{ sat: otherSat, code: 'eurrob1', at: '2026-03-29T10:00:00Z', team: other }]);
    // Votes: Bruno 3 on listed rows, Alma 2; votes on the tentative and the hidden row do not count.
    const vote = (d: string, u: TestUser, v: string) =>
      hub.sql.query(
        `INSERT INTO detection_votes (detection_id, user_id, tenant_id, vote, decisive, created_at, updated_at) VALUES ($1, $2, $3, $4, false, now(), now())`,
        [d, u.id, team.id, v],
      );
    await vote(id.r6, alma, 'confirm');
    await vote(id.r7, alma, 'reject');
    await vote(id.tentative, alma, 'confirm');
    await vote(id.r2, bruno, 'confirm');
    await vote(id.r7, bruno, 'reject');
    await vote(id.r13, bruno, 'unsure');
    // Votes on rows just outside the window (its end in local time, and days before): not counted.
    await vote(id.atEnd, alma, 'confirm');
    await vote(id.before, bruno, 'confirm');
    await vote(id.human, bruno, 'reject');
    // Chunks: two in the window, one before it.
    for (const at of ['2026-03-28T10:00:00Z', '2026-03-30T21:00:00Z', '2026-03-26T22:30:00Z'])
      await hub.sql.query(
        `INSERT INTO chunks (id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, received_at)
         VALUES ($1, $2, $3, $4, 3000, 48000, 'k', 10, now())`,
        [newId(), team.id, A.id, at],
      );
  });
  after(() => hub.close());

  test('dashboard counts listed detections, species, satellites, chunks and today', async () => {
    const d = await get(`dashboard?tenantId=${team.id}&${W}`);
    assert.equal(d.timeZone, 'Europe/Berlin');
    assert.equal(d.from, '2026-03-26T23:00:00.000Z');
    assert.equal(d.to, '2026-03-30T22:00:00.000Z');
    assert.deepEqual(
      { ...d, timeZone: undefined, from: undefined, to: undefined },
      {
        timeZone: undefined,
        from: undefined,
        to: undefined,
        speciesCount: 4,
        detectionCount: 9,
        chunkCount: 2,
        satelliteCount: 2,
        todayCount: 5,
        confirmedCount: 2,
      },
    );
    // `days` counts back from the local today (30 March): days=4 is the same window.
    const byDays = await get(`dashboard?tenantId=${team.id}&days=4`);
    assert.equal(byDays.from, d.from);
    assert.equal(byDays.detectionCount, 9);
    const sat = await get(`dashboard?tenantId=${team.id}&${W}&satelliteId=${B.id}`);
    assert.equal(sat.detectionCount, 3);
    assert.equal(sat.speciesCount, 3);
  });

  test('trends: one entry per local day, the 23-hour DST day included', async () => {
    const t = await get(`trends?tenantId=${team.id}&${W}`);
    assert.deepEqual(t.days, [
      { date: '2026-03-27', count: 0 },
      { date: '2026-03-28', count: 1 },
      { date: '2026-03-29', count: 3 },
      { date: '2026-03-30', count: 5 },
    ]);
    const robins = await get(`trends?tenantId=${team.id}&${W}&species=EURROB1`);
    assert.deepEqual(
      robins.days.map((x: { count: number }) => x.count),
      [0, 1, 2, 1],
    );
    // Satellite and species at once read the rows.
    const both = await get(`trends?tenantId=${team.id}&${W}&species=eurrob1&satelliteId=${A.id}`);
    assert.deepEqual(
      both.days.map((x: { count: number }) => x.count),
      [0, 1, 1, 1],
    );
  });

  test('top species, most first, ties by code', async () => {
    const t = await get(`top-species?tenantId=${team.id}&${W}`);
    assert.deepEqual(
      t.species.map((s: { code: string; count: number }) => [s.code, s.count]),
      [
        ['eurrob1', 4],
        ['gretit1', 3],
        ['comcha', 1],
        ['eurbla', 1],
      ],
    );
    for (const s of t.species) assert.ok(s.commonName && s.scientificName);
    const top2 = await get(`top-species?tenantId=${team.id}&${W}&limit=2&satelliteId=${B.id}`);
    assert.deepEqual(
      top2.species.map((s: { code: string; count: number }) => [s.code, s.count]),
      [
        ['comcha', 1],
        ['eurrob1', 1],
      ],
    );
  });

  test('activity and the heat map use local wall-clock hours', async () => {
    const a = await get(`activity?tenantId=${team.id}&${W}`);
    const expected = Array.from({ length: 24 }, () => 0);
    expected[23] = 3;
    expected[0] = 2;
    expected[3] = 1;
    expected[8] = 1;
    expected[10] = 2;
    assert.deepEqual(
      a.hours.map((h: { count: number }) => h.count),
      expected,
    );
    const h = await get(`activity-heatmap?tenantId=${team.id}&${W}`);
    const day = (hours: Record<number, number>) => Array.from({ length: 24 }, (_, i) => hours[i] ?? 0);
    assert.deepEqual(h.days, [
      { date: '2026-03-27', hours: day({}) },
      { date: '2026-03-28', hours: day({ 23: 1 }) },
      { date: '2026-03-29', hours: day({ 0: 1, 3: 1, 23: 1 }) },
      { date: '2026-03-30', hours: day({ 0: 1, 8: 1, 10: 2, 23: 1 }) },
    ]);
  });

  test('verification progress, leaderboard without addresses, species accuracy', async () => {
    const v = await get(`verification?tenantId=${team.id}&${W}`);
    assert.deepEqual(
      { total: v.total, unverified: v.unverified, pendingReview: v.pendingReview, confirmed: v.confirmed, rejected: v.rejected },
      { total: 9, unverified: 5, pendingReview: 1, confirmed: 2, rejected: 1 },
    );
    near(v.progress, 3 / 9);
    const l = await get(`leaderboard?tenantId=${team.id}&${W}`);
    assert.deepEqual(l.contributors, [
      { userId: bruno.id, name: 'Bruno', votes: 3, confirms: 1, rejects: 1, unsure: 1 },
      { userId: alma.id, name: 'Alma', votes: 2, confirms: 1, rejects: 1, unsure: 0 },
    ]);
    assert.ok(!JSON.stringify(l).includes('@'), 'no email address');
    const acc = await get(`species-accuracy?tenantId=${team.id}&${W}`);
    assert.deepEqual(
      acc.species.map((s: { code: string; confirmed: number; rejected: number; accuracy: number }) => [s.code, s.confirmed, s.rejected]),
      [
        ['gretit1', 1, 1],
        ['eurrob1', 1, 0],
      ],
    );
    near(acc.species[0].accuracy, 0.5);
    near(acc.species[1].accuracy, 1);
  });

  test('a vote leaves the leaderboard when its detection leaves the list, and comes back with it', async () => {
    // Votes carry whether their detection is listed (0040); a trigger follows the detection's
    // stitching into a call and its tentative state, as the aggregation and observations set them.
    const votesOf = async (u: TestUser) =>
      (await get(`leaderboard?tenantId=${team.id}&${W}`)).contributors.find((c: { userId: string }) => c.userId === u.id)?.votes ?? 0;
    assert.equal(await votesOf(alma), 2);
    await hub.sql.query('UPDATE detections SET call_id = $2 WHERE id = $1', [id.r6, id.r8]);
    assert.equal(await votesOf(alma), 1, 'a continuation of a call is not listed');
    await hub.sql.query('UPDATE detections SET call_id = NULL, tentative = true, promoted = false WHERE id = $1', [id.r6]);
    assert.equal(await votesOf(alma), 1, 'nor is a tentative detection');
    await hub.sql.query('UPDATE detections SET tentative = false, promoted = true WHERE id = $1', [id.r6]);
    assert.equal(await votesOf(alma), 2, 'listed again');
  });

  test('species catalogue and a species profile', async () => {
    const l = await get(`species?tenantId=${team.id}&${W}`);
    assert.deepEqual(
      l.species.map((s: any) => [s.code, s.count, s.satelliteCount, s.confirmed, s.rejected]),
      [
        ['eurrob1', 4, 2, 1, 0],
        ['gretit1', 3, 2, 1, 1],
        ['comcha', 1, 1, 0, 0],
        ['eurbla', 1, 1, 0, 0],
      ],
    );
    const p = await get(`species/EURROB1?tenantId=${team.id}&${W}`);
    assert.equal(p.species.code.toLowerCase(), 'eurrob1');
    assert.equal(p.count, 4);
    assert.equal(p.satelliteCount, 2);
    assert.equal(p.confirmed, 1);
    assert.equal(p.rejected, 0);
    assert.equal(p.firstDetectedAt, '2026-03-28T22:30:00.000Z');
    assert.equal(p.lastDetectedAt, '2026-03-30T06:00:00.000Z');
    assert.deepEqual(
      p.trend.map((x: { count: number }) => x.count),
      [0, 1, 2, 1],
    );
    const hourly = Array.from({ length: 24 }, () => 0);
    hourly[23] = 2;
    hourly[0] = 1;
    hourly[8] = 1;
    assert.deepEqual(p.hourly, hourly);
    assert.deepEqual(
      p.satellites.map((s: any) => [s.satelliteId, s.name, s.count]),
      [
        [A.id, 'Alpha', 3],
        [B.id, 'Bravo', 1],
      ],
    );
    assert.deepEqual(
      p.confidence.map((b: { count: number }) => b.count),
      [0, 0, 0, 0, 0, 3, 0, 0, 0, 1],
    );
    assert.deepEqual(
      p.recent.map((r: { id: string }) => r.id),
      [id.r8, id.r4, id.r2, id.r1],
    );
    const missing = await api.get(`/stats/species/nosuch1?tenantId=${team.id}`, owner);
    assert.equal(missing.status, 404);
  });

  test('biodiversity per satellite to 1e-9', async () => {
    const b = await get(`biodiversity?tenantId=${team.id}&${W}`);
    const [a, bb, c] = b.satellites;
    assert.deepEqual(
      b.satellites.map((s: any) => [s.satelliteId, s.name, s.speciesCount, s.detectionCount]),
      [
        [A.id, 'Alpha', 3, 6],
        [B.id, 'Bravo', 3, 3],
        [C.id, 'Charlie', 0, 0],
      ],
    );
    // Alpha: robins 3, tits 2, blackbird 1 of 6.
    const hA = -(0.5 * Math.log(0.5) + (1 / 3) * Math.log(1 / 3) + (1 / 6) * Math.log(1 / 6));
    near(a.shannon, hA, 'shannon A');
    near(a.shannon, 1.0114042647073518, 'shannon A by hand');
    near(a.simpson, 1 - (1 / 4 + 1 / 9 + 1 / 36), 'simpson A');
    near(a.evenness, hA / Math.log(3), 'evenness A');
    // Bravo: three species once each: H′ = ln 3, evenness 1.
    near(bb.shannon, Math.log(3));
    near(bb.simpson, 2 / 3);
    near(bb.evenness, 1);
    assert.deepEqual([c.shannon, c.simpson, c.evenness], [null, null, null]);
    // One species: H′ 0, Simpson 0, evenness null (S < 2).
    const one = await get(`biodiversity?tenantId=${team.id}&from=2026-03-28&to=2026-03-29&satelliteId=${A.id}`);
    assert.deepEqual(
      one.satellites.map((s: any) => [s.speciesCount, s.shannon, s.simpson, s.evenness]),
      [[1, 0, 0, null]],
    );
  });

  test('compare: shared and separate species and Jaccard per pair', async () => {
    const c = await get(`compare?tenantId=${team.id}&${W}&satelliteIds=${A.id},${B.id},${C.id}`);
    assert.deepEqual(
      c.pairs.map((p: any) => [p.a, p.b, p.shared, p.onlyA, p.onlyB]),
      [
        [A.id, B.id, 2, 1, 1],
        [A.id, C.id, 0, 3, 0],
        [B.id, C.id, 0, 3, 0],
      ],
    );
    near(c.pairs[0].jaccard, 0.5);
    near(c.pairs[1].jaccard, 0);
    assert.deepEqual(
      c.satellites.map((s: any) => [s.name, s.speciesCount, s.detectionCount]),
      [
        ['Alpha', 3, 6],
        ['Bravo', 3, 3],
        ['Charlie', 0, 0],
      ],
    );
    const one = await api.get(`/stats/compare?tenantId=${team.id}&satelliteIds=${A.id}`, owner);
    assert.equal(one.status, 400);
    const foreign = await api.get(`/stats/compare?tenantId=${team.id}&satelliteIds=${A.id},${newId()}`, owner);
    assert.equal(foreign.status, 404);
  });

  test('migration: species per local month (Berlin months start at 23:00 or 22:00 UTC)', async () => {
    const m = await get(`migration?tenantId=${team.id}&from=2026-03-01&to=2026-05-01`);
    assert.deepEqual(m.months, ['2026-03', '2026-04']);
    assert.deepEqual(
      m.species.map((s: any) => [s.code, s.total, s.counts]),
      [
        ['eurrob1', 7, [6, 1]],
        ['gretit1', 4, [4, 0]],
        ['comcha', 1, [1, 0]],
        ['eurbla', 1, [1, 0]],
      ],
    );
  });

  test('satellite activity: hourly profile and the earliest peak hour', async () => {
    const s = await get(`satellite-activity?tenantId=${team.id}&${W}`);
    const hours = (h: Record<number, number>) => Array.from({ length: 24 }, (_, i) => h[i] ?? 0);
    assert.deepEqual(
      s.satellites.map((x: any) => [x.name, x.detectionCount, x.peakHour, x.hours]),
      [
        ['Alpha', 6, 23, hours({ 0: 1, 3: 1, 8: 1, 10: 1, 23: 2 })],
        ['Bravo', 3, 0, hours({ 0: 1, 10: 1, 23: 1 })],
        ['Charlie', 0, null, hours({})],
      ],
    );
  });

  test('the zone: the team’s for one team, the hub’s over several; windows refused clearly', async () => {
    const mine = await get(`trends?${W}`);
    assert.equal(mine.timeZone, 'Europe/Berlin', 'a member of one team gets that team’s zone without tenantId');
    const all = await get(`dashboard?from=2026-03-27T00:00:00Z&to=2026-03-31T00:00:00Z`, hubAdmin);
    assert.equal(all.timeZone, 'UTC');
    // UTC 27th–30th: every listed row of the team but atEnd's neighbours… plus the other team's row.
    const raw = await hub.sql.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM detections WHERE call_id IS NULL AND promoted AND NOT tentative AND category = 'bird'
         AND detected_at >= '2026-03-27T00:00:00Z' AND detected_at < '2026-03-31T00:00:00Z'`,
    );
    assert.equal(all.detectionCount, raw.n);
    for (const q of [
      'days=0',
      'days=400',
      'from=2026-03-01',
      'days=3&from=2026-03-01&to=2026-03-02',
      'from=2026-03-05&to=2026-03-01',
      'from=yesterday&to=2026-03-01',
      'from=2026-03-01T10:00&to=2026-03-02',
    ])
      assert.equal((await api.get(`/stats/trends?tenantId=${team.id}&${q}`, owner)).status, 400, q);
  });

  test('a half-hour zone reads the rows and still counts local hours', async () => {
    const tz = await api.put(`/settings/tenant?tenantId=${team.id}`, { time_zone: 'Asia/Calcutta' }, owner);
    assert.equal(tz.status, 200);
    try {
      // Kolkata is UTC+05:30: r6 08:10Z → 13:40, r7 08:20Z → 13:50, r8 06:00Z → 11:30, on local 30 March.
      const a = await get(`activity?tenantId=${team.id}&from=2026-03-30&to=2026-03-31`);
      assert.equal(a.timeZone, 'Asia/Calcutta');
      assert.equal(a.from, '2026-03-29T18:30:00.000Z');
      const counts = a.hours.map((h: { count: number }) => h.count);
      // Local 30th: r4 21:30Z(29th) → 03:00, r5 22:30Z(29th) → 04:00, r8 11:30, r6/r7 13:xx.
      assert.equal(counts[3], 1);
      assert.equal(counts[4], 1);
      assert.equal(counts[11], 1);
      assert.equal(counts[13], 2);
      assert.equal(
        counts.reduce((x: number, y: number) => x + y, 0),
        5,
      );
    } finally {
      await api.put(`/settings/tenant?tenantId=${team.id}`, { time_zone: 'Europe/Berlin' }, owner);
    }
  });

  test('showing a hidden category counts it; other teams never count', async () => {
    const show = (cats: string[] | null) => api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: cats }, owner);
    assert.equal((await show(['bird', 'human_voice'])).status, 200);
    try {
      const d = await get(`dashboard?tenantId=${team.id}&${W}`);
      assert.equal(d.detectionCount, 10);
      assert.equal(d.speciesCount, 5);
      const l = await get(`leaderboard?tenantId=${team.id}&${W}`);
      assert.equal(l.contributors[0].votes, 4, 'the vote on the human voice now counts');
    } finally {
      await show(null);
    }
    const otherView = await api.get(`/stats/dashboard?tenantId=${team.id}`, (await factories(hub).user()) as TestUser);
    assert.equal(otherView.status, 404, 'a team the caller is not in is not found');
  });
});
