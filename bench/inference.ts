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
 * worker count. `npm run bench -- inference-birdnet` (inference-birdnet.ts) runs the same phases
 * with a model of BirdNET's size, plus ONNX Runtime alone at batch 1/4/8.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { performance as nodePerformance } from 'node:perf_hooks';
import path from 'node:path';
import pg from 'pg';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadBuiltinModel, loadModel, type Model } from '../src/infra/classifier/onnx.ts';
import { createInferenceHandler, DEFAULT_JOBS_IN_FLIGHT } from '../src/inference/worker.ts';
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
const Chunk = shape({ id: col.text(), storageKey: col.text() });
/** Chunk rows per worker: more than one worker can classify in a phase. */
const CHUNKS_PER_WORKER = Math.max(2000, SECONDS * 800);

export interface Figures {
  chunks: number;
  wallMs: number;
  modelMs: number;
  detections: number;
  /** The handler's measured run: its thread's busy time (event loop) and the CPU of its whole process, in ms. */
  mainThreadMs?: number;
  processCpuMs?: number;
  /** Busy time of the whole machine meanwhile (all cores, Linux's /proc/stat), the database server's included. */
  machineBusyMs?: number;
  /** Time per part of the handler outside the model (ms, summed over chunks): the profile. */
  parts?: Record<string, number>;
}

export interface Setup {
  objectsDir: string;
  databaseUrl: string | null;
  schema: string | null;
  /** Another model than the built-in one (an ONNX file and its labels). */
  model?: { path: string; labels: string } | null;
}

/** How the handler runs: jobs side by side, and the model on a thread of its own (as the hub's worker) or not. */
export interface RunAs {
  inFlight?: number;
  offThread?: boolean;
  /** Another model file than setup.model's (the batch-capable one). */
  modelPath?: string;
  maxBatch?: number;
}

const loadBenchModel = (setup: Pick<Setup, 'model'>, as: RunAs = {}): Promise<Model> =>
  setup.model
    ? loadModel({
        model: as.modelPath ?? setup.model.path,
        labels: setup.model.labels,
        threads: 1,
        offThread: as.offThread,
        maxBatch: as.maxBatch,
        name: path.basename(as.modelPath ?? setup.model.path),
      })
    : loadBuiltinModel({ threads: 1, offThread: as.offThread });

/** decode → model only (the reference line), through the runner as the worker calls it (analyze). */
export async function measureModelOnly(
  wavs: Buffer[],
  seconds: number,
  setup: Pick<Setup, 'model'> = {},
): Promise<Figures & { decodeMs: number }> {
  const model = await loadBenchModel(setup);
  for (let i = 0; i < 10; i++) await model.analyze(decodeWav(wavs[i % wavs.length]).samples);
  const f = { chunks: 0, wallMs: 0, modelMs: 0, decodeMs: 0, detections: 0 };
  const start = performance.now();
  while (performance.now() < start + seconds * 1000) {
    const t0 = performance.now();
    const { samples } = decodeWav(wavs[f.chunks % wavs.length], { expect48kMono: true });
    const t1 = performance.now();
    f.detections += (await model.analyze(samples)).predictions.length;
    f.decodeMs += t1 - t0;
    f.modelMs += performance.now() - t1;
    f.chunks++;
  }
  f.wallMs = performance.now() - start;
  await model.close();
  return f;
}

/**
 * BENCH_PROFILE_SQL=1: each statement's time under `sql <its first words>` (transactions' own
 * statements included), to see which of the handler's statements cost what.
 */
