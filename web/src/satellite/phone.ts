/**
 * A phone or laptop as a satellite (issue 38): the protocol client of src/satellite/client.ts
 * in a browser tab. Chunks go from the microphone through the silence gate into the IndexedDB
 * outbox, and from there to the hub over MQTT on WebSocket; heartbeats report the outbox; config
 * pushes set the gain, the gate, the heartbeat and the outbox caps; live-start makes every chunk
 * also go out on live-audio until live-stop or 60 s without a keepalive; log-request is answered
 * from the page's own journal; detections are shown.
 */
import { BrokerConnection, type Credentials } from './connection.ts';
import { Chunker, type Chunk } from './chunker.ts';
import { holdWakeLock, startCapture, watchPosition, type Capture } from './capture.ts';
import { MB, type Outbox } from './outbox.ts';
import { Uploader } from './uploader.ts';
import { CHUNK_DURATION_MS, SAMPLE_RATE, encodeWav, rms, toBase64 } from './wav.ts';

/** What this client calls itself in heartbeats (stream `mobile`). */
export const BROWSER_SATELLITE_VERSION = '0.1.0';
const LIVE_TIMEOUT_MS = 60_000;
const JOURNAL_LINES = 500;
const SHOWN_DETECTIONS = 10;

export interface PhoneConfig {
  gainDb: number;
  heartbeatIntervalSec: number;
  filterEnabled: boolean;
  filterMinRms: number;
}

export interface Detection {
  id: string;
  commonName: string;
  scientificName: string;
  confidence: number;
  detectedAt: string;
}

/** What the page shows. */
export interface PhoneStatus {
  recording: boolean;
  connected: boolean;
  /** Chunks waiting in the outbox for the hub. */
  queue: number;
  /** The last frame's RMS, 0..1. */
  level: number;
  recorded: number;
  acked: number;
  position: { latitude: number; longitude: number } | null;
  wakeLock: boolean;
  live: boolean;
  detections: Detection[];
  lastMessage: string | null;
}

const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

export class PhoneSatellite {
  private readonly connection: BrokerConnection;
  private readonly uploader: Uploader;
  private config: PhoneConfig = { gainDb: 0, heartbeatIntervalSec: 30, filterEnabled: true, filterMinRms: 0.003 };
  private capture: Capture | null = null;
  private chunker: Chunker | null = null;
  private position: ReturnType<typeof watchPosition> | null = null;
  private wake: { release(): void } | null = null;
  private heartbeatTimer: ReturnType<typeof setInterval> | null = null;
  private live: { sessionId: string | null; seq: number; timer: ReturnType<typeof setTimeout> } | null = null;
  private readonly journal: string[] = [];
  private readonly startedAt = Date.now();
  private writing: Promise<unknown> = Promise.resolve();
  private noiseFloor = 0;
  private readonly filterStats = { totalProcessed: 0, totalSent: 0, rejectedSilence: 0 };
  private readonly status: PhoneStatus;

  constructor(
    private readonly creds: Credentials,
    private readonly outbox: Outbox,
    private readonly onStatus: (s: PhoneStatus) => void,
  ) {
    this.status = {
      recording: false,
      connected: false,
      queue: outbox.size,
      level: 0,
      recorded: 0,
      acked: 0,
      position: null,
      wakeLock: false,
      live: false,
      detections: [],
      lastMessage: null,
    };
    const log = (level: 'info' | 'warn' | 'error', message: string) => this.log(level, message);
    this.connection = new BrokerConnection(creds, {
      message: (channel, body) => void this.onMessage(channel, body),
      ready: () => {
        this.changed();
        void this.heartbeat();
        void this.telemetry();
        this.scheduleHeartbeat();
        void this.uploader.connected();
      },
      lost: () => {
        this.uploader.lost();
        this.changed();
      },
      log,
    });
    this.uploader = new Uploader(creds, outbox, this.connection, log, () => this.changed());
  }

  get id(): string {
    return this.creds.satelliteId;
  }

  /** Connects (the outbox drains even before recording starts: chunks from an earlier visit go first). */
  connect(): void {
    this.connection.start();
  }

