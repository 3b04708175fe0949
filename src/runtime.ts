import type { Services } from './services.ts';
import type { Infra } from './infra/types.ts';
import { startConfigPusher } from './ingest/config-pusher.ts';
import { startBrokerCommandExecutor } from './infra/broker/bus-broker.ts';
import { startLiveRelay } from './modules/live/relay.ts';
import { startIngester, type Ingester } from './ingest/ingester.ts';
import { startOfflineMonitor, type OfflineMonitor } from './ingest/offline-monitor.ts';
import { requeueRecentChunks } from './ingest/requeue.ts';
import { REDRIVE_INTERVAL_MS } from './modules/jobs/service.ts';
import { startInferenceWorker } from './inference/worker.ts';
import { startTentativeSweeper } from './modules/detections/aggregation.ts';
import { startPartitionMaintainer } from './modules/detections/partitions.ts';
import { createModelStore } from './modules/models/model-store.ts';
import { createWorkerReporter } from './modules/workers/reporter.ts';
import { createLabelSpecies } from './modules/species/catalog-sync.ts';
import { speciesCatalog } from './modules/species/catalog.ts';
import { createServiceRegistration, type ServiceRegistration } from './modules/system/registry.ts';
import { INFERENCE_QUEUE } from './protocol/jobs.ts';

const ms = (start: number) => Math.round(performance.now() - start);

/** The stop function, with what callers may wait for or drive (tests tick the offline monitor). */
export type Runtime = (() => Promise<void>) & {
  /** Resolves once the ingester's subscriptions are granted (rejects when the broker refuses one). */
  ready: Promise<void>;
  ingester: Ingester | null;
  offlineMonitor: OfflineMonitor | null;
  /** This process in the service registry (GET /system/status); tests call register() themselves. */
  registration: ServiceRegistration;
};

type RuntimeLog = {
  error: (obj: unknown, msg?: string) => void;
  warn?: (obj: object, msg: string) => void;
  info?: (obj: object, msg: string) => void;
};

/**
 * The background parts of a hub, by mode (DESIGN.md §3): what runs besides the HTTP API.
 * - full: everything below, in one process.
 * - dispatcher: holds the broker: config pusher, live relay (live-audio → bus), and the executor
 *   of the api instances' broker commands (bus → broker).
 * - api: HTTP + WebSocket; its broker commands go over the bus (src/infra/broker/bus-broker.ts);
 *   the live hub takes relayed audio and team events from the bus and runs the session timer.
 * Returns a function that stops them.
 */
