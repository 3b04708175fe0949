/**
 * `npm run bench -- inference`: chunks/s through the inference worker's whole path with the
 * built-in model: stored WAV → decode → model → detection rows (the worker's handler itself,
 * `createInferenceHandler`, with its idempotence check, first-of-day/season reads, insert and
 * aggregation in one transaction). First one worker, then one worker thread per core, each
 * with its own ONNX Runtime session on one intra-op thread (as the hub's workers run), its own
 * team and its own database connection. Reports the share of each worker's time spent outside
 * the model (decode, storage, SQL, bookkeeping). A reference line gives decode → model alone.
 *
 * Rows go to PostgreSQL when DATABASE_URL is set (a schema made and dropped here), else to an
 * in-memory PGlite per worker. MQTT and WebSocket fan-out are stubbed (no broker here).
 * BENCH_SECONDS (default 10) is the measuring time of each phase; BENCH_WORKERS overrides the
 * worker count.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadBuiltinModel } from '../src/infra/classifier/onnx.ts';
import { createInferenceHandler } from '../src/inference/worker.ts';
import { createSettingsService } from '../src/modules/settings/service.ts';
import { createDetectionRecorder } from '../src/modules/detections/recorder.ts';
import { soundscapeChunk } from '../src/satellite/soundscape.ts';
import { decodeWav, makeWav } from '../src/protocol/wav.ts';
import { systemClock } from '../src/core/clock.ts';
import { createFileStorage } from '../src/infra/storage/files.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { createPgliteDb } from '../src/infra/db/pglite.ts';
import { migrate } from '../src/infra/db/migrate.ts';
import { col, shape, type Db } from '../src/infra/db/index.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const DISTINCT_CHUNKS = 100;
const Id = shape({ id: col.text() });
/** Chunk rows per worker: more than one worker can classify in a phase. */
const CHUNKS_PER_WORKER = Math.max(2000, SECONDS * 800);

interface Figures {
  chunks: number;
  wallMs: number;
  modelMs: number;
  detections: number;
}

interface Setup {
  objectsDir: string;
  databaseUrl: string | null;
  schema: string | null;
}

/** decode → model only (the reference line). */
async function measureModelOnly(wavs: Buffer[], seconds: number): Promise<Figures & { decodeMs: number }> {
  const model = await loadBuiltinModel({ threads: 1 });
  for (let i = 0; i < 10; i++) await model.classify(decodeWav(wavs[i % wavs.length]).samples);
  const f = { chunks: 0, wallMs: 0, modelMs: 0, decodeMs: 0, detections: 0 };
  const start = performance.now();
  while (performance.now() < start + seconds * 1000) {
    const t0 = performance.now();
    const { samples } = decodeWav(wavs[f.chunks % wavs.length], { expect48kMono: true });
    const t1 = performance.now();
    f.detections += (await model.classify(samples)).length;
    f.decodeMs += t1 - t0;
    f.modelMs += performance.now() - t1;
    f.chunks++;
  }
  f.wallMs = performance.now() - start;
  await model.close();
  return f;
}

/** One worker: its own team, satellite and chunk rows, then the handler over them for `seconds`. */
async function measureWorker(setup: Setup, seconds: number): Promise<Figures> {
  let db: Db;
  if (setup.databaseUrl) {
    db = createPostgresDb({ url: setup.databaseUrl, schema: setup.schema!, poolSize: 2 });
  } else {
    db = (await createPgliteDb({ dataDir: null })).db;
    await migrate(db);
  }
  const tenantId = crypto.randomUUID();
  const satelliteId = crypto.randomUUID();
  const now = new Date();
  await db.run(`INSERT INTO tenants (id, name, slug, created_at) VALUES ($1, 'Bench', $2, $3)`, [tenantId, `bench-${tenantId}`, now]);
  await db.run(`INSERT INTO satellites (id, tenant_id, name, created_at, updated_at) VALUES ($1, $2, 'Bench sat', $3, $3)`, [
    satelliteId,
    tenantId,
    now,
  ]);
  const chunkIds = (
    await db.query(
      Id,
      `INSERT INTO chunks (id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, received_at)
       SELECT gen_random_uuid(), $1, $2, $3::timestamptz + g * interval '3 seconds', 3000, 48000, 'bench/' || (g % ${DISTINCT_CHUNKS}) || '.wav', 288044, now()
       FROM generate_series(1, ${CHUNKS_PER_WORKER}) AS g ORDER BY g RETURNING id`,
      [tenantId, satelliteId, now],
    )
  ).map((r) => r.id);

  const model = await loadBuiltinModel({ threads: 1 });
  const f: Figures = { chunks: 0, wallMs: 0, modelMs: 0, detections: 0 };
  const timed = {
    classify: async (...args: Parameters<typeof model.classify>) => {
      const t = performance.now();
      try {
        return await model.classify(...args);
      } finally {
        f.modelMs += performance.now() - t;
      }
    },
  };
  // The team's settings as the hub's worker reads them: one read per chunk (model, sensitivity,
  // aggregation rule, visible categories).
  const settings = createSettingsService({
    db,
    clock: systemClock,
    audit: null as never,
    bus: null as never,
    kv: null as never,
    satellites: null as never,
  });
  const handle = createInferenceHandler({
    clock: systemClock,
    detections: createDetectionRecorder({ db, clock: systemClock, aggregationRule: settings.aggregationRule }),
    storage: createFileStorage(setup.objectsDir),
    queue: { process: async () => {}, enqueue: async () => {} },
    broker: { publish: async () => {} },
    live: { sendToTeam: async () => {} },
    log: { warn: () => {} },
    settings,
    loadClassifier: async () => timed,
  });
  const job = (chunkId: string) => ({ id: chunkId, attempt: 1, maxAttempts: 1, data: { chunkId, tenantId, satelliteId } });
  // Warm-up: ONNX Runtime's buffers, the catalog, prepared statements.
  for (let i = 0; i < 20; i++) await handle(job(chunkIds[i]));
  f.modelMs = 0;
  let next = 20;
  const start = performance.now();
  while (performance.now() < start + seconds * 1000 && next < chunkIds.length) {
    f.detections += (await handle(job(chunkIds[next++]))).stored.length;
    f.chunks++;
  }
  f.wallMs = performance.now() - start;
  await model.close();
  await db.close();
  return f;
}

