/**
 * The reference satellite's protocol client (satellite protocol §2, §4, §8): it records chunks
 * from a source into the durable outbox and speaks MQTT 3.1.1 to the hub over TCP (mqtt://) or
 * WebSocket (ws://).
 *
 * - Connection: client id `satellite-{id}`, username = satellite id, password = the registration
 *   secret, clean session. mqtt.js's own reconnect is off: every connection is a fresh client,
 *   so nothing is re-sent behind the outbox's back; reconnects back off from `reconnectMs` up to
 *   `maxReconnectMs`.
 * - On every (re)connect: subscribe to the hub-to-satellite channels, send config-request
 *   {satelliteId, tenantId, overrides: {}}, a heartbeat and telemetry, then drain the outbox.
 * - Upload: unacked rows oldest-first, QoS 1, at most `maxInFlight` waiting for their ack
 *   (default 1, which keeps the hub's arrival order equal to recording order). An `ack`
 *   `stored` marks the row acked; `error` keeps the row with the reason (logged, counted, and
 *   retried after `errorRetryMs` and on the next reconnect, up to `maxErrorRetries` error acks:
 *   the hub's refusals include passing ones such as "storage unavailable, send again later"). A chunk whose ack does
 *   not come within `ackTimeoutMs` is sent again (the hub's ingest is idempotent on chunkId);
 *   after a reconnect, until the hub is heard from, within `reconnectAckTimeoutMs` (doubling).
 * - Recording goes on while disconnected: chunks wait in the outbox within its caps.
 * - Config push: applied at once (silence gate, outbox caps, heartbeat interval, gain, schedule)
 *   and kept in `<dataDir>/config.json` for the next start.
 * - Heartbeat every heartbeatIntervalSec with filterStats and outboxStats; telemetry on connect
 *   and every `telemetryIntervalMs`.
 * - log-request {requestId, tail} → log-response {requestId, satelliteId, tenantId, text, lines}:
 *   the last `tail` lines of this satellite's own journal, as newline-separated text and as an
 *   array.
 * - live-start [{sessionId}] starts (or keeps alive) a live session: a live-audio chunk (QoS 0,
 *   base64 WAV) every `liveIntervalMs` until live-stop or `liveTimeoutMs` (60 s) without a new
 *   live-start. The live feed is the chunk the recorder captured last when it is fresh, else a
 *   chunk of the synthetic soundscape (a recorder that is idle still has a microphone).
 * - update {targetVersion}: logged (the reference satellite does not update itself).
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { topicOf } from '../protocol/topics.ts';
import { BrokerConnection } from './connection.ts';
import { ConfigApplier, DEFAULT_CONFIG, effectiveCaps, loadSavedConfig } from './config.ts';
import type { LogLevel, SatelliteConfig, SatelliteContext, SatelliteState, SatelliteStatus } from './types.ts';
import { SilenceGate, loadFilterStats, type FilterStats } from './gate.ts';
import { Journal, answerLogRequest } from './journal.ts';
import { LiveAudio } from './live-audio.ts';
import { resolveOptions, type ResolvedOptions, type SatelliteOptions } from './options.ts';
import type { Eviction, Outbox } from './outbox.ts';
import { Recorder, type RecordOutcome } from './recorder.ts';
import { StatusReporter } from './status-reports.ts';
import { Uploader } from './uploader.ts';

// The client's public API, wherever each part lives.
export { DEFAULT_CONFIG, mergeConfig } from './config.ts';
export type { RecordingProfile, SatelliteConfig, SatelliteState } from './types.ts';
export { deviceIdOf } from './device-id.ts';
export { Journal } from './journal.ts';
export type { SatelliteCredentials, SatelliteOptions } from './options.ts';
export { isRecordingTime } from './recorder.ts';

/**
 * Events: connected, disconnected, connect-error (err), config (SatelliteConfig), recorded (row),
 * gated ({rms}), filtered ({reason, birdProb}: the sound classifier kept it back), sent (row), ack (raw body), acked (row), ack-error (chunkId, error),
 * evicted (Eviction[]), source-end, source-error (message), source-recovered (message), live-start (sessionId), live-keepalive (sessionId), live-audio (body), live-stop (reason),
 * log-request (body), update (targetVersion), detection (body).
 */