  async startRecording(): Promise<void> {
    if (this.capture) return;
    this.position = watchPosition((m) => this.log('warn', `position: ${m}`));
    this.wake = holdWakeLock((held) => {
      this.status.wakeLock = held;
      this.changed();
    });
    const capture = await startCapture((frame) => this.onFrame(frame));
    this.capture = capture;
    this.chunker = new Chunker(capture.sampleRate, (chunk) => {
      this.writing = this.writing.then(() => this.onChunk(chunk)).catch((err) => this.log('error', `outbox: ${(err as Error).message}`));
    });
    this.status.recording = true;
    this.log('info', `recording at ${capture.sampleRate} Hz, resampled to ${SAMPLE_RATE} Hz`);
    this.changed();
    if (this.connection.connected) void this.heartbeat();
  }

  async stopRecording(): Promise<void> {
    const capture = this.capture;
    this.capture = null;
    this.chunker = null;
    this.position?.stop();
    this.wake?.release();
    this.wake = null;
    this.status.recording = false;
    this.status.wakeLock = false;
    this.status.level = 0;
    await capture?.stop();
    this.changed();
    if (this.connection.connected) void this.heartbeat();
  }

  /** Leaves the page: says goodbye so the hub shows this satellite offline at once. */
  async close(): Promise<void> {
    await this.stopRecording();
    this.stopLive();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.uploader.stop();
    await Promise.race([
      this.connection.publish('goodbye', { satelliteId: this.id, tenantId: this.creds.tenantId, timestamp: new Date().toISOString() }, 1),
      new Promise((r) => setTimeout(r, 1000)),
    ]);
    await this.connection.stop();
  }

  private onFrame(frame: Float32Array): void {
    this.status.level = rms(frame) * Math.pow(10, this.config.gainDb / 20);
    this.chunker?.push(frame);
    this.changed();
  }

  private async onChunk(chunk: Chunk): Promise<void> {
    const level = rms(chunk.samples);
    this.noiseFloor = this.noiseFloor === 0 ? level : Math.min(level, this.noiseFloor * 0.9 + level * 0.1);
    this.filterStats.totalProcessed++;
    const wav = encodeWav(chunk.samples, this.config.gainDb);
    if (this.live) this.publishLive(wav, chunk.recordedAt);
    if (this.config.filterEnabled && level * Math.pow(10, this.config.gainDb / 20) < this.config.filterMinRms) {
      this.filterStats.rejectedSilence++;
      return;
    }
    const fix = this.position?.latest() ?? null;
    this.status.position = fix;
    await this.outbox.add({
      chunkId: crypto.randomUUID(),
      recordedAt: chunk.recordedAt,
      wav,
      durationMs: CHUNK_DURATION_MS,
      sampleRate: SAMPLE_RATE,
      latitude: fix?.latitude ?? null,
      longitude: fix?.longitude ?? null,
    });
    this.filterStats.totalSent++;
    this.status.recorded++;
    this.changed();
    this.uploader.drain();
  }

  private async onMessage(channel: string, body: Record<string, unknown>): Promise<void> {
    this.uploader.hubHeard();
    switch (channel) {
      case 'ack':
        return this.uploader.onAck(body);
      case 'config':
        return this.applyConfig(body);
      case 'live-start':
        return this.startLive(typeof body.sessionId === 'string' ? body.sessionId : null);
      case 'live-stop':
        return this.stopLive();
      case 'log-request': {
        const tail = Number.isInteger(body.tail) && (body.tail as number) > 0 ? (body.tail as number) : 100;
        const lines = this.journal.slice(-tail);
        await this.connection.publish(
          'log-response',
          { requestId: body.requestId ?? null, satelliteId: this.id, tenantId: this.creds.tenantId, text: lines.join('\n'), lines },
          1,
        );
        return;
      }
      case 'update':
        return this.log('info', `update to ${String(body.targetVersion)} requested: reload the page to get the hub's current version`);
      case 'detection': {
        const d: Detection = {
          id: String(body.id ?? ''),
          commonName: String(body.commonName ?? body.scientificName ?? '?'),
          scientificName: String(body.scientificName ?? ''),
          confidence: num(body.confidence, 0),
          detectedAt: String(body.detectedAt ?? new Date().toISOString()),
        };
        this.status.detections = [d, ...this.status.detections.filter((x) => x.id !== d.id)].slice(0, SHOWN_DETECTIONS);
        this.changed();
        return;
      }
      default:
        this.log('warn', `message on unexpected channel ${channel}`);
    }
  }