function report(title: string, f: Figures, threads: number, extra = ''): void {
  const rate = (1000 * f.chunks) / f.wallMs;
  const outside = 1 - f.modelMs / (f.wallMs * threads);
  console.log(
    `${title.padEnd(34)} ${rate.toFixed(0).padStart(6)} chunks/s (${(rate * 3).toFixed(0)}× real time) · ` +
      `${((f.wallMs * threads) / f.chunks).toFixed(3)} ms per chunk per worker, model ${(f.modelMs / f.chunks).toFixed(3)} ms${extra} · ` +
      `${(100 * outside).toFixed(1)} % of worker time outside the model · ${f.chunks} chunks, ${f.detections} detections`,
  );
}

function inThreads<T>(n: number, data: unknown): Promise<T[]> {
  return Promise.all(
    Array.from({ length: n }, () => {
      // Node 20 does not apply tsx's hooks to a worker's .ts entry: register them, then import this file.
      const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
      const worker = new Worker(boot, { eval: true, workerData: data });
      return new Promise<T>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    }),
  );
}

const sum = (rs: Figures[]): Figures =>
  rs.reduce((a, r) => ({
    chunks: a.chunks + r.chunks,
    wallMs: Math.max(a.wallMs, r.wallMs),
    modelMs: a.modelMs + r.modelMs,
    detections: a.detections + r.detections,
  }));

export async function run(): Promise<void> {
  const wavs = Array.from({ length: DISTINCT_CHUNKS }, (_, i) => makeWav(soundscapeChunk(2024, i).samples));
  const objectsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-inference-'));
  const storage = createFileStorage(objectsDir);
  for (const [i, wav] of wavs.entries()) await storage.put(`bench/${i}.wav`, wav);
  const databaseUrl = process.env.DATABASE_URL ?? null;
  let schema: string | null = null;
  if (databaseUrl) {
    schema = `bench_inf_${crypto.randomBytes(4).toString('hex')}`;
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
    const db = createPostgresDb({ url: databaseUrl, schema });
    await migrate(db);
    await db.close();
  }
  const setup: Setup = { objectsDir, databaseUrl, schema };
  const workers = Number(process.env.BENCH_WORKERS ?? os.availableParallelism());
  console.log(
    `inference bench: built-in model, ${DISTINCT_CHUNKS} distinct soundscape chunks (288,044-byte WAVs in file storage), ` +
      `rows in ${databaseUrl ? 'PostgreSQL' : 'PGlite (in memory, one per worker)'}, ${SECONDS} s per phase, ${os.availableParallelism()} cores`,
  );
  try {
    const ref = await measureModelOnly(wavs, SECONDS);
    report('decode → model (reference)', ref, 1, `, decode ${(ref.decodeMs / ref.chunks).toFixed(3)} ms`);
    report('WAV → model → rows, 1 worker', (await inThreads<Figures>(1, { setup, seconds: SECONDS }))[0], 1);
    report(`WAV → model → rows, ${workers} workers`, sum(await inThreads<Figures>(workers, { setup, seconds: SECONDS })), workers);
  } finally {
    fs.rmSync(objectsDir, { recursive: true, force: true });
    if (databaseUrl && schema) {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
  }
}

if (!isMainThread && workerData) {
  const data = workerData as { setup: Setup; seconds: number };
  parentPort!.postMessage(await measureWorker(data.setup, data.seconds));
}