export function startRuntime(infra: Infra, services: Services, log: RuntimeLog, opts: { timers?: boolean } = {}): Runtime {
  const stops: Array<() => void | Promise<void>> = [];
  const mode = infra.config.mode;
  const ready: Array<Promise<void>> = [];
  let ingester: Ingester | null = null;
  let offlineMonitor: OfflineMonitor | null = null;
  // Inference attempts this process ran, for its registry entry (details).
  const jobs = { completed: 0, failed: 0 };
  const inferenceMetrics = {
    inferenceJob: (outcome: 'completed' | 'failed', seconds: number) => {
      jobs[outcome] += 1;
      services.metrics.inferenceJob(outcome, seconds);
    },
  };
  if (mode === 'full' || mode === 'dispatcher') {
    stops.push(
      startConfigPusher({
        bus: infra.bus,
        publishConfig: services.satellites.publishConfig,
        onError: (err) => log.error({ err }, 'config push failed'),
      }),
    );
    const relay = startLiveRelay({ bus: infra.bus, broker: infra.broker, onError: (err) => log.error({ err }, 'live relay failed') });
    stops.push(relay);
    ready.push(relay.ready);
    // Ingest, offline monitor and inference-job recovery (issue 4 "Ingest").
    const ing = (ingester = startIngester({
      clock: infra.clock,
      broker: infra.broker,
      storage: infra.storage,
      queue: infra.queue,
      settings: services.settings,
      satellites: services.satellites,
      devices: services.devices,
      audio: services.audio,
      log: { warn: (obj, msg) => log.warn?.(obj, msg) },
      metrics: services.metrics,
    }));
    stops.push(() => ing.stop().then(() => undefined));
    ready.push(ing.ready);
    ing.ready.catch((err) => log.error({ err }, 'ingester: subscribing failed'));
    const monitor = (offlineMonitor = startOfflineMonitor({
      devices: services.devices,
      bus: infra.bus,
      clock: infra.clock,
      settings: services.settings,
      onError: (err) => log.error({ err }, 'offline monitor failed'),
    }));
    stops.push(() => monitor.stop());
    // Tentative detections past their team's retention (src/modules/detections/aggregation.ts).
    const sweeper = startTentativeSweeper({
      db: infra.db,
      clock: infra.clock,
      settings: services.settings,
      onError: (err) => log.error({ err }, 'tentative sweep failed'),
    });
    stops.push(() => sweeper.stop());
    // Monthly partitions of detections on PostgreSQL (issue 37): the months ahead, and a month for rows in the default one.
    const partitions = startPartitionMaintainer({
      db: infra.db,
      clock: infra.clock,
      timers: opts.timers !== false,
      onCreated: (created) => log.info?.({ created }, `detections: ${created} monthly partition${created === 1 ? '' : 's'} created`),
      onError: (err) => log.error({ err }, 'creating detection partitions failed'),
    });
    stops.push(() => partitions.stop());
    ready.push(partitions.ready);
    const requeueStart = performance.now();
    const requeued = requeueRecentChunks({ audio: services.audio, clock: infra.clock, queue: infra.queue }).then(
      (count) =>
        log.info?.(
          { requeued: count, ms: ms(requeueStart) },
          `start-up re-queue: ${count} unclassified chunk${count === 1 ? '' : 's'} of the last 24 hours offered to inference again`,
        ),
      (err) => log.error({ err }, 'requeueing recent chunks failed'),
    );
    stops.push(() => requeued.then(() => undefined));
    // Failed inference jobs (issue 21): re-driven with a bound once at start (retries asked for while
    // the hub was down) and every 5 minutes (src/modules/jobs/service.ts).
    const redrive = () =>
      services.jobs
        .redrive()
        .then((n) => {
          if (n > 0) log.info?.({ redriven: n }, `failed inference jobs: ${n} re-driven`);
          return n;
        })
        .catch((err) => {
          log.error({ err }, 're-driving failed inference jobs failed');
          return 0;
        });
    const firstRedrive = requeued.then(redrive);
    stops.push(() => firstRedrive.then(() => undefined));
    if (opts.timers !== false) {
      const timer = setInterval(() => void redrive(), REDRIVE_INTERVAL_MS);
      timer.unref();
      stops.push(() => clearInterval(timer));
    }
  }
  if (mode === 'full' || mode === 'worker') {
    // Inference (issue 5): each team's model loads on its first job and stays cached by model id;
    // the worker reports its counts through the kv store for GET /workers.
    const models = createModelStore({
      repo: services.models,
      storage: infra.storage,
      labelSpecies: createLabelSpecies(infra.db, speciesCatalog, infra.clock),
    });
    const reporter = createWorkerReporter({ kv: infra.kv, clock: infra.clock, warn: (obj, msg) => log.warn?.(obj, msg) });
    stops.push(
      () => reporter.stop(),
      () => models.close(),
      () => services.range.close(),
    );
    const worker = startInferenceWorker(
      {
        clock: infra.clock,
        detections: services.detections,
        storage: infra.storage,
        queue: infra.queue,
        broker: infra.broker,
        live: services.live,
        bus: infra.bus,
        models,
        settings: services.settings,
        reporter,
        failures: services.jobs,
        voicePrivacy: services.audio,
        classified: services.audio,
        range: services.range,
        metrics: inferenceMetrics,
        log: { warn: (obj, msg) => log.warn?.(obj, msg) },
        windowWaitMs: infra.config.inferenceWindowWaitMs,
        windowRecheckMs: infra.config.inferenceWindowRecheckMs,
      },
      infra.config.inferenceJobsInFlight,
    );
    ready.push(worker);
    worker.catch((err) => log.error({ err }, 'inference worker: starting failed'));
  }
  if (mode === 'dispatcher') {
    stops.push(
      startBrokerCommandExecutor({
        bus: infra.bus,
        broker: infra.broker,
        kv: infra.kv,
        onError: (err) => log.error({ err }, 'broker command from the api failed'),
      }),
    );
  }
  if (mode === 'full' || mode === 'api') {
    stops.push(services.live.start());
    // Alerting (issue 17): every api instance evaluates what the bus brings (the database keeps one
    // alert per event), takes delivery jobs, and runs the absence/trend schedule one minute at a time.
    const alerts = services.alerting.start({ schedule: opts.timers !== false });
    ready.push(alerts.then(() => undefined));
    stops.push(async () => (await alerts.catch(() => () => {}))());
    alerts.catch((err) => log.error({ err }, 'alerting: starting failed'));
    // Exports (issue 18): background export jobs, and scheduled exports once a minute (each
    // occurrence claimed in the database, so one process runs it) with the expired files swept.
    const exportJobs = services.exports.start();
    ready.push(exportJobs);
    exportJobs.catch((err) => log.error({ err }, 'exports: starting failed'));
    if (opts.timers !== false) {
      const timer = setInterval(() => {
        void services.scheduledExports
          .tick()
          .then((ran) => ran > 0 && log.info?.({ ran }, `scheduled exports: ${ran} run`))
          .catch((err) => log.error({ err }, 'scheduled exports failed'));
        void services.exports.sweep().catch((err) => log.error({ err }, 'sweeping expired exports failed'));
        // Audio retention (issue 22): the day's run once across processes, or one a stopped process left.
        void services.retention
          .tick()
          .then(
            (run) =>
              run &&
              log.info?.(
                { runId: run.id, status: run.status, chunksRemoved: run.chunksRemoved, bytesFreed: run.bytesFreed },
                `audio retention: run ${run.status}, ${run.chunksRemoved} chunks removed`,
              ),
          )
          .catch((err) => log.error({ err }, 'audio retention failed'));
      }, 60_000);
      timer.unref();
      stops.push(() => clearInterval(timer));
    }
    // A run in progress stops after its batch and is handed back for another process to finish.
    stops.push(() => services.retention.stop());
    // Species photos (issue 20): download and analysis workers; the queue's close stops them.
    const speciesImages = services.speciesImages.start();
    ready.push(speciesImages);
    speciesImages.catch((err) => log.error({ err }, 'species photos: starting failed'));
    // Search by sound (issue 35): each embedding model's HNSW index, built in the background.
    void services.similarity
      .prepare()
      .then((models) => models.length > 0 && log.info?.({ models }, 'search by sound: HNSW indexes ready'))
      .catch((err) => log.warn?.({ err }, 'search by sound: preparing the indexes failed (the first search builds them)'));
  }
  // Every process, whatever its mode, in the service registry (spec §8: entries live 30 s, rewritten every 10 s).
  const registration = createServiceRegistration({
    kv: infra.kv,
    clock: infra.clock,
    mode,
    timers: opts.timers !== false,
    warn: (obj, msg) => log.warn?.(obj, msg),
    details: async () => ({
      inferenceQueue: await infra.queue.counts(INFERENCE_QUEUE),
      ...(infra.broker.connectedClients ? { mqttClients: infra.broker.connectedClients() } : {}),
      ...(mode === 'full' || mode === 'worker' ? { inferenceJobs: { ...jobs } } : {}),
    }),
  });
  // Stopped last (stops run in reverse): the entry leaves once everything else has.
  stops.unshift(() => registration.stop());
  // Drain in order: ingest stops taking chunks and finishes what it holds (stored, acked, enqueued);
  // then the queue's workers finish their running jobs (inference, deliveries, exports) while the
  // model store, broker and database are still open; then the rest, registration last.
  const stop = async () => {
    let start = performance.now();
    if (ingester) {
      const inFlight = await ingester.stop();
      log.info?.({ step: 'ingest', inFlight, ms: ms(start) }, 'shutdown: ingest stopped taking chunks and finished its acks');
    }
    start = performance.now();
    const running = await infra.queue.counts(INFERENCE_QUEUE).then(
      (c) => c.active,
      () => null,
    );
    await infra.queue.close().catch((err) => log.error({ err }, 'shutdown: closing the queue failed'));
    log.info?.({ step: 'queue', inferenceRunning: running, ms: ms(start) }, 'shutdown: queue workers finished their running jobs');
    start = performance.now();
    for (const s of stops.reverse()) await s();
    log.info?.({ step: 'background', ms: ms(start) }, 'shutdown: background work stopped');
  };
  const allReady = Promise.all(ready).then(() => undefined);
  allReady.catch(() => {}); // reported above; a caller that awaits it still sees the rejection
  return Object.assign(stop, { ready: allReady, ingester, offlineMonitor, registration });
}
