/**
 * Live listening: live-start [{sessionId}] starts (or keeps alive) a live session: a live-audio
 * chunk (QoS 0, base64 WAV) every `liveIntervalMs` until live-stop or `liveTimeoutMs` (60 s)
 * without a new live-start. The live feed is the chunk the recorder captured last when it is
 * fresh, else a chunk of the synthetic soundscape (a recorder that is idle still has a
 * microphone).
 */
import { CHUNK_DURATION_MS, SAMPLE_RATE, makeWav } from '../protocol/wav.ts';
import type { BrokerConnection } from './connection.ts';
import type { SatelliteContext } from './types.ts';
import type { Recorder } from './recorder.ts';
import { soundscapeChunk } from './soundscape.ts';

interface LiveSession {
  sessionId: string | null;
  cancelExpiry: () => void;
  cancelNextBeat: () => void;
  seq: number;
}

export class LiveAudio {
  private live: LiveSession | null = null;
  private liveBusy = false;
  private liveFeedIndex = 0;

  constructor(
    private readonly ctx: Pick<SatelliteContext, 'id' | 'tenantId' | 'options' | 'clock' | 'log' | 'emit'>,
    private readonly recorder: Pick<Recorder, 'takeFreshCapture'>,
    private readonly connection: Pick<BrokerConnection, 'publish'>,
  ) {}

  /** The running session's id (null when the hub gave none); undefined when none runs. */
  get session(): string | null | undefined {
    return this.live ? this.live.sessionId : undefined;
  }

  start(sessionId: string | null): void {
    const { ctx } = this;
    if (this.live) {
      this.live.cancelExpiry();
      this.live.cancelExpiry = this.expireLater();
      if (sessionId) this.live.sessionId = sessionId;
      ctx.emit('live-keepalive', this.live.sessionId);
      return;
    }
    ctx.log('info', sessionId ? `live session ${sessionId} started` : 'live session started');
    const live: LiveSession = { sessionId, seq: 0, cancelExpiry: this.expireLater(), cancelNextBeat: () => {} };
    this.live = live;
    this.beatLater(live);
    ctx.emit('live-start', sessionId);
    void this.send();
  }

  stop(reason: string, log: boolean): void {
    if (!this.live) return;
    this.live.cancelExpiry();
    this.live.cancelNextBeat();
    this.live = null;
    if (log) this.ctx.log('info', `live session ended: ${reason}`);
    this.ctx.emit('live-stop', reason);
  }

  /** Ends the session unless a keepalive comes within liveTimeoutMs. */
  private expireLater(): () => void {
    return this.ctx.clock.after(this.ctx.options.liveTimeoutMs, () => this.stop(this.lapsed(), true));
  }

  /** A live-audio chunk every liveIntervalMs while the session runs. */
  private beatLater(live: LiveSession): void {
    live.cancelNextBeat = this.ctx.clock.after(this.ctx.options.liveIntervalMs, () => {
      if (this.live !== live) return;
      this.beatLater(live);
      void this.send();
    });
  }

  private lapsed(): string {
    const ms = this.ctx.options.liveTimeoutMs;
    return `no keepalive (live-start) for ${ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`}`;
  }

  private async send(): Promise<void> {
    const live = this.live;
    if (!live || this.liveBusy) return; // a slow link skips a beat rather than piling chunks up
    this.liveBusy = true;
    try {
      await this.sendChunk(live);
    } finally {
      this.liveBusy = false;
    }
  }

  private async sendChunk(live: LiveSession): Promise<void> {
    const { ctx } = this;
    let wav: Buffer;
    let recordedAt: Date;
    const captured = this.recorder.takeFreshCapture();
    if (captured) {
      ({ wav, recordedAt } = captured);
    } else {
      wav = liveFeedWav(this.liveFeedIndex++);
      recordedAt = new Date(ctx.clock.now().getTime() - CHUNK_DURATION_MS);
    }
    const body = {
      satelliteId: ctx.id,
      tenantId: ctx.tenantId,
      sessionId: live.sessionId,
      seq: live.seq++,
      recordedAt: recordedAt.toISOString(),
      durationMs: CHUNK_DURATION_MS,
      sampleRate: SAMPLE_RATE,
      audio: wav.toString('base64'),
    };
    if (await this.connection.publish('live-audio', body, 0)) ctx.emit('live-audio', body);
  }
}

/**
 * The idle microphone's feed: a loop of LIVE_FEED_CHUNKS soundscape chunks, each rendered once
 * per process (a soundscape chunk with its background takes tens of milliseconds to render, and
 * the feed sends one every interval).
 */
const LIVE_FEED_CHUNKS = 8;
const liveFeed = new Map<number, Buffer>();
function liveFeedWav(index: number): Buffer {
  const at = index % LIVE_FEED_CHUNKS;
  let wav = liveFeed.get(at);
  if (!wav) liveFeed.set(at, (wav = makeWav(soundscapeChunk(0x11fe, at).samples)));
  return wav;
}
