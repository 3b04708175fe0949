/**
 * `total` of GET /detections comes from detection_day_counts (migration 0011) for whole UTC days
 * plus row counts at the window's edges (docs/decisions.md "Detection counts"). These tests hold
 * it to an exact count(*) over detections across filters, windows and every way rows change:
 * inserts, promotion, stitching, votes, the tentative sweep, a satellite's deletion and a team's.
 * Day rows are per category (migration 0012): rows in categories the team hides (human voices
 * by default) are counted in the table but not in `total`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { newId } from '../src/core/crypto.ts';

const DAY = 86_400_000;
/** Scientific and common names of the rows' species (a name search tests either). */
const NAMES: Record<string, [string, string]> = {
  eurrob1: ['Erithacus rubecula', 'European Robin'],
  grtit1: ['Parus major', 'Great Tit'],
  human: ['Homo sapiens', 'Human'],
};
const HOUR = 3_600_000;

describe('detection totals from the day counts', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  let other: TestTeam;
  let satA: { id: string };
  let satB: { id: string };
  let satOther: { id: string };
  const t0 = Date.parse('2026-03-01T00:00:00Z');

  /** Inserts detections as SQL (volume and exact control of time, tentative and call). */
  async function insert(
    rows: Array<{
      sat: { id: string };
      team?: TestTeam;
      code: string;
      at: number;
      tentative?: boolean;
      callId?: string | null;
      category?: string;
      confidence?: number;
    }>,
  ) {
    const ids = rows.map(() => newId());
    await hub.sql.query(
      `INSERT INTO detections (id, tenant_id, satellite_id, chunk_id, species_code, scientific_name, common_name, category, confidence,
         detected_at, start_ms, end_ms, model_id, tentative, promoted, call_id, created_at)
       SELECT r.id, r.tenant_id, r.satellite_id, gen_random_uuid(), r.code, r.sci, r.common, r.category, r.confidence, r.at, 0, 3000, 'builtin',
         r.tentative, NOT r.tentative, r.call_id, r.at
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, tenant_id uuid, satellite_id uuid, code text, at timestamptz, tentative boolean, call_id uuid, category text, confidence real, sci text, common text)`,
      [
        JSON.stringify(
          rows.map((r, i) => ({
            id: ids[i],
            tenant_id: (r.team ?? team).id,
            satellite_id: r.sat.id,
            code: r.code,
            at: new Date(r.at).toISOString(),
            tentative: r.tentative ?? false,
            call_id: r.callId ?? null,
            category: r.category ?? 'bird',
            confidence: r.confidence ?? 0.5,
            sci: NAMES[r.code]?.[0] ?? r.code,
            common: NAMES[r.code]?.[1] ?? r.code,
          })),
        ),
      ],
    );
    return ids;
  }

  /** The exact count the list's filter means, straight from detections (in the categories shown by default). */
  async function exact(q: {
    satelliteId?: string;
    species?: string;
    start?: number;
    end?: number;
    includeTentative?: boolean;
    tenantId?: string;
    minConfidence?: number;
    speciesSearch?: string;
  }) {
    const r = await hub.sql.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM detections WHERE tenant_id = $1 AND call_id IS NULL
         AND ($2::uuid IS NULL OR satellite_id = $2) AND ($3::text IS NULL OR lower(species_code) = lower($3))
         AND ($4::timestamptz IS NULL OR detected_at >= $4) AND ($5::timestamptz IS NULL OR detected_at < $5)
         AND ($6 OR NOT tentative) AND category NOT IN ('anthropogenic', 'human_voice')
         AND ($7::real IS NULL OR confidence >= $7::real)
         AND ($8::text IS NULL OR common_name ILIKE '%' || $8 || '%' OR scientific_name ILIKE '%' || $8 || '%')`,
      [
        q.tenantId ?? team.id,
        q.satelliteId ?? null,
        q.species ?? null,
        q.start ? new Date(q.start) : null,
        q.end ? new Date(q.end) : null,
        q.includeTentative ?? false,
        q.minConfidence ?? null,
        q.speciesSearch ?? null,
      ],
    );
    return r.n;
  }

  async function total(q: {
    satelliteId?: string;
    species?: string;
    start?: number;
    end?: number;
    includeTentative?: boolean;
    minConfidence?: number;
    speciesSearch?: string;
  }) {
    const qs = new URLSearchParams({ tenantId: team.id, limit: '1' });
    if (q.satelliteId) qs.set('satelliteId', q.satelliteId);
    if (q.species) qs.set('species', q.species);
    if (q.start !== undefined) qs.set('start', new Date(q.start).toISOString());
    if (q.end !== undefined) qs.set('end', new Date(q.end).toISOString());
    if (q.includeTentative) qs.set('includeTentative', 'true');
    if (q.minConfidence !== undefined) qs.set('minConfidence', String(q.minConfidence));
    if (q.speciesSearch) qs.set('speciesSearch', q.speciesSearch);
    const res = await api.get(`/detections?${qs}`, owner);
    assert.equal(res.status, 200, res.text);
    return res.body.total as number;
  }

  /** Every filter shape against the exact count; the day table against a GROUP BY of detections. */
  async function assertExact(label: string) {
    const windows: Array<[number | undefined, number | undefined]> = [
      [undefined, undefined],
      [t0, t0 + 3 * DAY], // day-aligned both ends
      [t0 + 5 * HOUR, t0 + 2 * DAY + 7 * HOUR], // partial days at both ends
      [t0 + 5 * HOUR, undefined],
      [undefined, t0 + DAY + 1],
      [t0 + 2 * HOUR, t0 + 9 * HOUR], // inside one day
      [t0 + DAY, t0 + DAY], // empty
      [t0 - 10 * DAY, t0 - 9 * DAY], // nothing there
    ];
    for (const [start, end] of windows) {
      for (const q of [
        {},
        { satelliteId: satA.id },
        { species: 'EURROB1' },
        { species: 'grtit1', satelliteId: satB.id },
        { includeTentative: true },
        { includeTentative: true, species: 'eurrob1' },
        { species: 'human' },
        { includeTentative: true, satelliteId: satB.id },
        // Confidence steps (0042): on the grid, between steps, both ends, with tentative rows, and
        // beside a satellite (not from the day counts: every row counted).
        { minConfidence: 0.9 },
        { minConfidence: 0.87 },
        { minConfidence: 0.86, includeTentative: true },
        { minConfidence: 0 },
        { minConfidence: 1 },
        { minConfidence: 0.3, satelliteId: satA.id },
        // Name pairs (0042): the common name or the scientific one, any case; beside a species, row by row.
        { speciesSearch: 'rob' },
        { speciesSearch: 'Parus', includeTentative: true },
        { speciesSearch: 'TIT' },
        { speciesSearch: 'nothing-like-it' },
        { speciesSearch: 'rob', species: 'eurrob1' },
      ]) {
        const query = { ...q, start, end };
        assert.equal(await total(query), await exact(query), `${label}: ${JSON.stringify(query)}`);
      }
    }
    const drift = await hub.sql.query(
      `WITH r AS (SELECT tenant_id, satellite_id::text AS sat, lower(species_code) AS code, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
                    (SELECT count(*) FROM unnest('{0,0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,1}'::real[]) t
                     WHERE t <= confidence)::text AS step, json_build_array(common_name, scientific_name)::jsonb::text AS names,
                    (NOT tentative)::int AS listed, tentative::int AS tentative FROM detections WHERE call_id IS NULL),
       d AS (SELECT tenant_id, 'all' AS dim, '' AS key, category, day, sum(listed)::int AS listed, sum(tentative)::int AS tentative FROM r GROUP BY 1, 2, 3, 4, 5
             UNION ALL SELECT tenant_id, 'satellite', sat, category, day, sum(listed)::int, sum(tentative)::int FROM r GROUP BY 1, 2, 3, 4, 5
             UNION ALL SELECT tenant_id, 'species', code, category, day, sum(listed)::int, sum(tentative)::int FROM r GROUP BY 1, 2, 3, 4, 5
             UNION ALL SELECT tenant_id, 'confidence', step, category, day, sum(listed)::int, sum(tentative)::int FROM r GROUP BY 1, 2, 3, 4, 5
             UNION ALL SELECT tenant_id, 'name', names, category, day, sum(listed)::int, sum(tentative)::int FROM r GROUP BY 1, 2, 3, 4, 5)
       SELECT * FROM d FULL JOIN (SELECT * FROM detection_day_counts WHERE listed <> 0 OR tentative <> 0) c USING (tenant_id, dim, key, category, day)
       WHERE d.listed IS DISTINCT FROM c.listed OR d.tentative IS DISTINCT FROM c.tentative`,
    );
    assert.deepEqual(drift, [], `${label}: detection_day_counts equals GROUP BYs over detections`);
  }

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    other = await f.team(await f.user());
    satA = await makeSatellite(hub, team, null, 'A');
    satB = await makeSatellite(hub, team, null, 'B');
    satOther = await makeSatellite(hub, other, null, 'Other');
    // Four days of robins and tits on two satellites, some tentative, at hours that straddle the edges.
    const rows = [];
    // Confidences on and between the day counts' steps (0.85, 0.9, 1 and 0.86, 0.87, 0.93), and low ones.
    const confidences = [0.5, 0.85, 0.87, 0.9, 0.93, 1, 0.05, 0.86, 0.3, 0.899];
    let c = 0;
    for (let day = 0; day < 4; day++) {
      for (const h of [0, 1, 4, 6, 8, 12, 23]) {
        rows.push({ sat: satA, code: 'eurrob1', at: t0 + day * DAY + h * HOUR, confidence: confidences[c++ % confidences.length] });
        rows.push({
          sat: satB,
          code: 'grtit1',
          at: t0 + day * DAY + h * HOUR + 60_000,
          tentative: h % 4 === 0,
          confidence: confidences[c++ % confidences.length],
        });
      }
    }
    // Human voices on both satellites every day (one tentative): hidden by default, so never in `total`.
    for (let day = 0; day < 4; day++) {
      rows.push({ sat: satA, code: 'human', at: t0 + day * DAY + 5 * HOUR, category: 'human_voice' });
      rows.push({ sat: satB, code: 'human', at: t0 + day * DAY + 9 * HOUR, category: 'human_voice', tentative: day === 1 });
    }
    await insert(rows);
    await insert([{ sat: satOther, team: other, code: 'eurrob1', at: t0 + HOUR }]);
  });
  after(() => hub.close());

  test('the migration counts rows that existed before it and every row inserted since', async () => {
    const rows = await hub.sql.one<{ n: number }>(
      "SELECT sum(listed + tentative)::int AS n FROM detection_day_counts WHERE tenant_id = $1 AND dim = 'all'",
      [team.id],
    );
    assert.equal(rows.n, 64, 'every inserted row is counted by the trigger');
    const hidden = await hub.sql.one<{ n: number }>(
      "SELECT sum(listed + tentative)::int AS n FROM detection_day_counts WHERE tenant_id = $1 AND dim = 'all' AND category = 'human_voice'",
      [team.id],
    );
    assert.equal(hidden.n, 8, 'human voices have day rows of their own category');
    await assertExact('after inserts');
  });

  test('promotion, stitching and votes keep the totals exact', async () => {
    // Promote satellite B's tentative tits of day 1.
    await hub.sql.query(
      `UPDATE detections SET tentative = false, promoted = true WHERE satellite_id = $1 AND tentative AND detected_at >= $2 AND detected_at < $3`,
      [satB.id, new Date(t0 + DAY), new Date(t0 + 2 * DAY)],
    );
    await assertExact('after promotion');
    // Stitch two robins into the call of the first robin of day 2 (continuations leave the list).
    const [head, ...rest] = (
      await hub.sql.query<{ id: string }>(
        'SELECT id FROM detections WHERE satellite_id = $1 AND detected_at >= $2 ORDER BY detected_at LIMIT 3',
        [satA.id, new Date(t0 + 2 * DAY)],
      )
    ).map((r) => r.id);
    await hub.sql.query('UPDATE detections SET call_id = $1 WHERE id = ANY($2::uuid[])', [head, rest]);
    await assertExact('after stitching');
    // A vote changes nothing that is counted.
    const before = await hub.sql.query('SELECT * FROM detection_day_counts ORDER BY 1, 2, 3, 4, 5');
    await hub.sql.query("UPDATE detections SET verification_status = 'confirmed' WHERE tenant_id = $1", [team.id]);
    assert.deepEqual(await hub.sql.query('SELECT * FROM detection_day_counts ORDER BY 1, 2, 3, 4, 5'), before);
  });

  test('deleting rows, a satellite and a team keeps the totals exact', async () => {
    await hub.sql.query('DELETE FROM detections WHERE tenant_id = $1 AND tentative', [team.id]);
    await assertExact('after the tentative rows went');
    const res = await api.del(`/satellites/${satB.id}`, owner, { confirmName: 'B' });
    assert.equal(res.status, 204, res.text);
    await assertExact('after satellite B was deleted');
    assert.equal(await total({ satelliteId: satB.id }), 0);

    await hub.sql.query('DELETE FROM tenants WHERE id = $1', [other.id]);
    const left = await hub.sql.query('SELECT 1 FROM detection_day_counts WHERE tenant_id = $1', [other.id]);
    assert.deepEqual(left, [], "the team's counts go with it");
    await assertExact('after another team was deleted');
  });
});
