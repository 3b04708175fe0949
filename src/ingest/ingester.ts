/**
 * The ingester (satellite protocol §4, DESIGN.md §5): subscribes to what satellites send, for all
 * teams and satellites, and turns it into rows, objects, jobs and acks.
 *
 * Audio is durable before acknowledged (DESIGN.md §1.4): the ack `stored` goes out only after the
 * object is written and the chunk row committed, and every step is idempotent on chunkId, so a
 * satellite that never saw its ack can send the chunk again without creating a second anything.
 *
 * A bad message never throws out of a handler and never stops the process: it is refused with a
 * warning (and, for audio, an error ack naming the reason).
 */
import type { Clock } from '../core/clock.ts';
import type { Broker } from '../infra/broker/index.ts';
import type { ObjectStorage } from '../infra/storage/index.ts';
import type { JobQueue } from '../infra/queue/index.ts';
import { ingestPattern, parseTopic, topicOf, type SatelliteChannel } from '../protocol/topics.ts';
import { type Actor, systemActor } from '../core/actor.ts';
import { AppError } from '../core/errors.ts';
import type { SettingsService } from '../modules/settings/service.ts';
import type { SatellitesService } from '../modules/satellites/service.ts';
import { OVERRIDE_FIELDS } from '../modules/satellites/remote-service.ts';
import { chunkStorageKey, type AudioService } from '../modules/audio/service.ts';
import type { DeviceService } from '../modules/satellites/device-service.ts';
import {
  checkAudio,
  checkConfigRequest,
  checkHeartbeat,
  checkIdentity,
  checkLogResponse,
  checkTelemetry,
  chunkIdOf,
  isUuid,
  parseAudioBody,
  parseBody,
} from '../protocol/messages.ts';
import { checkChunkWav } from '../protocol/wav.ts';
import { INFERENCE_QUEUE, type InferenceJob } from '../protocol/jobs.ts';
import { batched } from '../core/batch.ts';
import { failpoint } from '../core/failpoints.ts';
import { noMetrics, refusalKind, type Metrics } from '../infra/metrics/index.ts';

/** The channels this ingester takes (live-audio belongs to live listening). */
export const INGESTED_CHANNELS = [
  'audio',
  'telemetry',
  'heartbeat',
  'config-request',
  'log-response',
  'goodbye',
] as const satisfies readonly SatelliteChannel[];

export interface IngestLog {
  warn(obj: object, msg: string): void;
}

export interface IngesterDeps {
  clock: Clock;
  broker: Pick<Broker, 'publish' | 'subscribe' | 'suspend'>;
  storage: Pick<ObjectStorage, 'put' | 'delete'>;
  queue: Pick<JobQueue, 'enqueue'>;
  settings: Pick<SettingsService, 'write'>;
  satellites: Pick<SatellitesService, 'publishConfig'>;
  devices: Pick<
    DeviceService,
    'find' | 'recordHeartbeat' | 'recordTelemetry' | 'storeLogResponse' | 'recordDeviceRequest' | 'recordGoodbye'
  >;
  audio: Pick<AudioService, 'storeChunks' | 'ingestFacts'>;
  log: IngestLog;
  /** Chunks stored and refused, ack latency (GET /metrics); none by default. */
  metrics?: Pick<Metrics, 'chunkIngested' | 'chunkRefused'>;
}

/** What became of one message: done, refused (with the reason) or failed (a fault of ours). */
export interface HandledMessage {
  channel: (typeof INGESTED_CHANNELS)[number];
  tenantId: string;
  satelliteId: string;
  outcome: 'done' | 'refused' | 'failed';
  reason?: string;
}

export interface Ingester {
  /** Resolves once every subscription was granted; rejects when the broker refuses one. */
  readonly ready: Promise<void>;
  /** Listens to every handled message (tests wait on it instead of sleeping); returns the unsubscribe. */
  onHandled(listener: (m: HandledMessage) => void): () => void;
  /** Stops taking messages and waits for the ones being handled; resolves to how many there were. */
  stop(): Promise<number>;
}

/**
 * The ack (protocol §4). An error ack that only says "send again later" (a part of the hub is away,
 * the chunk is fine) also carries `retryable: true`, so a satellite backs off instead of counting
 * it toward giving up; satellites that do not know the field read the error as before.
 */
export type AckBody = { chunkId?: string; status: 'stored' } | { chunkId?: string; status: 'error'; error: string; retryable?: true };

/** Audit entries a satellite's own messages write (the settings writer adds its own). */
const DEVICE_AUDIT = [
  'device.satellite_config_requested',
  'device.satellite_config_rejected_locked',
  'device.satellite_unarchived_by_heartbeat',
  'admin.satellite_config_changed',
];

