/**
 * The inference worker (issue 5): takes the ingester's 'inference' jobs, runs the built-in model
 * on the chunk's audio, stores one detection per species above the minimum confidence and, once
 * they are committed, tells the satellite (MQTT `detection`, QoS 1) and the team's WebSocket
 * clients (`detection` event over the bus).
 *
 * - Idempotent per chunk: a chunk that already has detections is skipped, so a retried or
 *   re-enqueued job stores nothing twice (the check runs again under a per-team lock inside the
 *   transaction, which also serialises the first-of-day/season decisions of one team).
 * - A failing model (not loadable, bad audio, inference error) fails the job with the reason;
 *   the queue retries it with backoff; the worker itself keeps running.
 * - First of day: no detection of that species for the team earlier that UTC day (in the order
 *   chunks are processed). First of season: the same over the UTC calendar quarter (docs/decisions.md).
 * - Rare: judged from the team's own record before the detection (src/inference/rarity.ts).
 */
import type { Db } from '../infra/db/index.ts';
import type { Clock } from '../core/clock.ts';
import type { Broker } from '../infra/broker/index.ts';
import type { ObjectStorage } from '../infra/storage/index.ts';
import type { Job, JobQueue } from '../infra/queue/index.ts';
import { topicOf } from '../infra/broker/topics.ts';
import { newId } from '../core/crypto.ts';
import { INFERENCE_QUEUE } from '../broker/ingester.ts';
import { parseWav } from '../broker/wav.ts';
import { createDetectionsRepo, type NewDetection } from '../modules/detections/repo.ts';
import { DEFAULT_MIN_CONFIDENCE, loadBuiltinModel, MODEL_SAMPLE_RATE, type Model } from './model.ts';
import { speciesCatalog, type SpeciesCatalog } from './species-catalog.ts';
import { judgeRarity, rarityFacts } from './rarity.ts';

export const BUILTIN_MODEL_ID = 'builtin';

export interface InferenceLog {
  warn(obj: object, msg: string): void;
}

/** What classifies a chunk: the built-in model by default; tests may pass another. */
export type Classifier = Pick<Model, 'classify'>;

export interface InferenceWorkerDeps {
  db: Db;
  clock: Clock;
  storage: Pick<ObjectStorage, 'get'>;
  queue: Pick<JobQueue, 'process'>;
  broker: Pick<Broker, 'publish'>;
  live: { sendToTeam(tenantId: string, event: { type: string } & Record<string, unknown>): Promise<void> };
  log: InferenceLog;
  /** Loads the classifier; default: the built-in model, loaded once per process. */
  loadClassifier?: () => Promise<Classifier>;
  modelId?: string;
  catalog?: SpeciesCatalog;
  minConfidence?: number;
}

let builtin: Promise<Model> | null = null;

/** The built-in model, loaded once per process (a failed load is tried again by the next job). */
export function builtinModel(): Promise<Model> {
  if (!builtin) {
    builtin = loadBuiltinModel({ threads: 1 });
    builtin.catch(() => {
      builtin = null;
    });
  }
  return builtin;
}

/** The UTC day and the UTC calendar quarter (the season) a time falls in, as [from, to). */
export function dayOf(t: Date): [Date, Date] {
  const from = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));
  return [from, new Date(from.getTime() + 86_400_000)];
}

export function seasonOf(t: Date): [Date, Date] {
  const q = Math.floor(t.getUTCMonth() / 3);
  return [new Date(Date.UTC(t.getUTCFullYear(), q * 3, 1)), new Date(Date.UTC(t.getUTCFullYear(), q * 3 + 3, 1))];
}

/** The detection message (satellite protocol "Detection message"). */
export interface DetectionMessage {
  id: string;
  tenantId: string;
  satelliteId: string;
  satelliteName: string;
  speciesCode: string;
  commonName: string;
  scientificName: string;
  confidence: number;
  isRare: boolean;
  isFirstOfDay: boolean;
  isFirstOfSeason: boolean;
  rareReason: string | null;
  detectedAt: string;
  audioChunkId: string;
}

/** Decodes a stored chunk's WAV to 16-bit mono samples at the model's rate. */
function samplesOf(wav: Buffer): Int16Array {
  const parsed = parseWav(wav);
  if (!parsed.ok) throw new Error(`the stored audio is not a usable WAV: ${parsed.reason}`);
  const { format, channels, sampleRate, bitsPerSample, dataOffset, dataLength } = parsed.wav;
  if (format !== 1 || bitsPerSample !== 16 || channels !== 1 || sampleRate !== MODEL_SAMPLE_RATE) {
    throw new Error(`the stored audio is not 16-bit PCM mono at ${MODEL_SAMPLE_RATE} Hz`);
  }
  const n = Math.floor(dataLength / 2);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = wav.readInt16LE(dataOffset + 2 * i);
  return out;
}

