/**
 * `npm run bench -- exports` (issue 18): exporting a 1,000,000-row team.
 *
 * Seeds one team like the detections bench (one year, 50 satellites, 300 species; PostgreSQL,
 * DATABASE_URL, default the local `test` database), starts a hub in its own process and streams
 * GET /export/detections (CSV and JSON) and /export/checklist over HTTP, each once: rows/s, time
 * to first byte, bytes, and the hub's peak RSS growth over its RSS before the export (sampled
 * from /proc every 20 ms). Targets on PostgreSQL: ≥ 50,000 rows/s, first byte < 500 ms, RSS
 * growth < 64 MB. BENCH_ROWS overrides the row count.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import pg from 'pg';
import { adminAuth, api, startHubProcess } from './hub-process.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { seed } from './detections.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

/** Streams one export, counting bytes and lines; the hub's RSS is sampled meanwhile. */
function measure(url: string, headers: Record<string, string>, pid: number) {
  return new Promise<{ ttfbMs: number; totalMs: number; bytes: number; lines: number; rssGrowthMb: number; status: number }>(
    (resolve, reject) => {
      const before = rssMb(pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
      const t0 = performance.now();
      let ttfb = 0;
      let bytes = 0;
      let lines = 0;
      http
        .get(url, { headers }, (res) => {
          res.on('data', (c: Buffer) => {
            if (!ttfb) ttfb = performance.now() - t0;
            bytes += c.length;
            for (let i = 0; i < c.length; i++) if (c[i] === 10) lines++;
          });
          res.on('end', () => {
            clearInterval(sampler);
            peak = Math.max(peak, rssMb(pid));
            resolve({
              ttfbMs: ttfb,
              totalMs: performance.now() - t0,
              bytes,
              lines,
              rssGrowthMb: peak - before,
              status: res.statusCode ?? 0,
            });
          });
          res.on('error', reject);
        })
        .on('error', reject);
    },
  );
}

export async function run(): Promise<void> {
  process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
  process.env.BENCH_ROWS = String(ROWS);
  const url = process.env.DATABASE_URL;
  const schema = `bench_exp_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const hub = await startHubProcess({ DATABASE_SCHEMA: schema });
  const db = createPostgresDb({ url, schema, poolSize: 2 });
  try {
    const auth = await adminAuth(hub);
    const team = await api(`${hub.url}/api/auth/create-tenant`, { headers: auth, body: { name: 'Export bench' } });
    const species = speciesCatalog()
      .all()
      .filter((s) => s.category === 'bird')
      .slice(0, 300)
      .map((s) => ({ code: s.code, sci: s.scientificName, common: s.commonName, category: s.category }));
    await seed(db, team.id, species);
    console.log(`\nexports bench — PostgreSQL, ${ROWS.toLocaleString('en')} rows, hub RSS ${rssMb(hub.pid).toFixed(0)} MB before`);
    for (const [name, path] of [
      ['CSV', `/api/export/detections?tenantId=${team.id}&format=csv`],
      ['JSON', `/api/export/detections?tenantId=${team.id}&format=json`],
      ['eBird checklist', `/api/export/checklist?tenantId=${team.id}`],
    ] as const) {
      const r = await measure(`${hub.url}${path}`, auth, hub.pid);
      const rate = ROWS / (r.totalMs / 1000);
      console.log(
        `${name.padEnd(16)} status ${r.status}  ${(r.totalMs / 1000).toFixed(1)} s  ${Math.round(rate).toLocaleString('en')} rows/s  first byte ${r.ttfbMs.toFixed(0)} ms  ` +
          `${(r.bytes / 1e6).toFixed(1)} MB, ${r.lines.toLocaleString('en')} lines  RSS growth ${r.rssGrowthMb.toFixed(1)} MB`,
      );
    }
    console.log(
      'targets: ≥ 50,000 rows/s, first byte < 500 ms, RSS growth < 64 MB (eBird: rows/s over the detections read; the file has one line per species per satellite-day)',
    );
  } finally {
    await db.close();
    await hub.stop();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  }
}
