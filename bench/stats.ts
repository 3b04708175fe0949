/**
 * `npm run bench -- stats`: every /stats endpoint at a million detections (issue 19).
 *
 * Seeds the 1,000,000-row team of the detections bench (bench/detections.ts `seed`: 50 satellites,
 * 300 species, the year 2025), marks about 1% of the rows confirmed or rejected with a vote each,
 * sets the team's zone to Europe/Berlin (so days and hours are regrouped, not read as UTC), then
 * measures p50/p99 over HTTP of all eighteen stats paths for a 30-day and a 365-day window.
 * Paths that answer 404 (not built in this branch) are skipped. Targets: p99 < 100 ms at 30 days,
 * < 300 ms at 365 days (a calendar year, and a rolling year marked 365 d*). Prints a table and the slowest three.
 *
 * PostgreSQL only: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
 * BENCH_ROWS (default 1,000,000), BENCH_ITERATIONS (default 100 per endpoint and window) after
 * BENCH_WARMUP runs (default 20); BENCH_ONLY=text runs only the paths containing it; BENCH_KEEP=1
 * keeps the seeded schema (its name is printed) for EXPLAIN ANALYZE.
 */
import { adminAuth, api, benchSchema, startHubProcess, type HubProcess } from './hub-process.ts';
import { col, shape, type Db } from '../src/infra/db/index.ts';
import { pct, seed, timedGet } from './detections.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 100);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const ZONE = 'Europe/Berlin';
const Id = shape({ id: col.text() });
const TableSize = shape({ t: col.text(), n: col.int() });

export async function run(): Promise<void> {
  process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
  const url = process.env.DATABASE_URL;
  // BENCH_REUSE=<schema>: measure again on a schema an earlier BENCH_KEEP run seeded.
  const bench = await benchSchema(url, 'bench_stats');
  const { schema } = bench;
  const reuse = bench.reused;
  const hub = await startHubProcess({ DATABASE_SCHEMA: schema });
  const db = createPostgresDb({ url, schema, poolSize: 2 });
  try {
    await bench.adoptAdmin(db, hub);
    const auth = await adminAuth(hub);
    const team = reuse
      ? await db.one(Id, `SELECT id FROM tenants WHERE name = 'Bench team'`)
      : await api(`${hub.url}/api/auth/create-tenant`, { method: 'POST', headers: auth, body: { name: 'Bench team' } });
    if (!reuse) await seedYear(hub, db, auth, team.id);
    const sats = await db.query(Id, 'SELECT id FROM satellites WHERE tenant_id = $1 ORDER BY name LIMIT 3', [team.id]);
    const code = benchSpecies()[0].code;
    const paths: Array<[string, Record<string, string>]> = [
      ['dashboard', {}],
      ['trends', {}],
      ['top-species', {}],
      ['activity', {}],
      ['verification', {}],
      ['leaderboard', {}],
      ['species', {}],
      [`species/${code}`, {}],
      ['compare', { satelliteIds: sats.map((s) => s.id).join(',') }],
      ['weather-correlation', {}],
      ['migration', {}],
      ['biodiversity', {}],
      ['expected-species', { satelliteId: sats[0].id }],
      ['activity-heatmap', {}],
      ['satellite-activity', {}],
      ['map', {}],
      ['map/detections', {}],
      ['species-accuracy', {}],
    ];
    const windows: Array<[string, number, Record<string, string>]> = [
      ['30 d', 100, { from: '2025-12-02', to: '2026-01-01' }],
      ['365 d', 300, { from: '2025-01-01', to: '2026-01-01' }],
      // A rolling year (not a calendar year): the year rows plus a month at each end (pieces.ts).
      ['365 d*', 300, { from: '2024-12-15', to: '2025-12-15' }],
    ];
    const only = process.env.BENCH_ONLY;
    const results: Array<{ path: string; window: string; p50: number; p99: number; target: number }> = [];
    const skipped: string[] = [];
    console.log(`\nGET /api/stats/… as the hub admin, team zone ${ZONE}; ${ITERATIONS} runs each after ${WARMUP} warm-up runs; PostgreSQL`);
    console.log(`${'path'.padEnd(28)} ${'window'.padStart(6)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'target'.padStart(7)}  ok`);
    for (const [path, extra] of paths) {
      if (only && !path.includes(only)) continue;
      for (const [label, target, w] of windows) {
        const qs = new URLSearchParams({ tenantId: team.id, ...w, ...extra }).toString();
        const first = await timedGet(`${hub.url}/api/stats/${path}?${qs}`, auth);
        if (first.status === 404 && !path.startsWith('species/')) {
          skipped.push(path);
          break;
        }
        if (first.status !== 200) throw new Error(`${path} ${label}: ${first.status} ${first.body.slice(0, 300)}`);
        const ms: number[] = [];
        for (let i = 0; i < WARMUP + ITERATIONS; i++) {
          const t = performance.now();
          const { status, body } = await timedGet(`${hub.url}/api/stats/${path}?${qs}`, auth);
          if (status !== 200) throw new Error(`${path} ${label}: ${status} ${body.slice(0, 300)}`);
          if (i >= WARMUP) ms.push(performance.now() - t);
        }
        const r = { path, window: label, p50: pct(ms, 50), p99: pct(ms, 99), target };
        results.push(r);
        console.log(
          `${path.padEnd(28)} ${label.padStart(6)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${`<${target}`.padStart(7)}  ${r.p99 < target ? 'yes' : 'NO'}`,
        );
      }
    }
    if (skipped.length) console.log(`\nskipped (404 in this build): ${skipped.join(', ')}`);
    const slowest = [...results].sort((a, b) => b.p99 - a.p99).slice(0, 3);
    console.log(
      `\nslowest three by p99:\n${slowest.map((r) => `  ${r.path} (${r.window}): p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`).join('\n')}`,
    );
    const misses = results.filter((r) => r.p99 >= r.target);
    console.log(
      misses.length
        ? `\nMissed targets:\n${misses.map((r) => `  ${r.path} (${r.window}): p99 ${r.p99.toFixed(1)} ms ≥ ${r.target} ms`).join('\n')}`
        : '\nEvery endpoint met p99 < 100 ms at 30 days and < 300 ms at 365 days.',
    );
  } finally {
    await db.close();
    await hub.stop();
    // BENCH_KEEP=1 leaves the seeded schema for EXPLAIN ANALYZE of one query.
    await bench.finish();
  }
}

