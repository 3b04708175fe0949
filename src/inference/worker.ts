/**
 * The inference worker (issue 5): takes the ingester's 'inference' jobs, runs the built-in model
 * on the chunk's audio, stores one detection per species above the minimum confidence and, once
 * they are committed, tells the satellite (MQTT `detection`, QoS 1) and the team's WebSocket
 * clients (`detection` event over the bus).
 *
 * - Idempotent per chunk: a chunk that already has detections is skipped, so a retried or
 *   re-enqueued job stores nothing twice (the detections module checks again when recording).
 * - A failing model (not loadable, bad audio, inference error) fails the job with the reason;
 *   the queue retries it with backoff; the worker itself keeps running.
 * - The rows, their flags (first of day and of season, rare), stitching and aggregation are the
 *   detections module's (src/modules/detections/recorder.ts); the worker sends what it returns.
 * - The model is the team's pick (setting `inference_model`, else the hub default), with the
 *   team's sensitivity, minimum confidence and window overlap (model-store.ts, docs/model.md).
 *   Sessions are cached per model id; a model that fails to load or run fails this job only.
 * - The model's family sets its windows (windows.ts): a window longer than the chunk (5 s at
 *   32 kHz) runs on into the satellite's next chunk; while that has not come, the job looks again
 *   later (a delayed job), and past the wait the window is padded with silence.
 * - Every finished attempt is reported (counts, duration, outcome) for GET /workers
 *   (src/modules/workers/reporter.ts).
 * - A job failing its last attempt marks its chunk failed in the database, and a later success
 *   clears the mark (src/modules/jobs/service.ts re-drives and lists them, issue 21).
 */
import type { Clock } from '../core/clock.ts';
import type { Broker } from '../infra/broker/index.ts';
import type { ObjectStorage } from '../infra/storage/index.ts';
import type { Job, JobQueue } from '../infra/queue/index.ts';
import { topicOf } from '../protocol/topics.ts';
import { INFERENCE_QUEUE, type InferenceJob } from '../protocol/jobs.ts';
import { parseWav } from '../protocol/wav.ts';
import {
  announcement,
  type ChunkToClassify,
  type DetectionRecorder,
  type HeardSpecies,
  type RecordedChunk,
} from '../modules/detections/recorder.ts';
import type { Bus } from '../infra/bus/index.ts';
import type { AggregationRule, SettingsService } from '../modules/settings/service.ts';
import { loadBuiltinModel, type Model } from '../infra/classifier/onnx.ts';
import {
  BIRDNET_WINDOW,
  DEFAULT_MIN_CONFIDENCE,
  DEFAULT_SENSITIVITY,
  MODEL_SAMPLE_RATE,
  type Classifier,
  type ClassifyOptions,
  type Prediction,
  type Samples,
  type WindowResult,
} from '../infra/classifier/types.ts';
import { speciesCatalog, type SpeciesCatalog } from '../modules/species/catalog.ts';
import { BUILTIN_MODEL_ID, type ModelStore } from '../modules/models/model-store.ts';
import { speciesOfLabel, type LabelSpecies } from '../modules/species/label-species.ts';
import type { WorkerReporter } from '../modules/workers/reporter.ts';
import { rangeSettingsOf, type RangeService, type RangeSettings } from '../modules/range/service.ts';
import { observationRuleOf, type ObservationRule } from '../modules/detections/observations.ts';
import type { Metrics } from '../infra/metrics/index.ts';
import { holdpoint } from '../core/failpoints.ts';
import { PartUnavailable } from '../core/errors.ts';
import { DEFAULT_WINDOW_RECHECK_MS, DEFAULT_WINDOW_WAIT_MS, windowsOf, type Window, type WindowSource } from './windows.ts';
import { inOrder, type Place } from './in-order.ts';

export { windowStarts } from './windows.ts';

export interface InferenceLog {
  warn(obj: object, msg: string): void;
}

