/**
 * GET /system/status and GET /health/ready (spec hub-http-api §4 "Workers and system").
 * - services: the registry's live entries (registry.ts), each `up`;
 * - infrastructure: one probe per port, each bounded by a time-out so a dead part answers
 *   quickly: database (SELECT 1), key-value store (set then get), broker (what the port tells),
 *   object storage (stat of a probe key);
 * - data: hub-wide counts, the inference queue, species images (none exist yet: zeros).
 */
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../infra/db/types.ts';
import type { Kv } from '../../infra/kv/index.ts';
import type { Broker } from '../../infra/broker/types.ts';
import type { ObjectStorage } from '../../infra/storage/types.ts';
import type { JobQueue } from '../../infra/queue/types.ts';
import type { HubMode } from '../../config.ts';
import { INFERENCE_QUEUE } from '../../protocol/jobs.ts';
import { createSystemRepo } from './repo.ts';
import { readServices } from './registry.ts';

export const PROBE_TIMEOUT_MS = 2000;
const PROBE_KEY = 'system/probe';

export interface Check {
  ok: boolean;
  latencyMs: number;
  kind: string;
  error?: string;
}

/** Runs a probe with a time-out; any error (or the time-out) is the check's answer, never the caller's. */
export async function probe(kind: string, fn: () => Promise<unknown>, timeoutMs = PROBE_TIMEOUT_MS): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10, kind };
  } catch (err) {
    return {
      ok: false,
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
      kind,
      error: (err as Error)?.message ?? String(err),
    };
  } finally {
    clearTimeout(timer);
  }
}

export function createSystemStatusService(deps: {
  db: Db;
  kv: Kv;
  clock: Clock;
  mode: HubMode;
  broker: Pick<Broker, 'kind' | 'connected' | 'connectedClients'>;
  storage: Pick<ObjectStorage, 'kind' | 'stat'>;
  queue: Pick<JobQueue, 'counts' | 'kind'>;
  timeoutMs?: number;
  /** Species photo totals (issue 20): species asked for and those with a photo. */
  speciesImages?: () => Promise<{ total: number; withImage: number }>;
  /** Search by sound (issue 35): pgvector's HNSW index, or the exact scan of a PostgreSQL without pgvector. */
  similarityIndex?: () => Promise<'hnsw' | 'exact'>;
}) {
  const { db, kv, clock, broker, storage, queue } = deps;
  const repo = createSystemRepo(db);
  const t = deps.timeoutMs ?? PROBE_TIMEOUT_MS;

  const database = () => probe(db.kind, repo.ping, t);
  const brokerCheck = () =>
    probe(
      broker.kind,
      async () => {
        if (broker.connected && !broker.connected()) throw new Error('the hub is not connected to the broker');
        // An api process reaches the broker through a dispatcher (split mode): without one running,
        // no satellite's chunk is taken, however well this process is.
        if (broker.kind === 'bus' && !(await readServices(kv, clock)).some((s) => s.mode === 'dispatcher'))
          throw new Error("no dispatcher is running: nothing takes the satellites' messages");
      },
      t,
    );
  const kvCheck = () =>
    probe(
      kv.kind,
      async () => {
        const value = String(clock.now().getTime());
        await kv.set('system:probe', value, 60);
        if ((await kv.get('system:probe')) === null) throw new Error('the value written was not read back');
      },
      t,
    );
  // On Redis the queue is a part of its own: a dispatcher that cannot enqueue refuses every chunk.
  const queueCheck = () => probe(queue.kind, () => queue.counts(INFERENCE_QUEUE), t);
  const infrastructure = async () => {
    const [dbCheck, kvResult, brokerResult, storageCheck] = await Promise.all([
      database(),
      kvCheck(),
      brokerCheck(),
      probe(storage.kind, () => storage.stat(PROBE_KEY), t),
    ]);
    return { database: dbCheck, kv: kvResult, broker: brokerResult, storage: storageCheck };
  };

  return {
    async status() {
      const [services, infra, counts, inference, images, similarityIndex] = await Promise.all([
        readServices(kv, clock),
        infrastructure(),
        repo.counts(),
        queue.counts(INFERENCE_QUEUE),
        deps.speciesImages?.() ?? null,
        deps.similarityIndex?.() ?? null,
      ]);
      return {
        services: services.map((s) => ({ ...s, status: 'up' as const })),
        infrastructure: infra,
        data: {
          detections: { total: counts.listed + counts.tentative, listed: counts.listed, tentative: counts.tentative },
          chunks: counts.chunks,
          inferenceQueue: inference,
          speciesImages: images ? { ...images, supported: true } : { total: 0, withImage: 0, supported: false },
          tenants: counts.tenants,
          users: counts.users,
          ...(similarityIndex ? { similarity: { index: similarityIndex } } : {}),
        },
      };
    },

    /**
     * The database, the key-value store, the queue when it is on Redis, and the broker in the modes
     * that hold it (full, dispatcher): whatever a chunk or a request cannot do without (issue 32).
     */
    async readiness(): Promise<{ ready: boolean; checks: Record<string, Check> }> {
      const holdsBroker = deps.mode === 'full' || deps.mode === 'dispatcher';
      const [dbCheck, kvResult, queueResult, brokerResult] = await Promise.all([
        database(),
        kvCheck(),
        queue.kind === 'bullmq' ? queueCheck() : Promise.resolve(null),
        holdsBroker ? brokerCheck() : Promise.resolve(null),
      ]);
      const checks: Record<string, Check> = {
        database: dbCheck,
        kv: kvResult,
        ...(queueResult ? { queue: queueResult } : {}),
        ...(brokerResult ? { broker: brokerResult } : {}),
      };
      return { ready: Object.values(checks).every((c) => c.ok), checks };
    },
  };
}

export type SystemStatusService = ReturnType<typeof createSystemStatusService>;