  private async applyConfig(body: Record<string, unknown>): Promise<void> {
    if ((body.satelliteId && body.satelliteId !== this.id) || (body.tenantId && body.tenantId !== this.creds.tenantId)) return;
    const profile = (body.recordingProfile ?? {}) as Record<string, unknown>;
    const previous = this.config;
    this.config = {
      gainDb: num(profile.gain, 0),
      heartbeatIntervalSec: Math.max(1, num(body.heartbeatIntervalSec, 30)),
      filterEnabled: typeof body.filterEnabled === 'boolean' ? body.filterEnabled : true,
      filterMinRms: num(body.filterMinRms, 0.003),
    };
    await this.outbox.setCaps({ hardBytes: num(body.outboxHardSizeMb, 1024) * MB, maxAgeMs: num(body.outboxMaxAgeHours, 168) * 3600_000 });
    if (previous.heartbeatIntervalSec !== this.config.heartbeatIntervalSec) this.scheduleHeartbeat();
    this.log(
      'info',
      `config applied: gain ${this.config.gainDb} dB, heartbeat ${this.config.heartbeatIntervalSec} s, silence gate ${this.config.filterEnabled ? `on at RMS ${this.config.filterMinRms}` : 'off'}`,
    );
    this.changed();
  }

  private startLive(sessionId: string | null): void {
    if (this.live) clearTimeout(this.live.timer);
    const timer = setTimeout(() => this.stopLive(), LIVE_TIMEOUT_MS);
    this.live = { sessionId: sessionId ?? this.live?.sessionId ?? null, seq: this.live?.seq ?? 0, timer };
    this.status.live = true;
    this.changed();
  }

  private stopLive(): void {
    if (this.live) clearTimeout(this.live.timer);
    this.live = null;
    this.status.live = false;
    this.changed();
  }

  private publishLive(wav: Uint8Array, recordedAt: Date): void {
    const live = this.live!;
    this.connection.send(
      'live-audio',
      {
        satelliteId: this.id,
        tenantId: this.creds.tenantId,
        sessionId: live.sessionId,
        seq: live.seq++,
        recordedAt: recordedAt.toISOString(),
        durationMs: CHUNK_DURATION_MS,
        sampleRate: SAMPLE_RATE,
        audio: toBase64(wav),
      },
      0,
    );
  }

  private scheduleHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.config.heartbeatIntervalSec * 1000);
  }

  private heartbeat(): Promise<boolean> {
    const pending = this.outbox.pending();
    const bytes = this.outbox.bytes;
    return this.connection.publish(
      'heartbeat',
      {
        satelliteId: this.id,
        tenantId: this.creds.tenantId,
        uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
        state: this.capture ? 'recording' : 'paused',
        noiseFloorRms: this.noiseFloor,
        version: BROWSER_SATELLITE_VERSION,
        stream: 'mobile',
        timestamp: new Date().toISOString(),
        filterStats: { ...this.filterStats },
        outboxStats: {
          totalBytes: bytes,
          ackedBytes: 0,
          unackedBytes: bytes,
          rowCount: this.outbox.size,
          unackedCount: pending.length,
          diskBytes: bytes,
          refusedCount: this.outbox.size - pending.length,
          oldestUnsentAgeSeconds: this.outbox.oldestAgeSeconds(),
        },
      },
      1,
    );
  }

  private async telemetry(): Promise<void> {
    const nav = navigator as Navigator & { getBattery?: () => Promise<{ level: number }> };
    const battery = await nav
      .getBattery?.()
      .then((b) => Math.round(b.level * 100))
      .catch(() => null);
    const estimate = await navigator.storage?.estimate?.().catch(() => null);
    const fix = this.position?.latest() ?? null;
    await this.connection.publish(
      'telemetry',
      {
        satelliteId: this.id,
        tenantId: this.creds.tenantId,
        batteryLevel: battery ?? null,
        storageFreeBytes: estimate?.quota !== undefined ? Math.max(0, Math.round(estimate.quota - (estimate.usage ?? 0))) : null,
        cpuTemp: null,
        networkLatencyMs: null,
        packetLossPct: null,
        uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
        timestamp: new Date().toISOString(),
        ...(fix ? fix : {}),
      },
      1,
    );
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    this.journal.push(`${new Date().toISOString()} ${level} ${message}`);
    if (this.journal.length > JOURNAL_LINES) this.journal.splice(0, this.journal.length - JOURNAL_LINES);
    if (level !== 'info') this.status.lastMessage = message;
  }

  private changed(): void {
    this.status.connected = this.connection.connected;
    this.status.queue = this.outbox.size;
    this.status.acked = this.uploader?.ackedCount ?? 0;
    this.onStatus({ ...this.status });
  }
}