export interface InferenceWorkerDeps {
  clock: Clock;
  /** Where the chunk is looked up and what the model heard is recorded. */
  detections: Pick<DetectionRecorder, 'chunkToClassify' | 'recordChunk' | 'followingChunks'>;
  storage: Pick<ObjectStorage, 'get'>;
  /** enqueue: a window waiting for the chunk after its own looks again through a delayed job. */
  queue: Pick<JobQueue, 'process' | 'enqueue'>;
  broker: Pick<Broker, 'publish'>;
  live: { sendToTeam(tenantId: string, event: { type: string } & Record<string, unknown>): Promise<void> };
  /** Where alert rules hear of announced detections (src/modules/alerts); none: no alerts. */
  bus?: Pick<Bus, 'publish'>;
  log: InferenceLog;
  /** The team's model (cached sessions by model id); without it, the built-in model. */
  models?: Pick<ModelStore, 'forTeam'>;
  /** The team's inference settings (inference_model, inference_sensitivity, inference_min_confidence, inference_overlap_sec). */
  settings?: Pick<SettingsService, 'teamSettings'>;
  /** Where finished attempts are reported (GET /workers). */
  reporter?: Pick<WorkerReporter, 'record'>;
  /** Where chunks whose job failed for good are marked, and unmarked once classified (src/modules/jobs). */
  failures?: {
    failed(tenantId: string, chunkId: string, error: string): Promise<void>;
    recovered(tenantId: string, chunkId: string): Promise<void>;
  };
  /** Job durations by outcome (GET /metrics). */
  metrics?: Pick<Metrics, 'inferenceJob'>;
  /** Where a chunk's audio is removed when a human voice is heard in it (src/modules/audio, voice privacy). */
  voicePrivacy?: { removeVoiceAudio(tenantId: string, chunkId: string, at: Date): Promise<boolean> };
  /** Where a chunk is marked classified, detections or none, so a restart does not offer it again (src/modules/audio). */
  classified?: { markClassified(tenantId: string, chunkId: string, at: Date): Promise<void> };
  /** The range filter (src/modules/range): flags species out of range at the satellite that week; none: nothing flagged. */
  range?: Pick<RangeService, 'judge'>;
  /** Tests: a classifier used instead of the team's model. */
  loadClassifier?: () => Promise<Classifier>;
  modelId?: string;
  catalog?: SpeciesCatalog;
  minConfidence?: number;
  /** How long a window waits for the chunks after its own, by the injected clock (default 30 s, windows.ts). */
  windowWaitMs?: number;
  /** How often a waiting window looks again, in real time (default 3 s). */
  windowRecheckMs?: number;
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
  /** The voice confidence at which the chunk's audio is removed; null: the team keeps voices. */
  voiceThreshold: number | null;
  /** The range filter's threshold and the team's include/exclude lists. */
  range: RangeSettings;
  /** One call heard by several satellites (src/modules/detections/observations.ts); null: the recorder reads it. */
  observations: ObservationRule | null;
}

/** What the handler reads of a job; the storage key and the rest come from the chunk row. */
type ChunkOfJob = Pick<InferenceJob, 'chunkId' | 'tenantId'> & Partial<InferenceJob>;

/** The model each running attempt used, for its report. */
const modelOfJob = new WeakMap<Job<ChunkOfJob>, string>();

let builtin: Promise<Model> | null = null;
let builtinLoaded: Model | null = null;

/**
 * The built-in model, loaded once per process on a thread of its own (the event loop moves while
 * it runs); a failed load, or a thread that died, is loaded again by the next job.
 */
export function builtinModel(): Promise<Model> {
  if (builtinLoaded && !builtinLoaded.usable) {
    builtin = null;
    builtinLoaded = null;
  }
  if (!builtin) {
    const made = loadBuiltinModel({ threads: 1, offThread: true });
    builtin = made;
    made.then(
      (m) => {
        if (builtin === made) builtinLoaded = m;
      },
      () => {
        if (builtin === made) builtin = null;
      },
    );
  }
  return builtin;
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
  // On a little-endian host the PCM bytes are the samples: a view when they are aligned (a file
  // read into a buffer of its own), else one copy; never a call per sample.
  const at = wav.byteOffset + dataOffset;
  if (LITTLE_ENDIAN && at % 2 === 0) return new Int16Array(wav.buffer, at, n);
  const out = new Int16Array(n);
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(wav.subarray(dataOffset, dataOffset + 2 * n));
  else for (let i = 0; i < n; i++) out[i] = wav.readInt16LE(dataOffset + 2 * i);
  return out;
}

/** The voice confidence at which a chunk's audio is removed when the team has not set one. */
export const DEFAULT_VOICE_THRESHOLD = 0.5;

const NOTHING: RecordedChunk = Object.freeze({ stored: [], announced: [] }) as RecordedChunk;

