/**
 * `npm run bench -- exports` (issues 18, 34): exporting a 1,000,000-row team, each format beside
 * its floor.
 *
 * Seeds one team like the detections bench (one year, 50 satellites, 300 species; PostgreSQL,
 * DATABASE_URL, default the local `test` database), starts a hub in its own process and streams
 * every format that streams over HTTP, each once: CSV, JSON, the eBird checklist, iNaturalist
 * and the Darwin Core Archive (the PDF report is one page of aggregates over a window, and
 * xeno-canto's archive carries audio and runs as a background job past 300 recordings).
 *
 * The floor, measured just before each format (the machine's load moves within a run): the
 * statement the export's row source runs (exportScanStatement, the first batch's with the whole
 * team as its LIMIT, parameters written in as literals), under PostgreSQL's
 * `COPY (…) TO STDOUT WITH CSV`, read by the hub's driver (pg, with pg-copy-streams) in this
 * process, timed and counted like an export: what reading the rows costs with no JavaScript row
 * at all. Per format: rows/s, its share of the floor's rows/s, time to first byte, bytes, and the
 * hub's growth over its figures before the export: peak RSS (/proc, every 20 ms) and peak V8 heap
 * used and committed (GET /metrics, every 200 ms), and its CPU time per row (/proc/<pid>/stat). Targets: ≥ 60 % of the floor's rows/s, first
 * byte < 500 ms, RSS growth < 64 MB at 1 M rows. BENCH_ROWS overrides the row count;
 * BENCH_FORMATS (comma list of csv,json,ebird,inaturalist,dwca) picks formats; BENCH_KEEP=1 keeps
 * the seeded schema and BENCH_REUSE=<schema> measures on it again (a 1 M seed takes 1.5–9 minutes).
 */
import fs from 'node:fs';
import http from 'node:http';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { adminAuth, api, benchSchema, startHubProcess } from './hub-process.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { col, shape } from '../src/infra/db/index.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { exportScanStatement } from '../src/modules/detections/export-repo.ts';
import { exportListFilter } from '../src/modules/detections/service.ts';
import { defaultVisibility } from '../src/modules/detections/category-sql.ts';
import { exportFilterOf } from '../src/modules/exports/service.ts';
import { seed } from './detections.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

/** The hub's CPU time so far (user + system, ms), from /proc/<pid>/stat (clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

interface Heap {
  used: number;
  total: number;
}

/** The hub's V8 heap (MB) from its own metrics: used, and committed (what it holds of the RSS). */
async function heapMb(url: string, headers: Record<string, string>): Promise<Heap> {
  const text = await (await fetch(`${url}/metrics`, { headers })).text();
  const of = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return { used: of('nodejs_heap_size_used_bytes'), total: of('nodejs_heap_size_total_bytes') };
}

interface Measured {
  ttfbMs: number;
  totalMs: number;
  bytes: number;
  lines: number;
}

/** Counts a byte stream as the bench counts every export: first byte, bytes, line feeds, end. */
function count(stream: NodeJS.ReadableStream, t0: number): Promise<Measured> {
  return new Promise((resolve, reject) => {
    let ttfb = 0;
    let bytes = 0;
    let lines = 0;
    stream.on('data', (c: Buffer) => {
      if (!ttfb) ttfb = performance.now() - t0;
      bytes += c.length;
      for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
    });
    stream.on('end', () => resolve({ ttfbMs: ttfb, totalMs: performance.now() - t0, bytes, lines }));
    stream.on('error', reject);
  });
}

/** Streams one export over HTTP while the hub's RSS and heap are sampled. */
async function measure(hub: { url: string; pid: number }, path: string, headers: Record<string, string>) {
  const before = rssMb(hub.pid);
  const cpuBefore = cpuMs(hub.pid);
  const heapBefore = await heapMb(hub.url, headers);
  let peak = before;
  const heapPeak = { ...heapBefore };
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(hub.pid))), 20);
  let sampling = true;
  const heapSampler = (async () => {
    while (sampling) {
      const h = await heapMb(hub.url, headers);
      heapPeak.used = Math.max(heapPeak.used, h.used);
      heapPeak.total = Math.max(heapPeak.total, h.total);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const t0 = performance.now();
  const { res, r } = await new Promise<{ res: http.IncomingMessage; r: Promise<Measured> }>((resolve, reject) =>
    http.get(`${hub.url}${path}`, { headers }, (res) => resolve({ res, r: count(res, t0) })).on('error', reject),
  );
  const m = await r;
  clearInterval(sampler);
  sampling = false;
  await heapSampler;
  peak = Math.max(peak, rssMb(hub.pid));
  return {
    ...m,
    status: res.statusCode ?? 0,
    contentType: String(res.headers['content-type'] ?? ''),
    rssGrowthMb: peak - before,
    // The sampling requests' own share is a few ms a second.
    hubCpuMs: cpuMs(hub.pid) - cpuBefore,
    heapUsedGrowthMb: heapPeak.used - heapBefore.used,
    heapTotalGrowthMb: heapPeak.total - heapBefore.total,
  };
}

/** The statement with its parameters written in as literals (COPY takes none), as the driver would send them. */
function inlined(sql: string, params: readonly unknown[], client: pg.Client): string {
  const prepare = (v: unknown) => {
    if (v instanceof Date) return v.toISOString();
    if (Array.isArray(v)) return `{${v.map((x) => `"${String(x).replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
    return String(v);
  };
  return sql.replace(/\$(\d+)/g, (_, n: string) => client.escapeLiteral(prepare(params[Number(n) - 1])));
}

/** The floor: the export's own statement under COPY … TO STDOUT WITH CSV, read and counted like an export. */
async function floor(url: string, schema: string, sql: string): Promise<Measured> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    const t0 = performance.now();
    return await count(client.query(copyTo(`COPY (${sql}) TO STDOUT WITH CSV`)), t0);
  } finally {
    await client.end();
  }
}

