/**
 * Inference workers report themselves through the key-value store (memory or Redis), so any
 * api process can answer GET /workers: each worker keeps one entry `workers:w:{id}` (its counts
 * and its last jobs) that lives 60 s and is rewritten after every job and every 10 s, and adds
 * itself to the index `workers:index`. The index is a read-modify-write of one JSON value: two
 * workers writing at once may drop one of them for a beat; the next beat puts it back.
 */
import os from 'node:os';
import crypto from 'node:crypto';
import type { Kv } from '../../infra/kv/index.ts';
import type { Clock } from '../../core/clock.ts';

export const WORKER_TTL_SECONDS = 60;
export const WORKER_BEAT_MS = 10_000;
/** Jobs each worker keeps for GET /workers/jobs. */
export const RECENT_JOBS_PER_WORKER = 50;
export const INDEX_KEY = 'workers:index';
export const workerKey = (id: string) => `workers:w:${id}`;

export interface JobReport {
  jobId: string;
  chunkId: string;
  tenantId: string;
  attempt: number;
  status: 'completed' | 'failed';
  durationMs: number;
  detections: number;
  modelId: string | null;
  finishedAt: string;
  error: string | null;
}

export interface WorkerRecord {
  id: string;
  ip: string;
  hostname: string;
  pid: number;
  startedAt: string;
  lastSeen: string;
  jobsProcessed: number;
  jobsSucceeded: number;
  jobsFailed: number;
  totalDurationMs: number;
  recentJobs: JobReport[];
}

export interface WorkerIdentity {
  id: string;
  ip: string;
  hostname: string;
  pid: number;
}

/** The first non-internal IPv4 address of this machine (what peers see), else loopback. */
export function localIp(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

export function localIdentity(): WorkerIdentity {
  const hostname = os.hostname();
  return { id: `${hostname}-${process.pid}-${crypto.randomBytes(3).toString('hex')}`, ip: localIp(), hostname, pid: process.pid };
}

/** Index updates of every reporter in this process, one after another (across processes, beats repair a lost one). */
let indexChain: Promise<void> = Promise.resolve();

export interface WorkerReporter {
  readonly id: string;
  record(job: JobReport): void;
  /** Resolves when every report so far is written. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export function createWorkerReporter(deps: {
  kv: Kv;
  clock: Clock;
  identity?: WorkerIdentity;
  warn?: (obj: object, msg: string) => void;
  beatMs?: number;
}): WorkerReporter {
  const { kv, clock } = deps;
  const me = deps.identity ?? localIdentity();
  const rec: WorkerRecord = {
    ...me,
    startedAt: clock.now().toISOString(),
    lastSeen: clock.now().toISOString(),
    jobsProcessed: 0,
    jobsSucceeded: 0,
    jobsFailed: 0,
    totalDurationMs: 0,
    recentJobs: [],
  };
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  async function write(withIndex: boolean): Promise<void> {
    rec.lastSeen = clock.now().toISOString();
    await kv.set(workerKey(me.id), JSON.stringify(rec), WORKER_TTL_SECONDS);
    if (!withIndex) return;
    const update = indexChain.then(async () => {
      const now = clock.now().getTime();
      const index = parseIndex(await kv.get(INDEX_KEY));
      index[me.id] = now;
      for (const [id, seen] of Object.entries(index)) if (now - seen > WORKER_TTL_SECONDS * 1000) delete index[id];
      await kv.set(INDEX_KEY, JSON.stringify(index), WORKER_TTL_SECONDS * 2);
    });
    indexChain = update.catch(() => {});
    await update;
  }

  // Reporting must never fail a job or the worker: errors are logged and the next write retries.
  const enqueue = (withIndex: boolean) => {
    chain = chain.then(() => write(withIndex)).catch((err) => deps.warn?.({ err }, 'workers: could not report to the key-value store'));
    return chain;
  };

  enqueue(true);
  const timer = setInterval(() => {
    if (!stopped) enqueue(true);
  }, deps.beatMs ?? WORKER_BEAT_MS);
  timer.unref();

  return {
    id: me.id,
    record(job) {
      rec.jobsProcessed += 1;
      if (job.status === 'completed') rec.jobsSucceeded += 1;
      else rec.jobsFailed += 1;
      rec.totalDurationMs += job.durationMs;
      rec.recentJobs.unshift(job);
      rec.recentJobs.length = Math.min(rec.recentJobs.length, RECENT_JOBS_PER_WORKER);
      void enqueue(false);
    },
    flush: () => chain,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await chain;
      await kv.del(workerKey(me.id)).catch(() => {});
    },
  };
}

export function parseIndex(raw: string | null): Record<string, number> {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** Every worker entry still alive (read side). */
export async function readWorkers(kv: Kv): Promise<WorkerRecord[]> {
  const ids = Object.keys(parseIndex(await kv.get(INDEX_KEY)));
  const raws = await Promise.all(ids.map((id) => kv.get(workerKey(id))));
  const out: WorkerRecord[] = [];
  for (const raw of raws) {
    if (!raw) continue;
    try {
      out.push(JSON.parse(raw) as WorkerRecord);
    } catch {
      // A corrupt entry is skipped; its worker rewrites it within one beat.
    }
  }
  return out;
}