/** The detections bench's million rows in the team, 1% of them voted on, statistics fresh. */
async function seedYear(hub: HubProcess, db: Db, auth: Record<string, string>, tenantId: string) {
  await api(`${hub.url}/api/settings/tenant?tenantId=${tenantId}`, { method: 'PUT', headers: auth, body: { time_zone: ZONE } });
  const species = speciesCatalog()
    .all()
    .filter((s) => s.category === 'bird')
    .slice(0, 300)
    .map((s) => ({ code: s.code, sci: s.scientificName, common: s.commonName, category: s.category }));
  await seed(db, tenantId, species);
  const t0 = performance.now();
  const userId = (await db.one(Id, 'SELECT id FROM users WHERE lower(email) = lower($1)', [hub.adminEmail])).id;
  await db.run(
    `WITH v AS (
         UPDATE detections SET verification_status = CASE WHEN random() < 0.8 THEN 'confirmed' ELSE 'rejected' END
         WHERE tenant_id = $1 AND random() < 0.01 RETURNING id, verification_status)
       INSERT INTO detection_votes (detection_id, user_id, tenant_id, vote, decisive, created_at, updated_at)
       SELECT id, $2, $1, CASE verification_status WHEN 'confirmed' THEN 'confirm' ELSE 'reject' END, true, now(), now() FROM v`,
    [tenantId, userId],
  );
  await db.run('VACUUM (ANALYZE) detections');
  await db.run('VACUUM (ANALYZE) detection_hour_counts');
  await db.run('VACUUM (ANALYZE) detection_period_counts');
  await db.run('ANALYZE detection_votes');
  const sizes = await db.query(
    TableSize,
    `SELECT 'detection_hour_counts' AS t, count(*)::int AS n FROM detection_hour_counts
       UNION ALL SELECT 'detection_period_counts', count(*)::int FROM detection_period_counts`,
  );
  console.log(
    `votes and statuses in ${((performance.now() - t0) / 1000).toFixed(1)} s; aggregate rows: ${sizes.map((s) => `${s.t} ${s.n.toLocaleString('en')}`).join(', ')}`,
  );
}

/** The 300 bird species the seed spreads its rows over. */
function benchSpecies() {
  return speciesCatalog()
    .all()
    .filter((s) => s.category === 'bird')
    .slice(0, 300)
    .map((s) => ({ code: s.code, sci: s.scientificName, common: s.commonName, category: s.category }));
}