const FORMATS = [
  ['csv', 'CSV', (t: string) => `/api/export/detections?tenantId=${t}&format=csv`],
  ['json', 'JSON', (t: string) => `/api/export/detections?tenantId=${t}&format=json`],
  ['ebird', 'eBird checklist', (t: string) => `/api/export/checklist?tenantId=${t}`],
  ['inaturalist', 'iNaturalist', (t: string) => `/api/export/observation?tenantId=${t}&format=inaturalist`],
  ['dwca', 'Darwin Core', (t: string) => `/api/export/observation?tenantId=${t}&format=dwca`],
] as const;

const TeamId = shape({ id: col.text() });

const k = (rate: number) => `${(rate / 1000).toFixed(1)}k`;

export async function run(): Promise<void> {
  process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
  process.env.BENCH_ROWS = String(ROWS);
  const url = process.env.DATABASE_URL;
  const picked = process.env.BENCH_FORMATS?.split(',').map((s) => s.trim());
  // BENCH_KEEP=1 keeps the seeded schema, BENCH_REUSE=<schema> measures on it again (bench/hub-process.ts).
  const bench = await benchSchema(url, 'bench_exp');
  const { schema } = bench;
  const hub = await startHubProcess({ DATABASE_SCHEMA: schema, METRICS_ALLOW: 'loopback' });
  const db = createPostgresDb({ url, schema, poolSize: 2 });
  try {
    await bench.adoptAdmin(db, hub);
    const auth = await adminAuth(hub);
    const team = bench.reused
      ? await db.one(TeamId, `SELECT id FROM tenants WHERE name = 'Export bench'`)
      : await api(`${hub.url}/api/auth/create-tenant`, { headers: auth, body: { name: 'Export bench' } });
    const species = speciesCatalog()
      .all()
      .filter((s) => s.category === 'bird')
      .slice(0, 300)
      .map((s) => ({ code: s.code, sci: s.scientificName, common: s.commonName, category: s.category }));
    if (!bench.reused) await seed(db, team.id, species);
    // The statement the hub's row source runs first (a fresh team shows the default categories), for the whole team.
    const q = exportScanStatement(exportListFilter(exportFilterOf(team.id, {}), defaultVisibility()), null, ROWS);
    const quoter = new pg.Client({ connectionString: url });
    const sql = inlined(q.sql, q.params, quoter);
    console.log(
      `\nexports bench — PostgreSQL, ${ROWS.toLocaleString('en')} rows, hub RSS ${rssMb(hub.pid).toFixed(0)} MB before; load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
    );
    console.log(
      'floor: COPY (the export row source’s statement) TO STDOUT WITH CSV, read with pg + pg-copy-streams, measured before each format',
    );
    for (const [key, name, path] of FORMATS) {
      if (picked && !picked.includes(key)) continue;
      const f = await floor(url, schema, sql);
      const floorRate = f.lines / (f.totalMs / 1000);
      const r = await measure(hub, path(team.id), auth);
      const rate = ROWS / (r.totalMs / 1000);
      console.log(
        `${name.padEnd(16)} ${r.status} ${(r.totalMs / 1000).toFixed(1)} s  ${k(rate)} rows/s  ${((100 * rate) / floorRate).toFixed(0)} % of floor  ` +
          `first byte ${r.ttfbMs.toFixed(0)} ms  ${(r.bytes / 1e6).toFixed(1)} MB  RSS +${r.rssGrowthMb.toFixed(1)} MB  ` +
          `heap used +${r.heapUsedGrowthMb.toFixed(1)} MB, committed +${r.heapTotalGrowthMb.toFixed(1)} MB  hub CPU ${((1000 * r.hubCpuMs) / ROWS).toFixed(1)} µs/row  (${r.contentType.split(';')[0]})\n` +
          `${'  floor'.padEnd(16)}     ${(f.totalMs / 1000).toFixed(1)} s  ${k(floorRate)} rows/s  first byte ${f.ttfbMs.toFixed(0)} ms  ${(f.bytes / 1e6).toFixed(1)} MB, ${f.lines.toLocaleString('en')} rows`,
      );
    }
    console.log(
      'targets: ≥ 60 % of the floor’s rows/s, first byte < 500 ms, RSS growth < 64 MB (eBird: rows/s over the detections read; the file has one line per species per satellite-day)',
    );
  } finally {
    await db.close();
    await hub.stop();
    await bench.finish();
  }
}