/**
 * The actor for what a satellite asks by itself: its team, with the role its own key carries
 * (member), so it cannot change what only team admins may change on a satellite.
 */
export function deviceActor(tenantId: string, satelliteId: string): Actor {
  return {
    ...systemActor(DEVICE_AUDIT),
    isPlatformAdmin: false,
    satelliteId,
    tenantId,
    role: 'member',
    teamId: tenantId,
    teamRole: 'member',
  };
}

class Refusal extends Error {}

export function startIngester(deps: IngesterDeps): Ingester {
  const { clock, broker, storage, queue, settings, satellites, devices, audio, log } = deps;
  const metrics = deps.metrics ?? noMetrics;
  // Chunks arriving together share one statement each for their facts and their rows (batch.ts).
  const storeChunk = batched(audio.storeChunks);
  const inFlight = new Set<Promise<void>>();
  const listeners = new Set<(m: HandledMessage) => void>();
  let stopped = false;

  function report(m: HandledMessage): void {
    for (const l of listeners) {
      try {
        l(m);
      } catch {
        // a listener's fault is not the message's
      }
    }
  }

  async function ack(tenantId: string, satelliteId: string, body: AckBody): Promise<void> {
    try {
      await broker.publish(topicOf(tenantId, satelliteId, 'ack'), JSON.stringify(body), { qos: 1 });
    } catch (err) {
      log.warn({ err, tenantId, satelliteId, chunkId: body.chunkId }, 'ingest: could not publish the ack');
    }
  }

  /** The satellite the topic names must exist in the team the topic names. */
  async function requireSatellite(tenantId: string, satelliteId: string) {
    const s = isUuid(tenantId) && isUuid(satelliteId) ? await devices.find(tenantId, satelliteId) : null;
    if (!s) throw new Refusal('unknown satellite');
    return s;
  }

  // ---------------------------------------------------------------------------------------------
  // audio

  async function onAudio(tenantId: string, satelliteId: string, payload: Buffer): Promise<void> {
    const arrived = performance.now();
    const parsed = parseAudioBody(payload);
    const body = parsed.ok ? parsed.value : null;
    const refuse = async (reason: string, from: Record<string, unknown> | null = body, retryable = false) => {
      const chunkId = chunkIdOf(from);
      metrics.chunkRefused(refusalKind(reason));
      await ack(tenantId, satelliteId, {
        ...(chunkId ? { chunkId } : {}),
        status: 'error',
        error: reason,
        ...(retryable ? { retryable: true as const } : {}),
      });
      throw new Refusal(reason);
    };
    /** A part of the hub is away, the chunk is fine: the satellite sends it again later. */
    const sendLater = (part: 'storage' | 'database' | 'queue') => refuse(`${part} unavailable, send again later`, body, true);
    if (!parsed.ok) return refuse(parsed.reason);
    const mismatch = checkIdentity(parsed.value, { tenantId, satelliteId });
    if (mismatch) return refuse(mismatch);
    const msg = checkAudio(parsed.value);
    if (!msg.ok) {
      // parseAudioBody leaves some bodies JSON.parse refuses to the base64 check: answer as for bad JSON.
      const exact = parseBody(payload);
      return exact.ok ? refuse(msg.reason) : refuse(exact.reason, null);
    }
    const chunk = msg.value;
    const wav = checkChunkWav(chunk.audio, chunk.durationMs);
    if (!wav.ok) return refuse(wav.reason);

    if (!isUuid(tenantId) || !isUuid(satelliteId)) return refuse('unknown satellite');
    // The ack echoes the chunkId as sent (the satellite matches its outbox row by it); rows,
    // objects and jobs use the canonical lower-case form, so every delivery lands on the same ones.
    const id = chunk.chunkId.toLowerCase();
    const tenant = tenantId.toLowerCase();
    const sat = satelliteId.toLowerCase();
    const storageKey = chunkStorageKey(tenantId, satelliteId, id, chunk.recordedAt);
    // 1. The object first, so a row never exists without its audio. A crash after this leaves an
    //    object without a row; the redelivery overwrites it with the same bytes and carries on.
    try {
      await storage.put(storageKey, chunk.audio, 'audio/wav');
    } catch (err) {
      log.warn({ err, tenantId, satelliteId, chunkId: id }, 'ingest: object storage failed');
      return sendLater('storage');
    }
    failpoint('ingest.after-object');
    /** Our object is nobody's audio: its key names our satellite and is not the row's key. */
    const dropObject = () => storage.delete(storageKey).catch(() => {});
    // 2. The row, checked and inserted in one statement (idempotent on chunkId).
    let r: { known: boolean; inserted: boolean; chunkTenantId: string | null; chunkSatelliteId: string | null; storageKey: string | null };
    try {
      r = await storeChunk({
        id,
        tenantId: tenant,
        satelliteId: sat,
        recordedAt: chunk.recordedAt,
        durationMs: chunk.durationMs,
        sampleRate: chunk.sampleRate,
        storageKey,
        bytes: chunk.audio.length,
        latitude: chunk.latitude,
        longitude: chunk.longitude,
        receivedAt: clock.now(),
      });
    } catch (err) {
      // The object stays: a failed answer is not a failed insert (the connection can drop after
      // the commit), and another dispatcher may hold a redelivery of this chunk whose row points
      // at the same key. The satellite's retry lands on the same key and finds or makes the row.
      log.warn({ err, tenantId, satelliteId, chunkId: id }, 'ingest: chunk row insert failed');
      return sendLater('database');
    }
    if (!r.known) {
      await dropObject();
      return refuse('unknown satellite');
    }
    if (!r.inserted) {
      // Stored before (the satellite missed our ack), or another delivery of it in this very batch
      // (then the statement saw no earlier row: look again).
      const before = r.chunkTenantId === null ? { ...(await audio.ingestFacts(tenant, sat, id)), storageKey: null } : r;
      if (before.chunkTenantId !== tenant || before.chunkSatelliteId !== sat) {
        await dropObject();
        return refuse(before.chunkTenantId === null ? 'unknown satellite' : 'chunkId is already used by another satellite');
      }
      if (before.storageKey !== null && before.storageKey !== storageKey) await dropObject();
      // Ours: the same answer, and the job as its first delivery enqueued it (enqueueing twice adds nothing).
    }
    // 3. The inference job (job id = chunkId, so enqueueing twice adds nothing). When the queue is
    //    away the row stays: the satellite's retry finds it and enqueues the job as any redelivery
    //    does (a hub started meanwhile re-enqueues it too, requeue.ts). Taking the row back was a
    //    race: another dispatcher holding a copy of this chunk could have seen our row, enqueued
    //    and acknowledged it, and the satellite forgets an acknowledged chunk.
    try {
      const job: InferenceJob = { chunkId: id, tenantId, satelliteId, storageKey };
      await queue.enqueue(INFERENCE_QUEUE, id, job);
    } catch (err) {
      log.warn({ err, tenantId, satelliteId, chunkId: id }, 'ingest: enqueueing inference failed');
      return sendLater('queue');
    }
    // 4. Only now: stored.
    await ack(tenantId, satelliteId, { chunkId: chunk.chunkId, status: 'stored' });
    metrics.chunkIngested((performance.now() - arrived) / 1000);
  }

  // ---------------------------------------------------------------------------------------------
  // the other channels: refusals are logged (there is no error channel back for them)

  async function bodyOf(tenantId: string, satelliteId: string, payload: Buffer): Promise<Record<string, unknown>> {
    const parsed = parseBody(payload);
    if (!parsed.ok) throw new Refusal(parsed.reason);
    const mismatch = checkIdentity(parsed.value, { tenantId, satelliteId });
    if (mismatch) throw new Refusal(mismatch);
    return parsed.value;
  }

  async function onHeartbeat(tenantId: string, satelliteId: string, payload: Buffer): Promise<void> {
    const body = await bodyOf(tenantId, satelliteId, payload);
    const hb = checkHeartbeat(body);
    if (!hb.ok) throw new Refusal(hb.reason);
    await requireSatellite(tenantId, satelliteId);
    await devices.recordHeartbeat(deviceActor(tenantId, satelliteId), tenantId, satelliteId, hb.value);
  }

  async function onTelemetry(tenantId: string, satelliteId: string, payload: Buffer): Promise<void> {
    const body = await bodyOf(tenantId, satelliteId, payload);
    const t = checkTelemetry(body, clock.now());
    if (!t.ok) throw new Refusal(t.reason);
    await requireSatellite(tenantId, satelliteId);
    await devices.recordTelemetry(tenantId, satelliteId, t.value);
  }

  /**
   * Config request → config push (protocol "Config push" rule 3). A non-empty overrides object
   * updates the satellite's own settings through the one settings writer (history source
   * `device`), unless an admin locked the device's config. Whatever happens, the satellite gets
   * its effective config back, so a refused change leaves it with the config it should run.
   */
  async function onConfigRequest(tenantId: string, satelliteId: string, payload: Buffer): Promise<void> {
    const body = await bodyOf(tenantId, satelliteId, payload);
    const req = checkConfigRequest(body);
    if (!req.ok) throw new Refusal(req.reason);
    const sat = await requireSatellite(tenantId, satelliteId);
    const actor = deviceActor(tenantId, satelliteId);
    const overrides = req.value.overrides;
    const keys = Object.keys(overrides);
    await devices.recordDeviceRequest(actor, {
      action: 'device.satellite_config_requested',
      tenantId,
      targetType: 'satellite',
      targetId: satelliteId,
      details: keys.length ? { overrides } : {},
    });
    let refused: string | null = null;
    try {
      if (keys.length > 0) {
        const unknown = keys.filter((k) => !(OVERRIDE_FIELDS as readonly string[]).includes(k));
        if (sat.configLocked) {
          await devices.recordDeviceRequest(actor, {
            action: 'device.satellite_config_rejected_locked',
            tenantId,
            targetType: 'satellite',
            targetId: satelliteId,
            details: { overrides },
          });
          refused = 'overrides refused: the config is locked';
        } else if (unknown.length) {
          refused = `overrides refused: not override fields: ${unknown.join(', ')}`;
        } else {
          try {
            await settings.write(actor, { level: 'satellite', tenantId, satelliteId }, { values: overrides }, { source: 'device' });
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            refused = `overrides refused: ${err.code} ${err.message}`;
          }
        }
      }
    } finally {
      await satellites.publishConfig(tenantId, satelliteId);
    }
    if (refused) throw new Refusal(refused);
  }

  async function onLogResponse(tenantId: string, satelliteId: string, payload: Buffer): Promise<void> {
    const body = await bodyOf(tenantId, satelliteId, payload);
    const r = checkLogResponse(body);
    if (!r.ok) throw new Refusal(r.reason);
    await requireSatellite(tenantId, satelliteId);
    const answered = await devices.storeLogResponse(tenantId, satelliteId, r.value.requestId, r.value.lines);
    if (!answered) throw new Refusal('no open log request');
  }

  /** A clean stop (a channel of ours, not the specification's): offline at once, until the next heartbeat. */
  async function onGoodbye(tenantId: string, satelliteId: string, payload: Buffer): Promise<void> {
    await bodyOf(tenantId, satelliteId, payload);
    await requireSatellite(tenantId, satelliteId);
    await devices.recordGoodbye(tenantId, satelliteId);
  }

  const HANDLERS: Record<(typeof INGESTED_CHANNELS)[number], (t: string, s: string, p: Buffer) => Promise<void>> = {
    audio: onAudio,
    goodbye: onGoodbye,
    heartbeat: onHeartbeat,
    telemetry: onTelemetry,
    'config-request': onConfigRequest,
    'log-response': onLogResponse,
  };

  function handle(channel: (typeof INGESTED_CHANNELS)[number]) {
    return (topic: string, payload: Buffer): void => {
      if (stopped) return;
      const t = parseTopic(topic);
      if (!t || t.channel !== channel) {
        log.warn({ topic }, 'ingest: message on an unexpected topic');
        return;
      }
      const base = { channel, tenantId: t.tenantId, satelliteId: t.satelliteId };
      const run = HANDLERS[channel](t.tenantId, t.satelliteId, payload).then(
        () => report({ ...base, outcome: 'done' }),
        async (err) => {
          const refused = err instanceof Refusal;
          log.warn(
            refused ? { topic, reason: err.message } : { topic, err },
            refused ? `ingest: ${channel} refused` : `ingest: ${channel} failed`,
          );
          report({ ...base, outcome: refused ? 'refused' : 'failed', reason: (err as Error)?.message });
          // An audio message always gets an answer, so the satellite's outbox knows to retry.
          if (channel === 'audio' && !refused) {
            const parsed = parseBody(payload);
            const chunkId = chunkIdOf(parsed.ok ? parsed.value : null);
            await ack(t.tenantId, t.satelliteId, {
              ...(chunkId ? { chunkId } : {}),
              status: 'error',
              error: 'the hub could not store the chunk, send again later',
              retryable: true,
            });
          }
        },
      );
      const tracked = run.catch(() => {}).finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    };
  }

  const ready = Promise.all(INGESTED_CHANNELS.map((channel) => broker.subscribe(ingestPattern(channel), handle(channel), { qos: 1 }))).then(
    () => undefined,
  );
  // The caller awaits ready; keep an unobserved rejection from ending the process.
  ready.catch(() => {});

  return {
    ready,
    onHandled(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async stop() {
      // Mosquitto: what arrives from now on stays on the broker for the next dispatcher, unacked.
      broker.suspend?.();
      stopped = true;
      const draining = inFlight.size;
      await Promise.allSettled([...inFlight]);
      return draining;
    },
  };
}