export class Satellite extends EventEmitter implements SatelliteStatus {
  readonly journal: Journal;
  readonly gate: SilenceGate;
  readonly outbox: Outbox;
  config: SatelliteConfig = DEFAULT_CONFIG;
  state: SatelliteState = 'recording';
  connected = false;
  sourceEnded = false;
  /** Distinct chunks acked `stored` since start. */
  ackedCount = 0;
  /** Chunks this run put into the outbox. */
  recordedCount = 0;
  /** Error acks since start. */
  errorAcks: Array<{ chunkId: string; error: string }> = [];

  private readonly o: ResolvedOptions;
  private readonly now: () => Date;
  private readonly ctx: SatelliteContext;
  private stopped = true;
  private offEvicted: (() => void) | null = null;
  private readonly connection: BrokerConnection;
  private readonly uploader: Uploader;
  private readonly recorder: Recorder;
  private readonly reports: StatusReporter;
  private readonly live: LiveAudio;
  private readonly configs: ConfigApplier;

  constructor(opts: SatelliteOptions) {
    super();
    this.o = resolveOptions(opts);
    this.now = () => this.o.clock.now();
    this.journal = new Journal(this.now, opts.logSink ?? null);
    this.outbox = opts.outbox;
    const saved = this.o.dataDir ? loadSavedConfig(this.file('config.json')) : null;
    if (saved) this.config = saved;
    const stats = this.o.dataDir ? loadFilterStats(this.file('filter-stats.json')) : undefined;
    this.gate = new SilenceGate({ filterEnabled: this.config.filterEnabled, filterMinRms: this.config.filterMinRms }, stats);

    const ctx: SatelliteContext = (this.ctx = {
      id: this.id,
      tenantId: this.tenantId,
      options: this.o,
      outbox: this.outbox,
      status: this,
      clock: this.o.clock,
      isStopped: () => this.stopped,
      log: (level, message) => this.log(level, message),
      emit: (event, ...args) => void this.emit(event, ...args),
      topic: (channel) => topicOf(this.tenantId, this.id, channel),
      file: (name) => this.file(name),
    });
    this.connection = new BrokerConnection(ctx, {
      message: (topic, payload) => void this.onMessage(topic, payload),
      prepare: () => this.uploader.requeueRefused(),
      ready: () => {
        void this.reports.heartbeat();
        void this.reports.telemetry();
        this.uploader.drain();
      },
      lost: () => {
        this.uploader.clearInFlight();
        this.uploader.reconnected();
        this.reports.cancel();
      },
    });
    this.uploader = new Uploader(ctx, this.connection);
    this.recorder = new Recorder(ctx, this.gate, () => this.uploader.drain());
    this.reports = new StatusReporter(ctx, this.gate, this.connection, () => this.uploader.uploadState());
    this.live = new LiveAudio(ctx, this.recorder, this.connection);
    this.configs = new ConfigApplier(ctx, this.gate, this.reports);
  }

  get id(): string {
    return this.o.credentials.satelliteId;
  }

  get tenantId(): string {
    return this.o.credentials.tenantId;
  }

  /** The address this satellite dials. */
  get url(): string {
    return this.connection.url;
  }

  get filterStats(): FilterStats {
    return { ...this.gate.stats };
  }

  get liveSession(): string | null | undefined {
    return this.live.session;
  }

  private file(name: string): string {
    return path.join(this.o.dataDir!, name);
  }

