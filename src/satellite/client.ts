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
 *   not come within `ackTimeoutMs` is sent again (the hub's ingest is idempotent on chunkId).
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
import fs from 'node:fs';
import crypto from 'node:crypto';
import mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import { HUB_TO_SATELLITE, topicOf } from '../infra/broker/topics.ts';
import { HUB_VERSION } from '../modules/system/version.ts';
import { resolveSchedule } from '../modules/satellites/schedule.ts';
import type { ScheduleWindow } from '../modules/settings/registry.ts';
import { CHUNK_DURATION_MS, SAMPLE_RATE, applyGain, encodeWav } from './wav.ts';
import { capsFromConfig, freeBytes, writeFileDurable, type Eviction, type Outbox, type OutboxCaps, type OutboxRow } from './outbox.ts';
import { SilenceGate, loadFilterStats, saveFilterStats, type FilterStats } from './gate.ts';
import type { ChunkSource } from './sources.ts';
import { soundscapeChunk } from './soundscape.ts';

export interface SatelliteCredentials {
  satelliteId: string;
  tenantId: string;
  username: string;
  password: string;
  /** mqtt://host:port from the registration reply. */
  brokerUrl: string;
  /** ws://host:port/mqtt when the hub told it. */
  wsUrl?: string | null;
}

export interface RecordingProfile {
  type: string;
  schedule: ScheduleWindow[];
  sampleRate: number;
  chunkDurationMs: number;
  overlapMs: number;
  gain: number;
}

/** The config push body (satellite protocol §2), without the ids. */
export interface SatelliteConfig {
  recordingProfile: RecordingProfile;
  heartbeatIntervalSec: number;
  filterEnabled: boolean;
  filterMinRms: number;
  classifierMinBirdProb: number;
  excludedClassifierCategories: string[];
  outboxSoftSizeMb: number;
  outboxHardSizeMb: number;
  outboxMaxAgeHours: number;
  deviceInference: boolean;
}

/** Before the first push every field takes the registry default (config push rule 2). */
export const DEFAULT_CONFIG: SatelliteConfig = {
  recordingProfile: { type: 'continuous', schedule: [], sampleRate: SAMPLE_RATE, chunkDurationMs: CHUNK_DURATION_MS, overlapMs: 0, gain: 0 },
  heartbeatIntervalSec: 30,
  filterEnabled: true,
  filterMinRms: 0.003,
  classifierMinBirdProb: 0.1,
  excludedClassifierCategories: ['anthropogenic', 'human_voice', 'amphibian', 'insect', 'other_animal'],
  outboxSoftSizeMb: 512,
  outboxHardSizeMb: 1024,
  outboxMaxAgeHours: 168,
  deviceInference: false,
};

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A pushed body over the defaults: a field that is absent or of the wrong type keeps the default. */
export function mergeConfig(body: Record<string, unknown>, base: SatelliteConfig = DEFAULT_CONFIG): SatelliteConfig {
  const p = (body.recordingProfile ?? {}) as Record<string, unknown>;
  const bp = base.recordingProfile;
  return {
    recordingProfile: {
      type: typeof p.type === 'string' ? p.type : bp.type,
      schedule: Array.isArray(p.schedule) ? (p.schedule as ScheduleWindow[]) : bp.schedule,
      sampleRate: isNum(p.sampleRate) ? p.sampleRate : bp.sampleRate,
      chunkDurationMs: isNum(p.chunkDurationMs) ? p.chunkDurationMs : bp.chunkDurationMs,
      overlapMs: isNum(p.overlapMs) ? p.overlapMs : bp.overlapMs,
      gain: isNum(p.gain) ? p.gain : bp.gain,
    },
    heartbeatIntervalSec: isNum(body.heartbeatIntervalSec) && body.heartbeatIntervalSec > 0 ? body.heartbeatIntervalSec : base.heartbeatIntervalSec,
    filterEnabled: typeof body.filterEnabled === 'boolean' ? body.filterEnabled : base.filterEnabled,
    filterMinRms: isNum(body.filterMinRms) ? body.filterMinRms : base.filterMinRms,
    classifierMinBirdProb: isNum(body.classifierMinBirdProb) ? body.classifierMinBirdProb : base.classifierMinBirdProb,
    excludedClassifierCategories: Array.isArray(body.excludedClassifierCategories) ? body.excludedClassifierCategories.map(String) : base.excludedClassifierCategories,
    outboxSoftSizeMb: isNum(body.outboxSoftSizeMb) ? body.outboxSoftSizeMb : base.outboxSoftSizeMb,
    outboxHardSizeMb: isNum(body.outboxHardSizeMb) ? body.outboxHardSizeMb : base.outboxHardSizeMb,
    outboxMaxAgeHours: isNum(body.outboxMaxAgeHours) ? body.outboxMaxAgeHours : base.outboxMaxAgeHours,
    deviceInference: typeof body.deviceInference === 'boolean' ? body.deviceInference : base.deviceInference,
  };
}

/** Whether the recording profile records at `now` (continuous, or inside a schedule window). */
export function isRecordingTime(profile: RecordingProfile, now: Date, position: { latitude: number | null; longitude: number | null }): boolean {
  if (profile.type === 'continuous' || profile.schedule.length === 0) return true;
  let resolvable = 0;
  // Yesterday's windows too: a window may run past midnight.
  for (const offset of [-1, 0]) {
    const day = new Date(now.getTime() + offset * 86_400_000);
    const r = resolveSchedule({ profile: profile.type, windows: profile.schedule, latitude: position.latitude, longitude: position.longitude, day });
    for (const w of r.windows) {
      if (!w.startsAt || !w.endsAt) continue;
      resolvable++;
      if (now >= new Date(w.startsAt) && now < new Date(w.endsAt)) return true;
    }
  }
  // Sun-relative windows without a position cannot be placed: record rather than go deaf.
  return resolvable === 0;
}

/** The satellite's own journal: the last `capacity` lines, each also handed to `sink`. */
export class Journal {
  private readonly lines: string[] = [];

  constructor(
    private readonly now: () => Date,
    private readonly sink: ((line: string) => void) | null = null,
    private readonly capacity = 2000,
  ) {}

  write(level: 'info' | 'warn' | 'error', message: string): void {
    const line = `${this.now().toISOString()} ${level.padEnd(5)} ${message}`;
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
    this.sink?.(line);
  }

  tail(n: number): string[] {
    return n <= 0 ? [] : this.lines.slice(-n);
  }
}

export type SatelliteState = 'recording' | 'paused' | 'scheduled_off' | 'error';

export interface SatelliteOptions {
  credentials: SatelliteCredentials;
  source: ChunkSource;
  outbox: Outbox;
  /** Dial this instead of the registration's address. */
  url?: string;
  /** tcp (brokerUrl, default) or ws (wsUrl). */
  transport?: 'tcp' | 'ws';
  /** Where the pushed config and the filter counters persist (and whose free space telemetry reports). */
  dataDir?: string;
  clock?: { now(): Date };
  /** Receives every journal line (the CLI prints them). */
  logSink?: (line: string) => void;
  version?: string;
  latitude?: number | null;
  longitude?: number | null;
  /** Time between recorded chunks (default 3000 = real time). 0: only record() records. */
  chunkIntervalMs?: number;
  /** Overrides the pushed heartbeatIntervalSec (tests). */
  heartbeatIntervalMs?: number;
  telemetryIntervalMs?: number;
  reconnectMs?: number;
  maxReconnectMs?: number;
  ackTimeoutMs?: number;
  maxInFlight?: number;
  /** Error acks a chunk may get before it is no longer retried (default 3). */
  maxErrorRetries?: number;
  /** Wait before a refused chunk is sent again (default 60 s; also retried on every reconnect). */
  errorRetryMs?: number;
  /** Stop recording after this many chunks went into the outbox (the CLI's --chunks). */
  recordLimit?: number;
  liveIntervalMs?: number;
  liveTimeoutMs?: number;
  /** Device limits: the outbox uses the smaller of these and the pushed caps. */
  localCaps?: Partial<OutboxCaps>;
}

interface InFlight {
  timer: NodeJS.Timeout;
  sentAt: number;
}

const SUBSCRIPTIONS = HUB_TO_SATELLITE;

const OPTION_DEFAULTS = {
  clock: { now: () => new Date() } as { now(): Date },
  version: HUB_VERSION,
  chunkIntervalMs: CHUNK_DURATION_MS,
  heartbeatIntervalMs: 0,
  telemetryIntervalMs: 60_000,
  reconnectMs: 1000,
  maxReconnectMs: 30_000,
  ackTimeoutMs: 30_000,
  maxInFlight: 1,
  maxErrorRetries: 3,
  errorRetryMs: 60_000,
  recordLimit: Infinity,
  liveIntervalMs: CHUNK_DURATION_MS,
  liveTimeoutMs: 60_000,
};

/**
 * Events: connected, disconnected, connect-error (err), config (SatelliteConfig), recorded (row),
 * gated ({rms}), sent (row), ack (raw body), acked (row), ack-error (chunkId, error),
 * evicted (Eviction[]), source-end, live-start (sessionId), live-audio (body), live-stop (reason),
 * log-request (body), update (targetVersion), detection (body).
 */
export class Satellite extends EventEmitter {
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

  private readonly o: SatelliteOptions & typeof OPTION_DEFAULTS;
  private readonly now: () => Date;
  private client: MqttClient | null = null;
  private stopped = true;
  private startedAt = 0;
  private reconnectDelay: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private recordTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private telemetryTimer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Map<string, InFlight>();
  private draining = false;
  private drainRequested = false;
  private lastRecordedAt = 0;
  private lastLatencyMs: number | null = null;
  private recording: Promise<unknown> = Promise.resolve();
  private live: { sessionId: string | null; expires: NodeJS.Timeout; interval: NodeJS.Timeout; seq: number } | null = null;
  private lastCaptured: { wav: Buffer; recordedAt: Date; fresh: boolean } | null = null;
  private liveFeedIndex = 0;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private offEvicted: (() => void) | null = null;
  /** Chunks whose ack is being written to the outbox: not sent again meanwhile (a `stored` one is counted already). */
  private readonly settling = new Set<string>();

  constructor(opts: SatelliteOptions) {
    super();
    const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as SatelliteOptions;
    this.o = { ...OPTION_DEFAULTS, ...given };
    this.now = () => this.o.clock.now();
    this.journal = new Journal(this.now, opts.logSink ?? null);
    this.outbox = opts.outbox;
    this.reconnectDelay = this.o.reconnectMs;
    const saved = this.o.dataDir ? this.loadSavedConfig() : null;
    if (saved) this.config = saved;
    const stats = this.o.dataDir ? loadFilterStats(this.file('filter-stats.json')) : undefined;
    this.gate = new SilenceGate({ filterEnabled: this.config.filterEnabled, filterMinRms: this.config.filterMinRms }, stats);
  }

  get id(): string {
    return this.o.credentials.satelliteId;
  }

  get tenantId(): string {
    return this.o.credentials.tenantId;
  }

  /** The address this satellite dials. */
  get url(): string {
    if (this.o.url) return this.o.url;
    if (this.o.transport === 'ws') {
      if (!this.o.credentials.wsUrl) throw new Error('no WebSocket broker address known (pass --broker ws://host:port/mqtt)');
      return this.o.credentials.wsUrl;
    }
    return this.o.credentials.brokerUrl;
  }

  private file(name: string): string {
    return path.join(this.o.dataDir!, name);
  }

  private loadSavedConfig(): SatelliteConfig | null {
    try {
      return mergeConfig(JSON.parse(fs.readFileSync(this.file('config.json'), 'utf8')));
    } catch {
      return null;
    }
  }

  private log(level: 'info' | 'warn' | 'error', message: string) {
    this.journal.write(level, message);
  }

  private topic(channel: string) {
    return topicOf(this.tenantId, this.id, channel);
  }

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.startedAt = Date.now();
    this.log('info', `satellite ${this.id} (tenant ${this.tenantId}) version ${this.o.version} starting; source: ${this.o.source.description}`);
    const pending = this.outbox.pending().length;
    if (pending) this.log('info', `outbox holds ${pending} unsent chunk(s) from before; they go first`);
    this.offEvicted = this.outbox.onEvicted((ev) => this.reportEvictions(ev));
    await this.outbox.setCaps(this.effectiveCaps());
    this.connect();
    this.scheduleRecording();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of [this.reconnectTimer, this.recordTimer, this.heartbeatTimer, this.telemetryTimer, ...this.retryTimers]) if (t) clearTimeout(t);
    this.retryTimers.clear();
    this.reconnectTimer = this.recordTimer = this.heartbeatTimer = this.telemetryTimer = null;
    this.stopLive('satellite stopping', false);
    await this.recording.catch(() => {});
    this.clearInFlight();
    const client = this.client;
    this.client = null;
    this.connected = false;
    if (client) {
      await Promise.race([client.endAsync(false).catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
      client.end(true);
    }
    await this.outbox.flush();
    this.offEvicted?.();
    this.offEvicted = null;
    await this.saveStats();
    this.log('info', 'satellite stopped');
  }

  // ---------------------------------------------------------------- connection

  private connect(): void {
    if (this.stopped) return;
    let url: string;
    try {
      url = this.url;
    } catch (err) {
      this.log('error', (err as Error).message);
      this.emit('connect-error', err);
      return;
    }
    const client = mqtt.connect(url, {
      clientId: `satellite-${this.id}`,
      username: this.o.credentials.username,
      password: this.o.credentials.password,
      protocolVersion: 4,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
    });
    this.client = client;
    client.on('connect', () => {
      if (this.client === client) void this.onConnected(client);
    });
    client.on('message', (topic, payload) => {
      if (this.client === client) void this.onMessage(topic, payload);
    });
    client.on('error', (err) => {
      if (this.client !== client) return;
      this.log('warn', `broker ${url}: ${err.message}`);
      this.emit('connect-error', err);
    });
    client.on('close', () => this.onClosed(client));
  }

  private onClosed(client: MqttClient): void {
    if (this.client !== client) return;
    this.client = null;
    client.end(true);
    const was = this.connected;
    this.connected = false;
    this.clearInFlight();
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    if (this.telemetryTimer) clearTimeout(this.telemetryTimer);
    this.heartbeatTimer = this.telemetryTimer = null;
    if (was) {
      this.log('warn', 'disconnected from the broker; recording continues into the outbox');
      this.emit('disconnected');
    }
    if (this.stopped) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(this.o.maxReconnectMs, this.reconnectDelay * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  private async onConnected(client: MqttClient): Promise<void> {
    try {
      const granted = await client.subscribeAsync(Object.fromEntries(Object.entries(SUBSCRIPTIONS).map(([ch, qos]) => [this.topic(ch), { qos: qos as 0 | 1 | 2 }])));
      const refused = granted.filter((g) => g.qos === 128).map((g) => g.topic);
      if (refused.length) this.log('error', `broker refused subscriptions: ${refused.join(', ')}`);
      if (this.client !== client) return;
      this.connected = true;
      this.reconnectDelay = this.o.reconnectMs;
      this.log('info', `connected to ${this.url}`);
      await client.publishAsync(this.topic('config-request'), JSON.stringify({ satelliteId: this.id, tenantId: this.tenantId, overrides: {} }), { qos: 1 });
      const requeued = await this.outbox.requeueErrors(this.o.maxErrorRetries);
      if (requeued) this.log('info', `retrying ${requeued} chunk(s) the hub refused before`);
      this.emit('connected');
      void this.heartbeat();
      void this.telemetry();
      this.drain();
    } catch (err) {
      if (this.client === client) this.log('warn', `connection setup failed: ${(err as Error).message}`);
    }
  }

  private clearInFlight(): void {
    for (const f of this.inFlight.values()) clearTimeout(f.timer);
    this.inFlight.clear();
  }

  /** Publishes on one of this satellite's channels; false when not connected or the broker failed. */
  private async publish(channel: string, body: unknown, qos: 0 | 1): Promise<boolean> {
    const client = this.client;
    if (!client || !this.connected) return false;
    try {
      const t0 = Date.now();
      await client.publishAsync(this.topic(channel), JSON.stringify(body), { qos });
      if (qos === 1) this.lastLatencyMs = Date.now() - t0;
      return true;
    } catch (err) {
      this.log('warn', `publish on ${channel} failed: ${(err as Error).message}`);
      return false;
    }
  }

  // ---------------------------------------------------------------- recording

  private scheduleRecording(): void {
    if (this.stopped || this.sourceEnded || this.o.chunkIntervalMs <= 0 || this.recordedCount >= this.o.recordLimit) return;
    this.recordTimer = setTimeout(() => {
      this.recordTimer = null;
      void this.record()
        .catch((err) => this.log('error', `recording failed: ${(err as Error).message}`))
        .finally(() => this.scheduleRecording());
    }, this.o.chunkIntervalMs);
  }

  /**
   * Captures one chunk now: through the schedule and the silence gate into the outbox.
   * Chunks are recorded one at a time, in order.
   */
  record(): Promise<'recorded' | 'gated' | 'scheduled_off' | 'end' | 'error'> {
    const run = this.recording.then(() => this.recordOne());
    this.recording = run.catch(() => {});
    return run;
  }

  private async recordOne(): Promise<'recorded' | 'gated' | 'scheduled_off' | 'end' | 'error'> {
    if (this.sourceEnded) return 'end';
    let chunk;
    try {
      chunk = this.o.source.next();
    } catch (err) {
      this.state = 'error';
      this.sourceEnded = true;
      this.log('error', `source failed: ${(err as Error).message}`);
      this.emit('source-end', err);
      return 'error';
    }
    if (!chunk) {
      this.sourceEnded = true;
      this.state = 'paused';
      this.log('info', `source exhausted (${this.o.source.description})`);
      this.emit('source-end');
      return 'end';
    }
    const now = this.now();
    // The chunk covers the 3 s that just ended; recordedAt strictly grows (the drain order).
    let at = now.getTime() - CHUNK_DURATION_MS;
    if (at <= this.lastRecordedAt) at = this.lastRecordedAt + 1;
    this.lastRecordedAt = at;
    const recordedAt = new Date(at);
    const samples = applyGain(chunk.samples, this.config.recordingProfile.gain);
    const wav = encodeWav(samples);
    this.lastCaptured = { wav, recordedAt, fresh: true };

    if (!isRecordingTime(this.config.recordingProfile, now, { latitude: this.o.latitude ?? null, longitude: this.o.longitude ?? null })) {
      if (this.state !== 'scheduled_off') this.log('info', 'outside the recording schedule: not recording');
      this.state = 'scheduled_off';
      return 'scheduled_off';
    }
    if (this.state === 'scheduled_off') this.log('info', 'recording window open: recording');
    this.state = 'recording';

    const verdict = this.gate.check(samples);
    if (!verdict.pass) {
      this.emit('gated', { rms: verdict.rms, origin: chunk.origin });
      return 'gated';
    }
    let row: OutboxRow;
    try {
      ({ row } = await this.outbox.add({
        recordedAt,
        wav,
        durationMs: CHUNK_DURATION_MS,
        sampleRate: SAMPLE_RATE,
        latitude: this.o.latitude ?? null,
        longitude: this.o.longitude ?? null,
      }));
    } catch (err) {
      // A full or broken disk: this chunk is lost, recording tries again with the next one.
      this.state = 'error';
      this.log('error', `outbox write failed, chunk lost: ${(err as Error).message}`);
      return 'error';
    }
    this.recordedCount++;
    this.emit('recorded', row);
    this.drain();
    return 'recorded';
  }

  private reportEvictions(evicted: Eviction[]): void {
    if (!evicted.length) return;
    const by = new Map<string, number>();
    for (const e of evicted) by.set(`${e.reason}/${e.status}`, (by.get(`${e.reason}/${e.status}`) ?? 0) + 1);
    const unsent = evicted.filter((e) => e.status !== 'acked').length;
    this.log(unsent ? 'warn' : 'info', `outbox caps removed ${evicted.length} chunk(s) (${[...by].map(([k, n]) => `${k}: ${n}`).join(', ')})${unsent ? `; ${unsent} were never stored by the hub` : ''}`);
    this.emit('evicted', evicted);
  }

  private effectiveCaps(): OutboxCaps {
    const pushed = capsFromConfig(this.config);
    const local = this.o.localCaps ?? {};
    return {
      softBytes: Math.min(pushed.softBytes, local.softBytes ?? Infinity),
      hardBytes: Math.min(pushed.hardBytes, local.hardBytes ?? Infinity),
      maxAgeMs: Math.min(pushed.maxAgeMs, local.maxAgeMs ?? Infinity),
    };
  }

  // ---------------------------------------------------------------- upload

  private drain(): void {
    this.drainRequested = true;
    if (this.draining) return;
    this.draining = true;
    void this.drainLoop()
      .catch((err) => this.log('error', `upload failed: ${(err as Error).message}`))
      .finally(() => {
        this.draining = false;
      });
  }

  private async drainLoop(): Promise<void> {
    while (this.drainRequested) {
      this.drainRequested = false;
      while (this.connected && !this.stopped && this.inFlight.size < this.o.maxInFlight) {
        const row = this.outbox.pending().find((r) => !this.inFlight.has(r.chunkId) && !this.settling.has(r.chunkId));
        if (!row) break;
        if (!(await this.send(row))) break;
      }
    }
  }

  private async send(row: OutboxRow): Promise<boolean> {
    const audio = await this.outbox.readAudio(row.chunkId);
    if (!audio) {
      if (this.outbox.get(row.chunkId)) await this.outbox.markError(row.chunkId, 'audio file missing from the outbox');
      return true;
    }
    const client = this.client;
    if (!client || !this.connected) return false;
    const body = {
      chunkId: row.chunkId,
      satelliteId: this.id,
      tenantId: this.tenantId,
      recordedAt: row.recordedAt,
      durationMs: row.durationMs,
      sampleRate: row.sampleRate,
      ...(row.latitude !== null && row.longitude !== null ? { latitude: row.latitude, longitude: row.longitude } : {}),
      audio: audio.toString('base64'),
    };
    const timer = setTimeout(() => {
      if (!this.inFlight.delete(row.chunkId)) return;
      this.log('warn', `no ack for chunk ${row.chunkId} within ${this.o.ackTimeoutMs} ms; sending it again`);
      this.drain();
    }, this.o.ackTimeoutMs);
    this.inFlight.set(row.chunkId, { timer, sentAt: Date.now() });
    client.publish(this.topic('audio'), JSON.stringify(body), { qos: 1 }, (err) => {
      if (err && this.client === client) this.log('warn', `audio ${row.chunkId}: ${err.message}`);
    });
    this.emit('sent', row);
    return true;
  }

  private async onAck(body: Record<string, unknown>): Promise<void> {
    const chunkId = typeof body.chunkId === 'string' ? body.chunkId : null;
    if (!chunkId) return this.log('warn', 'ack without chunkId ignored');
    this.emit('ack', body);
    const f = this.inFlight.get(chunkId);
    if (f) {
      clearTimeout(f.timer);
      this.inFlight.delete(chunkId);
    }
    if (body.status === 'stored') {
      const row = this.outbox.get(chunkId);
      // Counted at once, so "nothing pending" never runs ahead of the count.
      if (!row || row.status === 'acked' || this.settling.has(chunkId)) return this.drain();
      this.settling.add(chunkId);
      this.ackedCount++;
      try {
        await this.outbox.markAcked(chunkId);
      } finally {
        this.settling.delete(chunkId);
      }
      this.emit('acked', { ...row, status: 'acked' });
    } else {
      const error = typeof body.error === 'string' && body.error ? body.error : `status ${String(body.status)}`;
      this.log('error', `hub refused chunk ${chunkId}: ${error}`);
      this.errorAcks.push({ chunkId, error });
      this.settling.add(chunkId);
      try {
        await this.outbox.markError(chunkId, error);
      } finally {
        this.settling.delete(chunkId);
      }
      this.emit('ack-error', chunkId, error);
      if ((this.outbox.get(chunkId)?.errorCount ?? Infinity) < this.o.maxErrorRetries) {
        const timer = setTimeout(() => {
          this.retryTimers.delete(timer);
          void this.outbox
            .requeueErrors(this.o.maxErrorRetries)
            .then(() => this.drain())
            .catch((err) => this.log('error', `requeueing refused chunks failed: ${(err as Error).message}`));
        }, this.o.errorRetryMs);
        this.retryTimers.add(timer);
      }
    }
    this.drain();
  }

  // ---------------------------------------------------------------- messages from the hub

  private async onMessage(topic: string, payload: Buffer): Promise<void> {
    const channel = topic.slice(topic.lastIndexOf('/') + 1);
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
          return await this.onAck(body);
        case 'config':
          return await this.applyConfig(body);
        case 'live-start':
          return this.startLive(typeof body.sessionId === 'string' ? body.sessionId : null);
        case 'live-stop':
          return this.stopLive('live-stop from the hub', true);
        case 'log-request':
          return await this.answerLogRequest(body);
        case 'update':
          this.log('info', `update requested: target version ${String(body.targetVersion)} (running ${this.o.version}); the reference satellite does not update itself`);
          this.emit('update', body.targetVersion);
          return;
        case 'detection':
          this.log('info', `detection: ${String(body.commonName ?? body.scientificName ?? '?')} (${String(body.confidence ?? '?')}) in chunk ${String(body.audioChunkId ?? '?')}`);
          this.emit('detection', body);
          return;
        default:
          this.log('warn', `message on unexpected channel ${channel}`);
      }
    } catch (err) {
      this.log('error', `handling ${channel} failed: ${(err as Error).message}`);
    }
  }

  private async applyConfig(body: Record<string, unknown>): Promise<void> {
    if ((body.satelliteId && body.satelliteId !== this.id) || (body.tenantId && body.tenantId !== this.tenantId)) {
      return this.log('warn', 'config for another satellite ignored');
    }
    const previous = this.config;
    const next = mergeConfig(body);
    this.config = next;
    this.gate.configure({ filterEnabled: next.filterEnabled, filterMinRms: next.filterMinRms });
    await this.outbox.setCaps(this.effectiveCaps());
    if (previous.heartbeatIntervalSec !== next.heartbeatIntervalSec && this.connected) this.scheduleHeartbeat();
    if (next.recordingProfile.overlapMs && next.recordingProfile.overlapMs !== previous.recordingProfile.overlapMs) {
      this.log('info', `overlapMs ${next.recordingProfile.overlapMs} noted; the reference satellite records back-to-back chunks`);
    }
    this.log(
      'info',
      `config applied: profile ${next.recordingProfile.type}, gain ${next.recordingProfile.gain} dB, heartbeat ${next.heartbeatIntervalSec} s, ` +
        `silence gate ${next.filterEnabled ? `on at RMS ${next.filterMinRms}` : 'off'}, outbox ${next.outboxSoftSizeMb}/${next.outboxHardSizeMb} MB, ${next.outboxMaxAgeHours} h`,
    );
    if (this.o.dataDir) await writeFileDurable(this.file('config.json'), JSON.stringify(next)).catch((err) => this.log('warn', `saving config: ${(err as Error).message}`));
    this.emit('config', next);
  }

  private async answerLogRequest(body: Record<string, unknown>): Promise<void> {
    const requestId = typeof body.requestId === 'string' ? body.requestId : null;
    const tail = Number.isInteger(body.tail) && (body.tail as number) > 0 ? Math.min(body.tail as number, 10_000) : 100;
    this.log('info', `log request ${requestId ?? '(no id)'}: sending the last ${tail} lines`);
    this.emit('log-request', body);
    const lines = this.journal.tail(tail);
    await this.publish('log-response', { requestId, satelliteId: this.id, tenantId: this.tenantId, text: lines.join('\n'), lines }, 1);
  }

  // ---------------------------------------------------------------- heartbeat and telemetry

  private heartbeatMs(): number {
    return this.o.heartbeatIntervalMs > 0 ? this.o.heartbeatIntervalMs : this.config.heartbeatIntervalSec * 1000;
  }

  private scheduleHeartbeat(): void {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatTimer = null;
      void this.heartbeat();
    }, this.heartbeatMs());
  }

  private uptimeSeconds(): number {
    return Math.floor((Date.now() - this.startedAt) / 1000);
  }

  /** Sends one heartbeat now (and schedules the next). */
  async heartbeat(): Promise<boolean> {
    if (this.connected) this.scheduleHeartbeat();
    await this.saveStats();
    return this.publish(
      'heartbeat',
      {
        satelliteId: this.id,
        tenantId: this.tenantId,
        uptimeSeconds: this.uptimeSeconds(),
        state: this.state,
        noiseFloorRms: this.gate.noiseFloorRms,
        version: this.o.version,
        stream: 'satellite',
        timestamp: this.now().toISOString(),
        filterStats: { ...this.gate.stats },
        outboxStats: await this.outbox.stats(),
      },
      1,
    );
  }

  private async telemetry(): Promise<boolean> {
    if (this.telemetryTimer) clearTimeout(this.telemetryTimer);
    if (this.connected) {
      this.telemetryTimer = setTimeout(() => {
        this.telemetryTimer = null;
        void this.telemetry();
      }, this.o.telemetryIntervalMs);
    }
    return this.publish(
      'telemetry',
      {
        satelliteId: this.id,
        tenantId: this.tenantId,
        batteryLevel: null,
        storageFreeBytes: freeBytes(this.o.dataDir ?? this.outbox.dir),
        cpuTemp: cpuTemp(),
        networkLatencyMs: this.lastLatencyMs,
        packetLossPct: null,
        uptimeSeconds: this.uptimeSeconds(),
        timestamp: this.now().toISOString(),
      },
      1,
    );
  }

  private async saveStats(): Promise<void> {
    if (!this.o.dataDir) return;
    await saveFilterStats(this.file('filter-stats.json'), this.gate.stats).catch((err) => this.log('warn', `saving filter stats: ${(err as Error).message}`));
  }

  get filterStats(): FilterStats {
    return { ...this.gate.stats };
  }

  // ---------------------------------------------------------------- live audio

  get liveSession(): string | null | undefined {
    return this.live ? this.live.sessionId : undefined;
  }

  private startLive(sessionId: string | null): void {
    if (this.live) {
      clearTimeout(this.live.expires);
      this.live.expires = setTimeout(() => this.stopLive(this.lapsed(), true), this.o.liveTimeoutMs);
      if (sessionId) this.live.sessionId = sessionId;
      return;
    }
    this.log('info', sessionId ? `live session ${sessionId} started` : 'live session started');
    this.live = {
      sessionId,
      seq: 0,
      expires: setTimeout(() => this.stopLive(this.lapsed(), true), this.o.liveTimeoutMs),
      interval: setInterval(() => void this.sendLive(), this.o.liveIntervalMs),
    };
    this.emit('live-start', sessionId);
    void this.sendLive();
  }

  private lapsed(): string {
    const ms = this.o.liveTimeoutMs;
    return `no keepalive (live-start) for ${ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`}`;
  }

  private stopLive(reason: string, log: boolean): void {
    if (!this.live) return;
    clearTimeout(this.live.expires);
    clearInterval(this.live.interval);
    this.live = null;
    if (log) this.log('info', `live session ended: ${reason}`);
    this.emit('live-stop', reason);
  }

  private liveBusy = false;

  private async sendLive(): Promise<void> {
    const live = this.live;
    if (!live || this.liveBusy) return; // a slow link skips a beat rather than piling chunks up
    this.liveBusy = true;
    try {
      await this.sendLiveChunk(live);
    } finally {
      this.liveBusy = false;
    }
  }

  private async sendLiveChunk(live: NonNullable<Satellite['live']>): Promise<void> {
    let wav: Buffer;
    let recordedAt: Date;
    if (this.lastCaptured?.fresh) {
      this.lastCaptured.fresh = false;
      ({ wav, recordedAt } = this.lastCaptured);
    } else {
      wav = encodeWav(soundscapeChunk(0x11fe, this.liveFeedIndex++).samples);
      recordedAt = new Date(this.now().getTime() - CHUNK_DURATION_MS);
    }
    const body = {
      satelliteId: this.id,
      tenantId: this.tenantId,
      sessionId: live.sessionId,
      seq: live.seq++,
      recordedAt: recordedAt.toISOString(),
      durationMs: CHUNK_DURATION_MS,
      sampleRate: SAMPLE_RATE,
      audio: wav.toString('base64'),
    };
    if (await this.publish('live-audio', body, 0)) this.emit('live-audio', body);
  }
}

function cpuTemp(): number | null {
  try {
    const milli = Number(fs.readFileSync('/sys/class/thermal/thermal_zone0/temp', 'utf8').trim());
    return Number.isFinite(milli) ? milli / 1000 : null;
  } catch {
    return null;
  }
}

/** A stable device id for re-registration (kept in the data dir). */
export function deviceIdOf(dataDir: string): string {
  const file = path.join(dataDir, 'device-id');
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (id) return id;
  } catch {
    // first start
  }
  const id = `chorus-ref-${crypto.randomUUID()}`;
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}
