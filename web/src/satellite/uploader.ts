/**
 * The upload, as the reference satellite's src/satellite/uploader.ts with one chunk in flight:
 * the oldest unsent row goes out (QoS 1) and the next waits for its ack, which keeps the hub's
 * arrival order equal to recording order.
 * - `stored`: the row leaves the outbox.
 * - passing refusal (`retryable: true`, the hub's storage or queue is away): the row stays; the
 *   phone waits (doubling from RETRY_BASE_MS up to RETRY_MAX_MS, half to all of it at random),
 *   then offers the oldest chunk alone; the first `stored` ack ends the wait.
 * - final refusal: the row keeps the reason and is offered again after ERROR_RETRY_MS and on the
 *   next connection, up to MAX_ERROR_RETRIES refusals.
 * - no ack within ACK_TIMEOUT_MS: sent again (the hub's ingest is idempotent on chunkId). After
 *   a reconnect, until the hub is heard from, the first wait is RECONNECT_ACK_TIMEOUT_MS, doubling.
 */
import type { BrokerConnection } from './connection.ts';
import type { Outbox, OutboxRow } from './outbox.ts';
import { toBase64 } from './wav.ts';

export const ACK_TIMEOUT_MS = 30_000;
export const RECONNECT_ACK_TIMEOUT_MS = 2000;
export const MAX_ERROR_RETRIES = 3;
export const ERROR_RETRY_MS = 60_000;
export const RETRY_BASE_MS = 2000;
export const RETRY_MAX_MS = 300_000;

interface InFlight {
  chunkId: string;
  timer: ReturnType<typeof setTimeout>;
}

export class Uploader {
  private inFlight: InFlight | null = null;
  private draining = false;
  private again = false;
  /** Set by a (re)connect, cleared by the first message from the hub. */
  private probeTimeoutMs: number | null = RECONNECT_ACK_TIMEOUT_MS;
  private backoff: { waitMs: number; due: boolean; timer: ReturnType<typeof setTimeout> | null } | null = null;
  private readonly retryTimers = new Set<ReturnType<typeof setTimeout>>();
  ackedCount = 0;

  constructor(
    private readonly ids: { satelliteId: string; tenantId: string },
    private readonly outbox: Outbox,
    private readonly connection: Pick<BrokerConnection, 'connected' | 'send'>,
    private readonly log: (level: 'info' | 'warn' | 'error', message: string) => void,
    private readonly changed: () => void,
  ) {}

  /** Whether the hub asked to wait (shown on the page). */
  get waiting(): boolean {
    return this.backoff !== null;
  }

  hubHeard(): void {
    this.probeTimeoutMs = null;
  }

  /** The connection dropped: the chunk in flight is sent again on the next one. */
  lost(): void {
    if (this.inFlight) clearTimeout(this.inFlight.timer);
    this.inFlight = null;
    this.probeTimeoutMs = RECONNECT_ACK_TIMEOUT_MS;
    if (this.backoff && !this.backoff.timer) this.backoff.due = true;
  }

  async connected(): Promise<void> {
    const n = await this.outbox.requeueErrors(MAX_ERROR_RETRIES);
    if (n) this.log('info', `retrying ${n} chunk(s) the hub refused before`);
    this.drain();
  }

  stop(): void {
    this.lost();
    if (this.backoff?.timer) clearTimeout(this.backoff.timer);
    this.backoff = null;
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
  }

  /** Sends what is pending; safe to call at any time. */
  drain(): void {
    this.again = true;
    if (this.draining) return;
    this.draining = true;
    void this.drainLoop()
      .catch((err) => this.log('error', `upload failed: ${(err as Error).message}`))
      .finally(() => {
        this.draining = false;
      });
  }

  async onAck(body: Record<string, unknown>): Promise<void> {
    const chunkId = typeof body.chunkId === 'string' ? body.chunkId : null;
    if (!chunkId) return this.log('warn', 'ack without chunkId ignored');
    if (this.inFlight?.chunkId === chunkId) {
      clearTimeout(this.inFlight.timer);
      this.inFlight = null;
    }
    if (body.status === 'stored') {
      if (this.backoff) {
        if (this.backoff.timer) clearTimeout(this.backoff.timer);
        this.backoff = null;
        this.log('info', 'the hub takes chunks again; sending what waited');
      }
      if (this.outbox.get(chunkId)) {
        this.ackedCount++;
        await this.outbox.remove([chunkId]);
      }
    } else {
      const error = typeof body.error === 'string' && body.error ? body.error : `status ${String(body.status)}`;
      const passing = body.retryable === true || (body.retryable === undefined && /send again later/i.test(error));
      if (passing) this.backOff(error);
      else {
        this.log('error', `hub refused chunk ${chunkId}: ${error}`);
        await this.outbox.markError(chunkId, error);
        if ((this.outbox.get(chunkId)?.errorCount ?? Infinity) < MAX_ERROR_RETRIES) {
          const t = setTimeout(() => {
            this.retryTimers.delete(t);
            void this.outbox.requeueErrors(MAX_ERROR_RETRIES).then(() => this.drain());
          }, ERROR_RETRY_MS);
          this.retryTimers.add(t);
        }
      }
    }
    this.changed();
    this.drain();
  }

  private backOff(error: string): void {
    const previous = this.backoff;
    if (previous?.timer) return; // already waiting: the wait stands
    const waitMs = previous ? Math.min(previous.waitMs * 2, RETRY_MAX_MS) : RETRY_BASE_MS;
    const delay = Math.round(waitMs * (0.5 + 0.5 * Math.random()));
    const state = { waitMs, due: false, timer: null as ReturnType<typeof setTimeout> | null };
    state.timer = setTimeout(() => {
      state.timer = null;
      state.due = true;
      this.drain();
    }, delay);
    this.backoff = state;
    this.log('warn', `the hub cannot take chunks now (${error}); offering the oldest again in ${delay} ms`);
  }

  private async drainLoop(): Promise<void> {
    while (this.again) {
      this.again = false;
      if (!this.connection.connected || this.inFlight) continue;
      if (this.backoff && !this.backoff.due) continue;
      const row = this.outbox.pending()[0];
      if (!row) continue;
      if (this.backoff) this.backoff.due = false;
      await this.send(row);
    }
  }

  private async send(row: OutboxRow): Promise<void> {
    const wav = await this.outbox.readAudio(row.chunkId);
    if (!wav) {
      await this.outbox.remove([row.chunkId]);
      this.again = true;
      return;
    }
    const body = {
      chunkId: row.chunkId,
      satelliteId: this.ids.satelliteId,
      tenantId: this.ids.tenantId,
      recordedAt: row.recordedAt,
      durationMs: row.durationMs,
      sampleRate: row.sampleRate,
      ...(row.latitude !== null && row.longitude !== null ? { latitude: row.latitude, longitude: row.longitude } : {}),
      audio: toBase64(wav),
    };
    const wait = this.probeTimeoutMs ?? ACK_TIMEOUT_MS;
    const timer = setTimeout(() => {
      if (this.inFlight?.chunkId !== row.chunkId) return;
      this.inFlight = null;
      if (this.backoff) this.backoff.due = true;
      if (this.probeTimeoutMs !== null) this.probeTimeoutMs = Math.min(this.probeTimeoutMs * 2, ACK_TIMEOUT_MS);
      this.log('warn', `no ack for chunk ${row.chunkId} within ${wait} ms; sending it again`);
      this.drain();
    }, wait);
    this.inFlight = { chunkId: row.chunkId, timer };
    if (!this.connection.send('audio', body, 1)) {
      clearTimeout(timer);
      this.inFlight = null;
    }
  }
}