  private log(level: LogLevel, message: string) {
    this.journal.write(level, message);
  }

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.reports.markStarted();
    this.log(
      'info',
      `satellite ${this.id} (tenant ${this.tenantId}) version ${this.o.version} starting; source: ${this.o.source.description}`,
    );
    const pending = this.outbox.pending().length;
    if (pending) this.log('info', `outbox holds ${pending} unsent chunk(s) from before; they go first`);
    this.offEvicted = this.outbox.onEvicted((ev) => this.reportEvictions(ev));
    await this.outbox.setCaps(effectiveCaps(this.config, this.o.localCaps));
    this.o.source.start?.({
      failed: (message) => this.onSourceFailed(message),
      recovered: (message) => {
        this.log('info', `source recovered: ${message}`);
        this.emit('source-recovered', message);
      },
    });
    this.connection.connect();
    this.recorder.schedule();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.connection.cancelReconnect();
    this.recorder.cancel();
    this.reports.cancel();
    this.uploader.cancelRetries();
    this.live.stop('satellite stopping', false);
    await this.recorder.idle();
    await this.o.source.stop?.();
    this.uploader.clearInFlight();
    // Goodbye: the hub shows this satellite offline at once instead of after its offline
    // threshold (a channel of ours, protocol/topics.ts). Bounded in real time, as closing is.
    await Promise.race([
      this.connection.publish('goodbye', { satelliteId: this.id, tenantId: this.tenantId, timestamp: this.now().toISOString() }, 1),
      new Promise((r) => setTimeout(r, 2000)),
    ]);
    await this.connection.close();
    await this.outbox.flush();
    this.offEvicted?.();
    this.offEvicted = null;
    await this.reports.saveStats();
    this.log('info', 'satellite stopped');
  }

  /**
   * Captures one chunk now: through the schedule and the silence gate into the outbox.
   * Chunks are recorded one at a time, in order.
   */
  record(): Promise<RecordOutcome> {
    return this.recorder.record();
  }

  /** Sends one heartbeat now (and schedules the next). */
  heartbeat(): Promise<boolean> {
    return this.reports.heartbeat();
  }

  /** The capture process died or stalled (it restarts by itself): state error, and the hub hears it now. */
  private onSourceFailed(message: string): void {
    this.state = 'error';
    this.log('error', `source failed: ${message}`);
    this.emit('source-error', message);
    if (this.connected && !this.stopped) void this.reports.heartbeat();
  }

  /** How the capture process is doing (sources backed by arecord or ffmpeg), or null. */
  get sourceHealth() {
    return this.o.source.health?.() ?? null;
  }

  private reportEvictions(evicted: Eviction[]): void {
    if (!evicted.length) return;
    const by = new Map<string, number>();
    for (const e of evicted) by.set(`${e.reason}/${e.status}`, (by.get(`${e.reason}/${e.status}`) ?? 0) + 1);
    const unsent = evicted.filter((e) => e.status !== 'acked').length;
    this.log(
      unsent ? 'warn' : 'info',
      `outbox caps removed ${evicted.length} chunk(s) (${[...by].map(([k, n]) => `${k}: ${n}`).join(', ')})${unsent ? `; ${unsent} were never stored by the hub` : ''}`,
    );
    this.emit('evicted', evicted);
  }

  // ---------------------------------------------------------------- messages from the hub

  private async onMessage(topic: string, payload: Buffer): Promise<void> {
    const channel = topic.slice(topic.lastIndexOf('/') + 1);
    this.uploader.hubHeard();
    let body: Record<string, unknown> = {};
    if (payload.length) {
      try {
        const parsed: unknown = JSON.parse(payload.toString('utf8'));
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
        else throw new Error('not an object');
      } catch (err) {
        return this.log('warn', `unreadable ${channel} message: ${(err as Error).message}`);
      }
    }
    try {
      switch (channel) {
        case 'ack':
          return await this.uploader.onAck(body);
        case 'config':
          return await this.configs.apply(body);
        case 'live-start':
          return this.live.start(typeof body.sessionId === 'string' ? body.sessionId : null);
        case 'live-stop':
          return this.live.stop('live-stop from the hub', true);
        case 'log-request':
          return await answerLogRequest(this.ctx, this.journal, this.connection, body);
        case 'update':
          this.log(
            'info',
            `update requested: target version ${String(body.targetVersion)} (running ${this.o.version}); the reference satellite does not update itself`,
          );
          this.emit('update', body.targetVersion);
          return;
        case 'detection':
          this.log(
            'info',
            `detection: ${String(body.commonName ?? body.scientificName ?? '?')} (${String(body.confidence ?? '?')}) in chunk ${String(body.audioChunkId ?? '?')}`,
          );
          this.emit('detection', body);
          return;
        default:
          this.log('warn', `message on unexpected channel ${channel}`);
      }
    } catch (err) {
      this.log('error', `handling ${channel} failed: ${(err as Error).message}`);
    }
  }
}
