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
 * - The model is the team's pick (setting `inference_model`, else the hub default), with the
 *   team's sensitivity, minimum confidence and window overlap (model-store.ts, docs/model.md).
 *   Sessions are cached per model id; a model that fails to load or run fails this job only.
 * - Every finished attempt is reported (counts, duration, outcome) for GET /workers
 *   (src/modules/workers/reporter.ts).
 */
import type { Db } from '../infra/db/index.ts';
import type { Clock } from '../core/clock.ts';
import type { Broker } from '../infra/broker/index.ts';
import type { ObjectStorage } from '../infra/storage/index.ts';
import type { Job, JobQueue } from '../infra/queue/index.ts';
import { topicOf } from '../protocol/topics.ts';
import { newId } from '../core/crypto.ts';
import { INFERENCE_QUEUE, type InferenceJob } from '../protocol/jobs.ts';
import { parseWav } from '../protocol/wav.ts';
import { createDetectionsRepo, type NewDetection } from '../modules/detections/repo.ts';
import { loadBuiltinModel, type Model } from '../infra/classifier/onnx.ts';
import {
  DEFAULT_MIN_CONFIDENCE,
  DEFAULT_SENSITIVITY,
  MODEL_INPUT_SAMPLES,
  MODEL_SAMPLE_RATE,
  type Classifier,
  type Prediction,
} from '../infra/classifier/types.ts';
import { speciesCatalog, type SpeciesCatalog } from '../modules/species/catalog.ts';
import { aggregate, type AggregationRule } from './aggregation.ts';
import { BUILTIN_MODEL_ID, type ModelStore } from '../modules/models/model-store.ts';
import { speciesOfLabel, type LabelSpecies } from '../modules/species/label-species.ts';
import type { WorkerReporter } from '../modules/workers/reporter.ts';
import { FEW_RECORDS, judgeRarity } from './rarity.ts';

export interface InferenceLog {
  warn(obj: object, msg: string): void;
}

export interface InferenceWorkerDeps {
  db: Db;
  clock: Clock;
  storage: Pick<ObjectStorage, 'get'>;
  queue: Pick<JobQueue, 'process'>;
  broker: Pick<Broker, 'publish'>;
  live: { sendToTeam(tenantId: string, event: { type: string } & Record<string, unknown>): Promise<void> };
  log: InferenceLog;
  /** The team's model (cached sessions by model id); without it, the built-in model. */
  models?: Pick<ModelStore, 'forTeam'>;
  /** The team's inference settings (inference_model, inference_sensitivity, inference_min_confidence, inference_overlap_sec). */
  settings?: { teamSettings(tenantId: string): Promise<Record<string, unknown>> };
  /** Where finished attempts are reported (GET /workers). */
  reporter?: Pick<WorkerReporter, 'record'>;
  /** Tests: a classifier used instead of the team's model. */
  loadClassifier?: () => Promise<Classifier>;
  modelId?: string;
  catalog?: SpeciesCatalog;
  minConfidence?: number;
}

/** The team's inference settings, as numbers the model accepts (defaults when unset). */
interface InferenceSettings {
  /** Categories the team shows (null: every category, when no settings service is wired). */
  visibleCategories: string[] | null;
  aggregation: AggregationRule | null;
  model: string | null;
  sensitivity: number;
  minConfidence: number;
  overlapMs: number;
}

/**
 * Start offsets of the 3-second windows inside a chunk: every (3 s - overlap) while a whole
 * window fits, and at least the first one (chunks are 2.7-3.3 s, so usually one window).
 */
export function windowStarts(durationMs: number, overlapMs: number): number[] {
  const step = Math.max(100, 3000 - overlapMs);
  const starts = [0];
  for (let t = step; t + 3000 <= durationMs; t += step) starts.push(t);
  return starts;
}

/** What the handler reads of a job; the storage key and the rest come from the chunk row. */
type ChunkOfJob = Pick<InferenceJob, 'chunkId' | 'tenantId'> & Partial<InferenceJob>;

/** The model each running attempt used, for its report. */
const modelOfJob = new WeakMap<Job<ChunkOfJob>, string>();

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

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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
  // On a little-endian host the PCM bytes are the samples: one copy instead of a call per sample.
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(wav.subarray(dataOffset, dataOffset + 2 * n));
  else for (let i = 0; i < n; i++) out[i] = wav.readInt16LE(dataOffset + 2 * i);
  return out;
}

/** What one job did: the rows it stored, and the detection messages it sent. */
export interface InferenceOutcome {
  stored: NewDetection[];
  announced: DetectionMessage[];
}

