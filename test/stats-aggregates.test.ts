/**
 * The stats aggregates (migration 0021) against the same figures computed from raw detections,
 * after every way rows change: inserts, promotion, votes (verification status), stitching,
 * category changes, deletion of rows and of a satellite, and a change of the categories shown.
 * Two checks each time: both tables equal GROUP BYs over detections, and the endpoints' figures
 * equal the raw-row figures for aligned and unaligned windows in Europe/Berlin.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { insertRows, type Row } from './helpers/stats.ts';

const ZONE = 'Europe/Berlin';
const LISTED = 'call_id IS NULL AND promoted AND NOT tentative';

describe('stats aggregates equal raw rows', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  let other: TestTeam;
  let sats: Array<{ id: string }>;
  let visible = ['bird', 'amphibian', 'insect', 'other_animal'];

  /** Deterministic pseudo-random rows, most over ten days around the March DST change. */
  function rows(n: number, seed: number, t: TestTeam, satellites: Array<{ id: string }>): Row[] {
    let x = seed;
    const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    const codes = ['eurrob1', 'gretit1', 'comcha', 'eurbla', 'blutit'];
    const out: Row[] = [];
    for (let i = 0; i < n; i++) {
      // A quarter spread over June 2025 to March 2027, so year-long windows read the year rows (0025).
      const at =
        rnd() < 0.25
          ? Date.parse('2025-06-01T00:00:00Z') + Math.floor(rnd() * 640 * 24 * 60) * 60_000
          : Date.parse('2026-03-24T00:00:00Z') + Math.floor(rnd() * 10 * 24 * 60) * 60_000;
      const human = rnd() < 0.1;
      out.push({
        sat: satellites[Math.floor(rnd() * satellites.length)],
        team: t,
        code: human ? 'human' : codes[Math.floor(rnd() * codes.length)],
        category: human ? 'human_voice' : 'bird',
        at: new Date(at).toISOString(),
        tentative: rnd() < 0.15,
        status: ['unverified', 'unverified', 'pending_review', 'confirmed', 'rejected'][Math.floor(rnd() * 5)],
        confidence: Math.round(rnd() * 1000) / 1000,
      });
    }
    return out;
  }

  async function drift(label: string) {
    const hours = await hub.sql.query(
      `WITH r AS (SELECT tenant_id, satellite_id::text AS sat, lower(species_code) AS code, category, date_trunc('hour', detected_at) AS hour
                  FROM detections WHERE ${LISTED}),
       d AS (SELECT tenant_id, 'all' AS dim, '' AS key, category, hour, count(*)::int AS n FROM r GROUP BY 1, 2, 3, 4, 5
             UNION ALL SELECT tenant_id, 'satellite', sat, category, hour, count(*)::int FROM r GROUP BY 1, 2, 3, 4, 5
             UNION ALL SELECT tenant_id, 'species', code, category, hour, count(*)::int FROM r GROUP BY 1, 2, 3, 4, 5)
       SELECT * FROM d FULL JOIN (SELECT tenant_id, dim, key, category, hour, listed AS n FROM detection_hour_counts WHERE listed <> 0) c
         USING (tenant_id, dim, key, category, hour) WHERE d.n IS DISTINCT FROM c.n`,
    );
    assert.deepEqual(hours, [], `${label}: detection_hour_counts`);
    const periods = await hub.sql.query(
      `WITH r AS (SELECT tenant_id, satellite_id::text AS sat, lower(species_code) AS code, category, g.grain,
                    CASE g.grain WHEN 'day' THEN (detected_at AT TIME ZONE 'UTC')::date WHEN 'month' THEN date_trunc('month', detected_at AT TIME ZONE 'UTC')::date
                      ELSE date_trunc('year', detected_at AT TIME ZONE 'UTC')::date END AS period,
                    verification_status AS s
                  FROM detections CROSS JOIN (VALUES ('day'), ('month'), ('year')) g (grain) WHERE ${LISTED}),
       x AS (SELECT tenant_id, grain, period, 'pair' AS dims, sat, code, category, s FROM r
             UNION ALL SELECT tenant_id, grain, period, 'satellite', sat, '', category, s FROM r
             UNION ALL SELECT tenant_id, grain, period, 'species', '', code, category, s FROM r
             UNION ALL SELECT tenant_id, grain, period, 'all', '', '', category, s FROM r),
       d AS (SELECT tenant_id, grain, dims, period, sat AS satellite, code, category, count(*)::int AS listed,
               count(*) FILTER (WHERE s = 'pending_review')::int AS pending_review, count(*) FILTER (WHERE s = 'confirmed')::int AS confirmed,
               count(*) FILTER (WHERE s = 'rejected')::int AS rejected
             FROM x GROUP BY 1, 2, 3, 4, 5, 6, 7)
       SELECT * FROM d FULL JOIN (SELECT * FROM detection_period_counts WHERE listed <> 0 OR pending_review <> 0 OR confirmed <> 0 OR rejected <> 0) c
         USING (tenant_id, grain, dims, period, satellite, code, category)
       WHERE (d.listed, d.pending_review, d.confirmed, d.rejected) IS DISTINCT FROM (c.listed, c.pending_review, c.confirmed, c.rejected)`,
    );
    assert.deepEqual(periods, [], `${label}: detection_period_counts`);
    const hods = await hub.sql.query(
      `WITH r AS (SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
                    extract(hour FROM detected_at AT TIME ZONE 'UTC')::int AS hod FROM detections WHERE ${LISTED}),
       d AS (SELECT tenant_id, 'day' AS grain, day AS period, satellite, hod, category, count(*)::int AS n FROM r GROUP BY 1, 2, 3, 4, 5, 6
             UNION ALL SELECT tenant_id, 'month', date_trunc('month', day)::date, satellite, hod, category, count(*)::int FROM r GROUP BY 1, 2, 3, 4, 5, 6
             UNION ALL SELECT tenant_id, 'year', date_trunc('year', day)::date, satellite, hod, category, count(*)::int FROM r GROUP BY 1, 2, 3, 4, 5, 6)
       SELECT * FROM d FULL JOIN (SELECT tenant_id, grain, period, satellite, hod::int AS hod, category, listed AS n FROM detection_hod_counts WHERE listed <> 0) c
         USING (tenant_id, grain, period, satellite, hod, category) WHERE d.n IS DISTINCT FROM c.n`,
    );
    assert.deepEqual(hods, [], `${label}: detection_hod_counts`);
  }

  /** Raw figures of one window, by the same rules, straight from detections. */
  async function raw(from: string, to: string) {
    const where = `tenant_id = $1 AND ${LISTED} AND category = ANY($2::text[]) AND detected_at >= $3 AND detected_at < $4`;
    const params = [team.id, visible, from, to];
    const q = (sql: string) => hub.sql.query<Record<string, any>>(sql, params);
    return {
      perDayHour: await q(
        `SELECT to_char(detected_at AT TIME ZONE '${ZONE}', 'YYYY-MM-DD') AS day, extract(hour FROM detected_at AT TIME ZONE '${ZONE}')::int AS hour, count(*)::int AS n
         FROM detections WHERE ${where} GROUP BY 1, 2`,
      ),
      perSpecies: await q(
        `SELECT lower(species_code) AS code, count(*)::int AS n, count(*) FILTER (WHERE verification_status = 'confirmed')::int AS confirmed,
           count(*) FILTER (WHERE verification_status = 'rejected')::int AS rejected, count(DISTINCT satellite_id)::int AS sats
         FROM detections WHERE ${where} GROUP BY 1`,
      ),
      perPair: await q(
        `SELECT satellite_id::text AS sat, lower(species_code) AS code, count(*)::int AS n FROM detections WHERE ${where} GROUP BY 1, 2`,
      ),
      status: (
        await q(
          `SELECT count(*)::int AS total, count(*) FILTER (WHERE verification_status = 'pending_review')::int AS pending,
             count(*) FILTER (WHERE verification_status = 'confirmed')::int AS confirmed, count(*) FILTER (WHERE verification_status = 'rejected')::int AS rejected
           FROM detections WHERE ${where}`,
        )
      )[0],
    };
  }

  async function figures(label: string) {
    await drift(label);
    const windows = [
      'from=2026-03-25&to=2026-04-02', // local midnights: hourly aggregates, DST day inside
      'from=2026-03-01&to=2026-05-01', // whole months
      'from=2026-03-26T10:17:00Z&to=2026-03-30T05:43:00Z', // unaligned edges: rows
      'from=2026-03-29T00:00:00Z&to=2026-03-29T12:00:00Z', // inside one UTC day
      'from=2025-11-26&to=2026-11-26', // a rolling year: a year row and a month at each end
      'from=2026-01-01&to=2027-01-01', // a local calendar year: its UTC year, an hour moved at each end
    ];
    for (const w of windows) {
      const get = async (path: string) => {
        const res = await api.get(`/stats/${path}${path.includes('?') ? '&' : '?'}tenantId=${team.id}&${w}`, owner);
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        return res.body;
      };
      const heat = await get('activity-heatmap');
      const r = await raw(heat.from, heat.to);
      const at = `${label} ${w}`;
      const cells = new Map(r.perDayHour.map((x) => [`${x.day} ${x.hour}`, x.n]));
      for (const d of heat.days)
        d.hours.forEach((n: number, h: number) => assert.equal(n, cells.get(`${d.date} ${h}`) ?? 0, `${at} heat ${d.date} ${h}`));
      const total = r.perDayHour.reduce((a, x) => a + x.n, 0);
      const trends = await get('trends');
      assert.equal(
        trends.days.reduce((a: number, d: { count: number }) => a + d.count, 0),
        total,
        `${at} trends`,
      );
      const activity = await get('activity');
      assert.equal(
        activity.hours.reduce((a: number, d: { count: number }) => a + d.count, 0),
        total,
        `${at} activity`,
      );
      const list = await get('species');
      assert.deepEqual(
        list.species.map((s: any) => [s.code.toLowerCase(), s.count, s.confirmed, s.rejected, s.satelliteCount]).sort(),
        r.perSpecies.map((s) => [s.code, s.n, s.confirmed, s.rejected, s.sats]).sort(),
        `${at} species list`,
      );
      const v = await get('verification');
      assert.deepEqual(
        [v.total, v.pendingReview, v.confirmed, v.rejected],
        [r.status.total, r.status.pending, r.status.confirmed, r.status.rejected],
        `${at} verification`,
      );
      const bio = await get('biodiversity');
      for (const s of bio.satellites) {
        const mine = r.perPair.filter((p) => p.sat === s.satelliteId);
        assert.equal(
          s.detectionCount,
          mine.reduce((a, p) => a + p.n, 0),
          `${at} biodiversity ${s.name}`,
        );
        assert.equal(s.speciesCount, mine.length, `${at} biodiversity species ${s.name}`);
      }
      const sa = await get('satellite-activity');
      const satHours = await hub.sql.query<{ sat: string; hour: number; n: number }>(
        `SELECT satellite_id::text AS sat, extract(hour FROM detected_at AT TIME ZONE '${ZONE}')::int AS hour, count(*)::int AS n
         FROM detections WHERE tenant_id = $1 AND ${LISTED} AND category = ANY($2::text[]) AND detected_at >= $3 AND detected_at < $4 GROUP BY 1, 2`,
        [team.id, visible, heat.from, heat.to],
      );
      for (const s of sa.satellites)
        s.hours.forEach((n: number, h: number) =>
          assert.equal(n, satHours.find((x) => x.sat === s.satelliteId && x.hour === h)?.n ?? 0, `${at} sat activity ${s.name} ${h}`),
        );
      for (const s of sa.satellites)
        assert.equal(
          s.detectionCount,
          r.perPair.filter((p) => p.sat === s.satelliteId).reduce((a, p) => a + p.n, 0),
          `${at} sat activity`,
        );
    }
  }

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    other = await f.team(await f.user());
    sats = [
      await makeSatellite(hub, team, null, 'S1'),
      await makeSatellite(hub, team, null, 'S2'),
      await makeSatellite(hub, team, null, 'S3'),
    ];
    const otherSat = await makeSatellite(hub, other, null, 'O1');
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { time_zone: ZONE }, owner)).status, 200);
    await insertRows(hub, team, rows(300, 7, team, sats));
    await insertRows(hub, other, rows(50, 11, other, [otherSat]));
  });
  after(() => hub.close());

  test('after inserts', async () => {
    await figures('inserts');
  });

  test('after promotion, votes and stitching', async () => {
    await hub.sql.query(
      `UPDATE detections SET tentative = false, promoted = true WHERE tenant_id = $1 AND tentative AND detected_at < '2026-03-29T12:00:00Z'`,
      [team.id],
    );
    await figures('promotion');
    await hub.sql.query(
      `UPDATE detections SET verification_status = CASE verification_status WHEN 'unverified' THEN 'confirmed' WHEN 'confirmed' THEN 'rejected' ELSE 'pending_review' END
       WHERE tenant_id = $1 AND confidence > 0.6`,
      [team.id],
    );
    await figures('votes');
    const heads = await hub.sql.query<{ id: string; satellite_id: string }>(
      `SELECT id, satellite_id FROM detections WHERE tenant_id = $1 AND ${LISTED} ORDER BY detected_at LIMIT 20`,
      [team.id],
    );
    await hub.sql.query(`UPDATE detections d SET call_id = $2 WHERE d.id = ANY($1::uuid[])`, [
      heads.slice(1, 6).map((h) => h.id),
      heads[0].id,
    ]);
    await figures('stitching');
  });

  test('after category changes, deletions and a change of the categories shown', async () => {
    await hub.sql.query(`UPDATE detections SET category = 'insect' WHERE tenant_id = $1 AND lower(species_code) = 'comcha'`, [team.id]);
    await figures('category');
    await hub.sql.query(`DELETE FROM detections WHERE tenant_id = $1 AND confidence < 0.2`, [team.id]);
    await figures('row deletion');
    await hub.sql.query(`DELETE FROM satellites WHERE id = $1`, [sats[2].id]);
    await figures('satellite deletion');
    visible = ['bird', 'human_voice'];
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: visible }, owner)).status, 200);
    await figures('visibility');
  });
});