/** A window's predictions and embedding, from a classifier with or without an embedding output. */
const analyze = (c: Classifier, samples: Samples, opts: ClassifyOptions): Promise<WindowResult> =>
  c.analyze ? c.analyze(samples, opts) : c.classify(samples, opts).then((predictions) => ({ predictions, embedding: null }));

export function createInferenceHandler(deps: InferenceWorkerDeps) {
  const { storage, broker, live, log, detections } = deps;
  const waitMs = deps.windowWaitMs ?? DEFAULT_WINDOW_WAIT_MS;
  const recheckMs = deps.windowRecheckMs ?? DEFAULT_WINDOW_RECHECK_MS;
  // Looks bounded in real time as well, should the injected clock stand still.
  const maxWaits = Math.ceil(waitMs / recheckMs) + 1;

  // Jobs of one team in flight together share a read of its settings that is under way (one
  // read per batch, not per chunk, when the queue is deep); a job started after it ends reads again.
  const settingsReads = new Map<string, Promise<InferenceSettings>>();
  function settingsOf(tenantId: string): Promise<InferenceSettings> {
    let read = settingsReads.get(tenantId);
    if (!read) {
      read = readSettings(tenantId);
      settingsReads.set(tenantId, read);
      const forget = () => settingsReads.delete(tenantId);
      read.then(forget, forget);
    }
    return read;
  }

  async function readSettings(tenantId: string): Promise<InferenceSettings> {
    const v = await deps.settings?.teamSettings(tenantId);
    const num = (x: unknown, d: number) => (typeof x === 'number' && Number.isFinite(x) ? x : d);
    return {
      visibleCategories: v?.visible_categories ?? null,
      // Read with the other settings (one query); without a settings service, the recorder reads it.
      aggregation: v?.aggregation ?? null,
      model: typeof v?.inference_model === 'string' ? v.inference_model : null,
      sensitivity: num(v?.inference_sensitivity, DEFAULT_SENSITIVITY),
      minConfidence: deps.minConfidence ?? num(v?.inference_min_confidence, DEFAULT_MIN_CONFIDENCE),
      overlapMs: Math.round(1000 * num(v?.inference_overlap_sec, 0)),
      voiceThreshold: v?.remove_human_voice_audio === false ? null : num(v?.human_voice_threshold, DEFAULT_VOICE_THRESHOLD),
      range: rangeSettingsOf(v),
      observations: v ? observationRuleOf(v) : null,
    };
  }

  /** The classifier, and the species of its outputs where the species table maps them (else the catalog, below). */
  async function classifierFor(picked: string | null): Promise<{ id: string; classifier: Classifier; species?: readonly LabelSpecies[] }> {
    if (deps.loadClassifier) return { id: deps.modelId ?? BUILTIN_MODEL_ID, classifier: await deps.loadClassifier() };
    if (deps.models) return deps.models.forTeam(picked);
    return { id: BUILTIN_MODEL_ID, classifier: await builtinModel() };
  }

  /** Where a long window finds the chunks after its own and their audio. */
  const windowSource = (tenantId: string, satelliteId: string): WindowSource => ({
    following: (after, before) => detections.followingChunks(tenantId, satelliteId, after, before),
    samplesOf: async (key) => {
      const audio = await storage.get(key);
      return audio ? samplesOf(audio) : null;
    },
  });

  /** Enqueues the next look of a waiting window, after the recheck interval (one job id per look). */
  async function lookAgain(job: Job<ChunkOfJob>, chunk: Pick<ChunkToClassify, 'satelliteId' | 'storageKey'>): Promise<void> {
    const waits = (job.data.waits ?? 0) + 1;
    const { chunkId, tenantId } = job.data;
    const next: InferenceJob = { chunkId, tenantId, satelliteId: chunk.satelliteId, storageKey: chunk.storageKey, waits };
    await deps.queue.enqueue(INFERENCE_QUEUE, `${chunkId}.wait${waits}`, next, { delayMs: recheckMs });
  }

  // Jobs run side by side (startInferenceWorker's jobsInFlight) but record in the order they were taken.
  const order = inOrder();

  return async function handle(job: Job<ChunkOfJob>): Promise<RecordedChunk> {
    const place = order.take();
    try {
      return await classify(job, place);
    } finally {
      place.done();
    }
  };

  async function classify(job: Job<ChunkOfJob>, place: Place): Promise<RecordedChunk> {
    const { chunkId, tenantId } = job.data;
    // The team's settings are read while the chunk row is: each read is a round trip to the
    // database (its own thread or server), and the time between reads is time the model is idle
    // (docs/model.md "At BirdNET's size"). Unused when the chunk is gone or done.
    const settings = settingsOf(tenantId);
    settings.catch(() => undefined);
    const chunk = await detections.chunkToClassify(tenantId, chunkId);
    // The chunk was taken back (or its team or satellite deleted), or is classified already.
    if (!chunk) return NOTHING;
    if (chunk.done) {
      if (chunk.failed) await deps.failures?.recovered(tenantId, chunkId);
      return NOTHING;
    }

    // The audio is read while the settings are (neither needs the other).
    const [opts, wav] = await Promise.all([settings, storage.get(chunk.storageKey)]);
    if (!wav) {
      // Its audio was removed for a voice and the job stopped before recording: nothing more to hear.
      if (chunk.voiceRemoved) return recordHeard(job, place, chunk, BUILTIN_MODEL_ID, [], opts);
      throw new Error(`the audio of chunk ${chunkId} is not in storage`);
    }
    const samples = samplesOf(wav);
    // Voices are looked for below the minimum confidence when the team's threshold is lower.
    const floor = Math.min(opts.minConfidence, opts.voiceThreshold ?? 1);
    // Each window's best predictions; a species heard in several windows keeps its most confident one.
    const best = new Map<string, { p: Prediction; startMs: number; window: Window; embedding: Float32Array | null }>();
    let modelId: string;
    let speciesOf: ((p: Prediction) => LabelSpecies | undefined) | undefined;
    try {
      const model = await classifierFor(opts.model);
      modelId = model.id;
      speciesOf = model.species && ((p) => model.species![p.index]);
      modelOfJob.set(job, modelId);
      const plan = await windowsOf({
        chunk: { id: chunkId, ...chunk },
        samples,
        windowMs: (model.classifier.window ?? BIRDNET_WINDOW).windowMs,
        overlapMs: opts.overlapMs,
        source: windowSource(tenantId, chunk.satelliteId),
        now: deps.clock.now(),
        waitMs,
        lastLook: (job.data.waits ?? 0) >= maxWaits,
      });
      // The chunk after this one has not come yet: a later job looks again.
      if (plan.wait) {
        await lookAgain(job, chunk);
        return NOTHING;
      }
      for (const window of plan.windows) {
        const { predictions, embedding } = await analyze(model.classifier, window.samples, {
          sensitivity: opts.sensitivity,
          minConfidence: floor,
        });
        for (const p of predictions) {
          const prev = best.get(p.label);
          if (!prev || p.confidence > prev.p.confidence) best.set(p.label, { p, startMs: window.startMs, window, embedding });
        }
      }
    } catch (err) {
      throw new Error(`inference failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }

    const catalog = deps.catalog ?? speciesCatalog();
    const heard: HeardSpecies[] = [];
    const seen = new Set<string>();
    let voice = 0;
    for (const { p, startMs, window, embedding } of [...best.values()].sort((a, b) => b.p.confidence - a.p.confidence)) {
      // As the species table maps the model's labels; a classifier outside the model store maps
      // through the catalog the same way (labels it does not know keep their own names, model-store.ts).
      const species = speciesOf?.(p) ?? speciesOfLabel(catalog, p);
      if (species.category === 'human_voice') voice = Math.max(voice, p.confidence);
      if (p.confidence < opts.minConfidence || seen.has(species.speciesCode)) continue;
      seen.add(species.speciesCode);
      const { speciesCode, scientificName, commonName, category } = species;
      const { endMs, spanChunkIds, padded } = window;
      heard.push({
        speciesCode,
        scientificName,
        commonName,
        category,
        confidence: p.confidence,
        startMs,
        endMs,
        spanChunkIds,
        padded,
        embedding,
      });
    }
    await judgeRange(tenantId, chunk, heard, opts.range);
    // Voice privacy: the audio goes before anything is recorded, so no retry can find it playable.
    if (opts.voiceThreshold !== null && voice >= opts.voiceThreshold && deps.voicePrivacy) {
      await deps.voicePrivacy.removeVoiceAudio(tenantId, chunkId, deps.clock.now());
    }
    return recordHeard(job, place, chunk, modelId, heard, opts);
  }

  /**
   * The range filter: species out of range at the satellite that week are flagged, never dropped
   * (docs/model.md "Range filter"). A range model that fails flags nothing: the detections are
   * worth more than the flag.
   */
  async function judgeRange(tenantId: string, chunk: ChunkToClassify, heard: HeardSpecies[], settings: RangeSettings): Promise<void> {
    if (!deps.range || heard.length === 0) return;
    try {
      const position =
        chunk.latitude !== null && chunk.longitude !== null ? { latitude: chunk.latitude, longitude: chunk.longitude } : null;
      const verdicts = await deps.range.judge({
        tenantId,
        satelliteId: chunk.satelliteId,
        position,
        at: new Date(chunk.recordedAt),
        species: heard,
        settings,
      });
      for (const h of heard) {
        const v = verdicts.get(h.speciesCode);
        if (v) Object.assign(h, { outOfRange: v.outOfRange, rangeSource: v.source, rangeScore: v.score });
      }
    } catch (err) {
      log.warn({ err, tenantId }, 'inference: the range filter failed; the chunk is recorded unflagged');
    }
  }

  async function recordHeard(
    job: Job<ChunkOfJob>,
    place: Place,
    chunk: NonNullable<Awaited<ReturnType<DetectionRecorder['chunkToClassify']>>>,
    modelId: string,
    heard: HeardSpecies[],
    opts: InferenceSettings,
  ): Promise<RecordedChunk> {
    const { chunkId, tenantId } = job.data;
    await place.turn;
    await holdpoint('inference.before-record', () =>
      log.warn({ jobId: job.id, chunkId }, 'failpoint inference.before-record: holding the job'),
    );
    const recorded = await detections.recordChunk({
      tenantId,
      chunkId,
      chunk,
      modelId,
      heard,
      rule: opts.aggregation,
      visibleCategories: opts.visibleCategories,
      observations: opts.observations,
    });
    if (chunk.failed) await deps.failures?.recovered(tenantId, chunkId);
    // The next job may record now; the mark needs no turn, and marks that wait for each other go
    // to the database as one statement (audio service).
    place.done();
    await deps.classified?.markClassified(tenantId, chunkId, deps.clock.now());

    // After the commit: the satellite and the team's sockets hear of each detection recorded for
    // the Detections page (docs/decisions.md "Announcements").
    const outOfRange = new Set(recorded.outOfRange ?? []);
    for (const m of recorded.announced) {
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
      // Out of range: listed and flagged, but no alert rule hears of it (docs/decisions.md "Range filter").
      if (outOfRange.has(m.id)) continue;
      try {
        await deps.bus?.publish('detection.announced', { trigger: 'announced', detection: announcement(m, modelId) });
      } catch (err) {
        log.warn({ err, chunkId, detectionId: m.id }, 'inference: could not hand the detection to the alert rules');
      }
    }
    return recorded;
  }
}

/** Jobs a worker process runs side by side by default (INFERENCE_JOBS_IN_FLIGHT). */
export const DEFAULT_JOBS_IN_FLIGHT = 8;

/**
 * Starts the worker on the 'inference' queue. Several jobs run side by side: while one chunk's
 * model runs (on its own thread), the next chunks' rows and audio are read and the last one's
 * detections recorded; jobs waiting for the model together run as one batch when the model
 * allows it. Recording keeps the order the jobs were taken in (in-order.ts).
 */
export async function startInferenceWorker(deps: InferenceWorkerDeps, jobsInFlight = DEFAULT_JOBS_IN_FLIGHT): Promise<void> {
  const handle = createInferenceHandler(deps);
  await deps.queue.process<InferenceJob>(INFERENCE_QUEUE, jobsInFlight, async (job) => {
    const started = performance.now();
    const report = (status: 'completed' | 'failed', detections: number, error: string | null) => {
      deps.metrics?.inferenceJob(status, (performance.now() - started) / 1000);
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
    };
    try {
      const { stored } = await handle(job);
      report('completed', stored.length, null);
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      report('failed', 0, message);
      deps.log.warn({ err, jobId: job.id, attempt: job.attempt }, 'inference: job failed');
      // The last attempt: the queue gives up, the database remembers (re-driven and listed by src/modules/jobs).
      // A part that is away is no attempt: the queue runs the job again once it is back (PartUnavailable).
      if (job.attempt >= job.maxAttempts && !(err instanceof PartUnavailable)) {
        await deps.failures?.failed(job.data.tenantId, job.data.chunkId, message).catch((markErr: unknown) => {
          deps.log.warn({ err: markErr, jobId: job.id }, 'inference: could not mark the chunk as failed');
        });
      }
      throw err;
    }
  });
}