function timeStatements(db: Db, parts: Record<string, number>): Db {
  const key = (sql: string) => `sql ${sql.replace(/\s+/g, ' ').trim().slice(0, 60)}`;
  const timed =
    <A extends unknown[], R>(fn: (sql: string, ...a: A) => Promise<R>) =>
    async (sql: string, ...a: A): Promise<R> => {
      const t = performance.now();
      try {
        return await fn(sql, ...a);
      } finally {
        parts[key(sql)] = (parts[key(sql)] ?? 0) + performance.now() - t;
      }
    };
  const wrap = (d: Db): Db => ({
    ...d,
    kind: d.kind,
    query: (shape, sql, params) => timed((q: string) => d.query(shape, q, params))(sql),
    maybeOne: (shape, sql, params) => timed((q: string) => d.maybeOne(shape, q, params))(sql),
    one: (shape, sql, params) => timed((q: string) => d.one(shape, q, params))(sql),
    run: (sql, params) => timed((q: string) => d.run(q, params))(sql),
    tx: (fn) => d.tx((inner) => fn(wrap(inner))),
    close: () => d.close(),
  });
  return wrap(db);
}

/** All cores' busy time since boot in ms (/proc/stat: every column but idle and iowait), or null off Linux. */
function machineBusyMs(): number | null {
  try {
    const ticks = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const busy = ticks.reduce((a, b) => a + b, 0) - ticks[3] - ticks[4];
    return busy * 10; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** One worker: its own team, satellite and chunk rows, then the handler over them for `seconds`. */
export async function measureWorker(setup: Setup, seconds: number, as: RunAs = {}): Promise<Figures> {
  const inFlight = as.inFlight ?? 1;
  let db: Db;
  if (setup.databaseUrl) {
    db = createPostgresDb({ url: setup.databaseUrl, schema: setup.schema!, poolSize: 2 });
  } else {
    db = (await createPgliteDb({ dataDir: null })).db;
    await migrate(db);
  }
  const parts: Record<string, number> = {};
  if (process.env.BENCH_PROFILE_SQL) db = timeStatements(db, parts);
  const tenantId = crypto.randomUUID();
  const satelliteId = crypto.randomUUID();
  const now = new Date();
  await db.run(`INSERT INTO tenants (id, name, slug, created_at) VALUES ($1, 'Bench', $2, $3)`, [tenantId, `bench-${tenantId}`, now]);
  await db.run(`INSERT INTO satellites (id, tenant_id, name, created_at, updated_at) VALUES ($1, $2, 'Bench sat', $3, $3)`, [
    satelliteId,
    tenantId,
    now,
  ]);
  const chunks = await db.query(
    Chunk,
    `INSERT INTO chunks (id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, received_at)
       SELECT gen_random_uuid(), $1, $2, $3::timestamptz + g * interval '3 seconds', 3000, 48000, 'bench/' || (g % ${DISTINCT_CHUNKS}) || '.wav', 288044, now()
       FROM generate_series(1, ${CHUNKS_PER_WORKER}) AS g ORDER BY g RETURNING id, storage_key AS "storageKey"`,
    [tenantId, satelliteId, now],
  );

  const model = await loadBenchModel(setup, as);
  const f: Figures = { chunks: 0, wallMs: 0, modelMs: 0, detections: 0, parts };
  // analyze, as the worker calls a real Model (predictions and the embedding), and its window.
  const timed = {
    window: model.window,
    classify: (...args: Parameters<typeof model.classify>) => model.classify(...args),
    analyze: async (...args: Parameters<typeof model.analyze>) => {
      const t = performance.now();
      try {
        return await model.analyze(...args);
      } finally {
        f.modelMs += performance.now() - t;
      }
    },
  };
  /** The handler's dependencies timed one by one: where the time outside the model goes. */
  function timeParts<T extends object>(name: string, o: T): T {
    return new Proxy(o, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return async (...args: unknown[]) => {
          const t = performance.now();
          try {
            return (await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
          } finally {
            parts[`${name}.${String(key)}`] = (parts[`${name}.${String(key)}`] ?? 0) + performance.now() - t;
          }
        };
      },
    });
  }
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
    detections: timeParts('detections', createDetectionRecorder({ db, clock: systemClock, aggregationRule: settings.aggregationRule })),
    storage: timeParts('storage', createFileStorage(setup.objectsDir)),
    queue: { process: async () => {}, enqueue: async () => {} },
    broker: { publish: async () => {} },
    live: { sendToTeam: async () => {} },
    log: { warn: () => {} },
    settings: timeParts('settings', { teamSettings: (id: string) => settings.teamSettings(id) }),
    loadClassifier: async () => timed,
  });
  // The job as the ingester enqueues it (src/ingest/ingester.ts), storage key included.
  const job = (c: { id: string; storageKey: string }) => ({
    id: c.id,
    attempt: 1,
    maxAttempts: 1,
    data: { chunkId: c.id, tenantId, satelliteId, storageKey: c.storageKey },
  });
  // Warm-up: ONNX Runtime's buffers, the catalog, prepared statements.
  for (let i = 0; i < 20; i++) await handle(job(chunks[i]));
  f.modelMs = 0;
  for (const k of Object.keys(parts)) delete parts[k];
  let next = 20;
  const elu0 = nodePerformance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const busy0 = machineBusyMs();
  const start = performance.now();
  // inFlight > 1: jobs overlap as the hub's worker runs them (the queue's concurrency): with the
  // model off the thread, one job's statements run while another's model does.
  const lane = async () => {
    while (performance.now() < start + seconds * 1000 && next < chunks.length) {
      // Not `f.detections += await …`: that reads the sum before the wait, and lanes would overwrite each other's.
      const { stored } = await handle(job(chunks[next++]));
      f.detections += stored.length;
      f.chunks++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  f.wallMs = performance.now() - start;
  f.mainThreadMs = nodePerformance.eventLoopUtilization(elu0).active;
  const cpu = process.cpuUsage(cpu0);
  f.processCpuMs = (cpu.user + cpu.system) / 1000;
  f.machineBusyMs = busy0 === null ? undefined : machineBusyMs()! - busy0;
  await model.close();
  await db.close();
  return f;
}

export function report(title: string, f: Figures, threads: number, extra = ''): void {
  const rate = (1000 * f.chunks) / f.wallMs;
  const outside = 1 - f.modelMs / (f.wallMs * threads);
  // Jobs side by side: a window's wait counts in several jobs at once, so the model's share is not separable.
  const model =
    outside < 0
      ? `jobs overlap${extra}`
      : `model ${(f.modelMs / f.chunks).toFixed(3)} ms${extra} · ${(100 * outside).toFixed(1)} % of worker time outside the model`;
  const cpu =
    f.mainThreadMs === undefined
      ? ''
      : ` · per chunk: main thread busy ${(f.mainThreadMs / f.chunks).toFixed(2)} ms` +
        (f.machineBusyMs === undefined ? '' : `, machine busy ${(f.machineBusyMs / f.chunks).toFixed(2)} ms`);
  console.log(
    `${title.padEnd(34)} ${rate.toFixed(0).padStart(6)} chunks/s (${(rate * 3).toFixed(0)}× real time) · ` +
      `${((f.wallMs * threads) / f.chunks).toFixed(3)} ms per chunk per worker, ${model}${cpu} · ${f.chunks} chunks, ${f.detections} detections`,
  );
}

export function inThreads<T>(n: number, data: WorkerData): Promise<T[]> {
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

export const sum = (rs: Figures[]): Figures =>
  rs.reduce((a, r) => ({
    chunks: a.chunks + r.chunks,
    wallMs: Math.max(a.wallMs, r.wallMs),
    modelMs: a.modelMs + r.modelMs,
    detections: a.detections + r.detections,
    mainThreadMs: (a.mainThreadMs ?? 0) + (r.mainThreadMs ?? 0),
    // Bench workers are threads of one process: its CPU is counted once.
    processCpuMs: Math.max(a.processCpuMs ?? 0, r.processCpuMs ?? 0),
    parts: Object.fromEntries(Object.keys({ ...a.parts, ...r.parts }).map((k) => [k, (a.parts?.[k] ?? 0) + (r.parts?.[k] ?? 0)])),
  }));

/** What a bench thread runs: the handler over stored chunks, or a session alone at a batch size. */
export type WorkerData =
  { mode: 'handler'; setup: Setup; seconds: number; as?: RunAs } | { mode: 'session'; model: string; batch: number; seconds: number };

/**
 * ONNX Runtime alone (the floor): session.run on soundscape audio already in float32, `batch`
 * windows per run, one intra-op thread as the runner's sessions. chunks counts windows.
 */
export async function measureSession(modelPath: string, batch: number, seconds: number): Promise<Figures> {
  const ort = await import('onnxruntime-node');
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  const n = 144_000;
  const inputs = Array.from({ length: 4 }, (_, r) => {
    const data = new Float32Array(batch * n);
    for (let b = 0; b < batch; b++)
      data.set(
        Float32Array.from(soundscapeChunk(7, r * batch + b).samples, (v) => v / 32768),
        b * n,
      );
    return { [session.inputNames[0]]: new ort.Tensor('float32', data, [batch, n]) };
  });
  for (let i = 0; i < 3; i++) await session.run(inputs[i % inputs.length]);
  const f: Figures = { chunks: 0, wallMs: 0, modelMs: 0, detections: 0 };
  const start = performance.now();
  for (let i = 0; performance.now() < start + seconds * 1000; i++) {
    await session.run(inputs[i % inputs.length]);
    f.chunks += batch;
  }
  f.wallMs = performance.now() - start;
  f.modelMs = f.wallMs;
  await session.release();
  return f;
}

/** Stored WAVs of soundscape chunks and, with DATABASE_URL, a migrated schema; `cleanup` removes both. */
export async function prepare(): Promise<{ wavs: Buffer[]; setup: Setup; cleanup: () => Promise<void> }> {
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
  const cleanup = async () => {
    fs.rmSync(objectsDir, { recursive: true, force: true });
    if (databaseUrl && schema) {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
  };
  return { wavs, setup: { objectsDir, databaseUrl, schema }, cleanup };
}

export const rowsIn = (setup: Setup) => (setup.databaseUrl ? 'PostgreSQL' : 'PGlite (in memory, one per worker)');

export async function run(): Promise<void> {
  const { wavs, setup, cleanup } = await prepare();
  const workers = Number(process.env.BENCH_WORKERS ?? os.availableParallelism());
  console.log(
    `inference bench: built-in model, ${DISTINCT_CHUNKS} distinct soundscape chunks (288,044-byte WAVs in file storage), ` +
      `rows in ${rowsIn(setup)}, ${SECONDS} s per phase, ${os.availableParallelism()} cores`,
  );
  try {
    const ref = await measureModelOnly(wavs, SECONDS);
    report('decode → model (reference)', ref, 1, `, decode ${(ref.decodeMs / ref.chunks).toFixed(3)} ms`);
    const handler = (n: number, as: RunAs) => inThreads<Figures>(n, { mode: 'handler', setup, seconds: SECONDS, as });
    const hub: RunAs = { inFlight: DEFAULT_JOBS_IN_FLIGHT, offThread: true };
    report('WAV → model → rows, 1 worker', (await handler(1, hub))[0], 1);
    report(`WAV → model → rows, ${workers} workers`, sum(await handler(workers, hub)), workers);
    report('… one job at a time, model in-thread', (await handler(1, {}))[0], 1);
  } finally {
    await cleanup();
  }
}

if (!isMainThread && workerData) {
  const data = workerData as WorkerData;
  parentPort!.postMessage(
    data.mode === 'handler'
      ? await measureWorker(data.setup, data.seconds, data.as)
      : await measureSession(data.model, data.batch, data.seconds),
  );
}