export function createInferenceHandler(deps: InferenceWorkerDeps) {
  const { db, clock, storage, broker, live, log } = deps;
  const repo = createDetectionsRepo(db);
  const loadClassifier = deps.loadClassifier ?? builtinModel;
  const modelId = deps.modelId ?? BUILTIN_MODEL_ID;
  const minConfidence = deps.minConfidence ?? DEFAULT_MIN_CONFIDENCE;

  return async function handle(job: Job): Promise<DetectionMessage[]> {
    const chunkId = String(job.data.chunkId ?? '');
    const tenantId = String(job.data.tenantId ?? '');
    const chunk = await db.maybeOne<{ satelliteId: string; satelliteName: string | null; recordedAt: Date; durationMs: number; storageKey: string }>(
      `SELECT c.satellite_id AS "satelliteId", s.name AS "satelliteName", c.recorded_at AS "recordedAt", c.duration_ms AS "durationMs", c.storage_key AS "storageKey"
       FROM chunks c LEFT JOIN satellites s ON s.id = c.satellite_id
       WHERE c.id = $1 AND c.tenant_id = $2`,
      [chunkId, tenantId],
    );
    // The chunk was taken back (or its team or satellite deleted): nothing to classify.
    if (!chunk) return [];
    if (await repo.chunkDone(db, chunkId)) return [];

    const wav = await storage.get(chunk.storageKey);
    if (!wav) throw new Error(`the audio of chunk ${chunkId} is not in storage`);
    const samples = samplesOf(wav);

    let predictions;
    try {
      const model = await loadClassifier();
      predictions = await model.classify(samples, { minConfidence });
    } catch (err) {
      throw new Error(`inference failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }

    const catalog = deps.catalog ?? speciesCatalog();
    const detectedAt = new Date(new Date(chunk.recordedAt).getTime());
    const endMs = Math.min(chunk.durationMs, 3000);
    const found: Array<Omit<NewDetection, 'isFirstOfDay' | 'isFirstOfSeason'>> = [];
    const seen = new Set<string>();
    for (const p of predictions) {
      const species = catalog.byLabel(p.label) ?? catalog.byScientificName(p.scientificName);
      if (!species) {
        log.warn({ label: p.label, chunkId }, 'inference: a label the species catalog does not know, skipped');
        continue;
      }
      if (seen.has(species.code)) continue;
      seen.add(species.code);
      found.push({
        id: newId(), tenantId, satelliteId: chunk.satelliteId, chunkId,
        speciesCode: species.code, scientificName: species.scientificName, commonName: species.commonName, category: species.category,
        confidence: p.confidence,
        // One 3-second window per chunk: the detection starts where the chunk does (offset 0).
        detectedAt, startMs: 0, endMs,
        modelId, isRare: false, rareReason: null, createdAt: clock.now(),
      });
    }
    if (found.length === 0) return [];

    const stored = await db.tx(async (tx) => {
      // One team at a time: the idempotence check and the first-of-day/season reads see every
      // earlier commit of the team.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`detections:${tenantId}`]);
      if (await repo.chunkDone(tx, chunkId)) return [];
      const codes = found.map((d) => d.speciesCode);
      const [dayFrom, dayTo] = dayOf(detectedAt);
      const [seasonFrom, seasonTo] = seasonOf(detectedAt);
      const seenToday = await repo.speciesSeen(tx, tenantId, codes, dayFrom, dayTo);
      const seenSeason = await repo.speciesSeen(tx, tenantId, codes, seasonFrom, seasonTo);
      const rarity = await rarityFacts(tx, tenantId, codes);
      const rows: NewDetection[] = found.map((d) => ({ ...d, isFirstOfDay: !seenToday.has(d.speciesCode), isFirstOfSeason: !seenSeason.has(d.speciesCode), ...judgeRarity(d, rarity) }));
      await repo.insertMany(tx, rows);
      return rows;
    });

    // After the commit: the satellite and the team's sockets hear of each new detection.
    const messages = stored.map<DetectionMessage>((d) => ({
      id: d.id, tenantId, satelliteId: d.satelliteId, satelliteName: chunk.satelliteName ?? '',
      speciesCode: d.speciesCode, commonName: d.commonName, scientificName: d.scientificName, confidence: d.confidence,
      isRare: d.isRare, isFirstOfDay: d.isFirstOfDay, isFirstOfSeason: d.isFirstOfSeason, rareReason: d.rareReason,
      detectedAt: d.detectedAt.toISOString(), audioChunkId: chunkId,
    }));
    for (const m of messages) {
      try {
        await broker.publish(topicOf(tenantId, m.satelliteId, 'detection'), JSON.stringify(m), { qos: 1 });
      } catch (err) {
        log.warn({ err, chunkId, detectionId: m.id }, 'inference: could not publish the detection message');
      }
      try {
        await live.sendToTeam(tenantId, { type: 'detection', ...m });
      } catch (err) {
        log.warn({ err, chunkId, detectionId: m.id }, 'inference: could not send the detection event');
      }
    }
    return messages;
  };
}

/** Starts the worker on the 'inference' queue (concurrency 1 by default). */
export async function startInferenceWorker(deps: InferenceWorkerDeps, concurrency = 1): Promise<void> {
  const handle = createInferenceHandler(deps);
  await deps.queue.process(INFERENCE_QUEUE, concurrency, async (job) => {
    try {
      await handle(job);
    } catch (err) {
      deps.log.warn({ err, jobId: job.id, attempt: job.attempt }, 'inference: job failed');
      throw err;
    }
  });
}