const NOTHING: InferenceOutcome = Object.freeze({ stored: [], announced: [] }) as InferenceOutcome;

export function createInferenceHandler(deps: InferenceWorkerDeps) {
  const { db, clock, storage, broker, live, log } = deps;
  const repo = createDetectionsRepo(db);

  async function settingsOf(tenantId: string): Promise<InferenceSettings> {
    const v = deps.settings ? await deps.settings.teamSettings(tenantId) : {};
    const num = (x: unknown, d: number) => (typeof x === 'number' && Number.isFinite(x) ? x : d);
    return {
      visibleCategories: Array.isArray(v.visible_categories) ? (v.visible_categories as string[]) : null,
      // Read with the other settings (one query); without a settings service, aggregate reads it.
      aggregation: (v.aggregation as AggregationRule | undefined) ?? null,
      model: typeof v.inference_model === 'string' ? v.inference_model : null,
      sensitivity: num(v.inference_sensitivity, DEFAULT_SENSITIVITY),
      minConfidence: deps.minConfidence ?? num(v.inference_min_confidence, DEFAULT_MIN_CONFIDENCE),
      overlapMs: Math.round(1000 * num(v.inference_overlap_sec, 0)),
    };
  }

  /** The classifier, and the species of its outputs where the species table maps them (else the catalog, below). */
  async function classifierFor(picked: string | null): Promise<{ id: string; classifier: Classifier; species?: readonly LabelSpecies[] }> {
    if (deps.loadClassifier) return { id: deps.modelId ?? BUILTIN_MODEL_ID, classifier: await deps.loadClassifier() };
    if (deps.models) return deps.models.forTeam(picked);
    return { id: BUILTIN_MODEL_ID, classifier: await builtinModel() };
  }

  return async function handle(job: Job<ChunkOfJob>): Promise<InferenceOutcome> {
    const { chunkId, tenantId } = job.data;
    const chunk = await db.maybeOne<{
      satelliteId: string;
      satelliteName: string | null;
      recordedAt: Date;
      durationMs: number;
      storageKey: string;
      done: boolean;
    }>(
      `SELECT c.satellite_id AS "satelliteId", s.name AS "satelliteName", c.recorded_at AS "recordedAt", c.duration_ms AS "durationMs", c.storage_key AS "storageKey",
         EXISTS (SELECT 1 FROM detections d WHERE d.chunk_id = c.id) AS done
       FROM chunks c LEFT JOIN satellites s ON s.id = c.satellite_id
       WHERE c.id = $1 AND c.tenant_id = $2`,
      [chunkId, tenantId],
    );
    // The chunk was taken back (or its team or satellite deleted), or is classified already.
    if (!chunk || chunk.done) return NOTHING;

    const wav = await storage.get(chunk.storageKey);
    if (!wav) throw new Error(`the audio of chunk ${chunkId} is not in storage`);
    const samples = samplesOf(wav);

    const opts = await settingsOf(tenantId);
    // Each window's best predictions; a species heard in several windows keeps its most confident one.
    const best = new Map<string, { p: Prediction; startMs: number }>();
    let modelId: string;
    let speciesOf: ((p: Prediction) => LabelSpecies | undefined) | undefined;
    try {
      const model = await classifierFor(opts.model);
      modelId = model.id;
      speciesOf = model.species && ((p) => model.species![p.index]);
      modelOfJob.set(job, modelId);
      for (const startMs of windowStarts(chunk.durationMs, opts.overlapMs)) {
        const from = Math.round((startMs * MODEL_SAMPLE_RATE) / 1000);
        const window = samples.subarray(from, from + MODEL_INPUT_SAMPLES);
        for (const p of await model.classifier.classify(window, { sensitivity: opts.sensitivity, minConfidence: opts.minConfidence })) {
          const prev = best.get(p.label);
          if (!prev || p.confidence > prev.p.confidence) best.set(p.label, { p, startMs });
        }
      }
    } catch (err) {
      throw new Error(`inference failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }

    const catalog = deps.catalog ?? speciesCatalog();
    const chunkStart = new Date(chunk.recordedAt).getTime();
    const found: Array<Omit<NewDetection, 'isFirstOfDay' | 'isFirstOfSeason'>> = [];
    const seen = new Set<string>();
    for (const { p, startMs } of [...best.values()].sort((a, b) => b.p.confidence - a.p.confidence)) {
      // As the species table maps the model's labels; a classifier outside the model store maps
      // through the catalog the same way (labels it does not know keep their own names, model-store.ts).
      const species = speciesOf?.(p) ?? speciesOfLabel(catalog, p);
      if (seen.has(species.speciesCode)) continue;
      seen.add(species.speciesCode);
      found.push({
        id: newId(),
        tenantId,
        satelliteId: chunk.satelliteId,
        chunkId,
        speciesCode: species.speciesCode,
        scientificName: species.scientificName,
        commonName: species.commonName,
        category: species.category,
        confidence: p.confidence,
        // The detection starts where its window does inside the chunk.
        detectedAt: new Date(chunkStart + startMs),
        startMs,
        endMs: Math.min(chunk.durationMs, startMs + 3000),
        modelId,
        isRare: false,
        rareReason: null,
        createdAt: clock.now(),
      });
    }
    if (found.length === 0) return NOTHING;
    const detectedAt = new Date(chunkStart);

    const { rows: stored, outcome } = await db.tx(async (tx) => {
      // One team at a time: the idempotence check and the first-of-day/season reads see every
      // earlier commit of the team. (PGlite is one session: its transactions never overlap.)
      if (tx.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`detections:${tenantId}`]);
      const codes = found.map((d) => d.speciesCode);
      const record = await repo.teamRecord(tx, {
        tenantId,
        chunkId,
        codes,
        day: dayOf(detectedAt),
        season: seasonOf(detectedAt),
        few: FEW_RECORDS,
      });
      if (record.done) return { rows: [] as NewDetection[], outcome: null };
      const { seenToday, seenSeason } = record;
      const rarity = record;
      const rows: NewDetection[] = found.map((d) => ({
        ...d,
        isFirstOfDay: !seenToday.has(d.speciesCode),
        isFirstOfSeason: !seenSeason.has(d.speciesCode),
        ...judgeRarity(d, rarity),
      }));
      await repo.insertMany(tx, rows);
      // Stitching and the team's aggregation rule (src/inference/aggregation.ts) decide tentative or promoted.
      const outcome = await aggregate(tx, { tenantId, satelliteId: chunk.satelliteId, rows, rule: opts.aggregation });
      // Earlier tentative rows this insert promoted are announced now, as the page lists them now.
      const promotedHeads = outcome.promoted.length > 0 ? await repo.callHeadsAmong(tx, outcome.promoted) : [];
      return { rows: [...rows, ...promotedHeads], outcome };
    });
    if (!outcome) return NOTHING;

    // After the commit: the satellite and the team's sockets hear of each detection the
    // Detections page now lists (docs/decisions.md "Announcements"): not tentative ones, not a
    // stitched call's continuations, not categories the team hides.
    const silent = new Set([...outcome.tentative, ...outcome.stitched.keys()]);
    const announced = stored.filter(
      (d) => !silent.has(d.id) && (opts.visibleCategories === null || opts.visibleCategories.includes(d.category)),
    );
    const messages = announced.map<DetectionMessage>((d) => ({
      id: d.id,
      tenantId,
      satelliteId: d.satelliteId,
      satelliteName: chunk.satelliteName ?? '',
      speciesCode: d.speciesCode,
      commonName: d.commonName,
      scientificName: d.scientificName,
      confidence: d.confidence,
      isRare: d.isRare,
      isFirstOfDay: d.isFirstOfDay,
      isFirstOfSeason: d.isFirstOfSeason,
      rareReason: d.rareReason,
      detectedAt: new Date(d.detectedAt).toISOString(),
      audioChunkId: d.chunkId,
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
    return { stored: stored.filter((d) => d.chunkId === chunkId), announced: messages };
  };
}

/** Starts the worker on the 'inference' queue (concurrency 1 by default). */
export async function startInferenceWorker(deps: InferenceWorkerDeps, concurrency = 1): Promise<void> {
  const handle = createInferenceHandler(deps);
  await deps.queue.process<InferenceJob>(INFERENCE_QUEUE, concurrency, async (job) => {
    const started = performance.now();
    const report = (status: 'completed' | 'failed', detections: number, error: string | null) =>
      deps.reporter?.record({
        jobId: job.id,
        chunkId: job.data.chunkId,
        tenantId: job.data.tenantId,
        attempt: job.attempt,
        status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        detections,
        modelId: modelOfJob.get(job) ?? null,
        finishedAt: deps.clock.now().toISOString(),
        error,
      });
    try {
      const { stored } = await handle(job);
      report('completed', stored.length, null);
    } catch (err) {
      report('failed', 0, (err as Error)?.message ?? String(err));
      deps.log.warn({ err, jobId: job.id, attempt: job.attempt }, 'inference: job failed');
      throw err;
    }
  });
}
