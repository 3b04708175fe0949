/**
 * The upload (satellite protocol §4): drains the outbox to the hub and settles chunks by their
 * acks.
 *
 * Unacked rows go oldest-first, QoS 1, at most `maxInFlight` waiting for their ack (default 1,
 * which keeps the hub's arrival order equal to recording order). An `ack` `stored` marks the row
 * acked. An `error` ack is one of two kinds (issue 32):
 * - passing ("send again later", `retryable: true`: the hub's database, storage or queue is away):
 *   the row stays unsent and nothing counts toward giving up; the satellite backs off (the wait
 *   doubling from `retryBaseMs` to `retryMaxMs`, with jitter), then offers the oldest chunk alone;
 *   the first `stored` ack ends the back-off and the outbox drains as usual. This lasts as long as
 *   the outbox has room (its caps decide what goes, as when offline).
 * - final (the chunk itself is bad): the row keeps the reason (logged, counted, kept and shown in
 *   the heartbeat's outboxStats.refusedCount), retried after `errorRetryMs` and on the next
 *   reconnect, up to `maxErrorRetries` error acks.
 * A chunk whose ack does not come within `ackTimeoutMs` is sent again (the hub's ingest is
 * idempotent on chunkId).
 *
 * After a reconnect, until the hub is heard from (an ack, a config answer), chunks wait only
 * `reconnectAckTimeoutMs` for their ack, doubling up to `ackTimeoutMs` (issue 21): when the
 * broker itself restarted, the first chunks may go out before the hub subscribed again and are
 * lost; they are sent again within seconds instead of after the full ack time-out.
 */
import type { BrokerConnection } from './connection.ts';
import type { SatelliteContext } from './types.ts';
import type { OutboxRow } from './outbox.ts';

interface InFlight {
  cancelAckTimeout: () => void;
  sentAt: number;
}

/** Set by a reconnect, cleared by the first message from the hub. */
interface Probing {
  timeoutMs: number;
}

/** The hub asked to send again later: nothing goes out until `due`, then the oldest chunk alone. */
interface BackingOff {
  since: Date;
  /** The wait before jitter; doubles with each passing refusal up to retryMaxMs. */
  waitMs: number;
  nextTryAt: number;
  /** The wait is over: one chunk may go out (the probe). */
  due: boolean;
  cancel: () => void;
  lastRefusal: { chunkId: string; error: string; at: Date };
}

/** What the uploader tells the heartbeat (outboxStats, integers). */
export interface UploadState {
  /** Seconds since the hub first asked to send again later, 0 when it takes chunks. */
  backoffSeconds: number;
  /** Seconds until the next chunk is offered while backing off. */
  retryInSeconds: number;
}

/** A refusal that says the hub cannot take chunks now, not that this chunk is bad (older hubs: by its words). */
export function isPassingRefusal(body: Record<string, unknown>, error: string): boolean {
  return body.retryable === true || (body.retryable === undefined && /send again later/i.test(error));
}

export class Uploader {
  private readonly inFlight = new Map<string, InFlight>();
  private draining = false;
  private drainRequested = false;
  private readonly retryCancels = new Set<() => void>();
  /** Chunks whose ack is being written to the outbox: not sent again meanwhile (a `stored` one is counted already). */
  private readonly settling = new Set<string>();
  /** From the start too: the hub may be down when the satellite boots. */
  private probing: Probing | null;
  private backoff: BackingOff | null = null;

  constructor(
    private readonly ctx: Pick<
      SatelliteContext,
      'id' | 'tenantId' | 'options' | 'outbox' | 'status' | 'clock' | 'isStopped' | 'log' | 'emit' | 'topic'
    >,
    private readonly connection: Pick<BrokerConnection, 'client'>,
  ) {
    this.probing = { timeoutMs: Math.min(ctx.options.reconnectAckTimeoutMs, ctx.options.ackTimeoutMs) };
  }

  /** Sends what is pending, as far as the in-flight limit allows; safe to call at any time. */
  drain(): void {
    this.drainRequested = true;
    if (this.draining) return;
    this.draining = true;
    void this.drainLoop()
      .catch((err) => this.ctx.log('error', `upload failed: ${(err as Error).message}`))
      .finally(() => {
        this.draining = false;
      });
  }

  /** Gives the chunks the hub refused before another try (on every connect). */
  async requeueRefused(): Promise<void> {
    const requeued = await this.ctx.outbox.requeueErrors(this.ctx.options.maxErrorRetries);
    if (requeued) this.ctx.log('info', `retrying ${requeued} chunk(s) the hub refused before`);
  }

  /** The connection dropped: on the next one the hub may not be listening yet (see the header). */
  reconnected(): void {
    this.probing = { timeoutMs: Math.min(this.ctx.options.reconnectAckTimeoutMs, this.ctx.options.ackTimeoutMs) };
    // A probe that went out on the old connection is gone with it: offer the oldest chunk again once due.
    if (this.backoff && this.inFlight.size === 0 && this.ctx.clock.now().getTime() >= this.backoff.nextTryAt) this.backoff.due = true;
  }

  /** For the heartbeat: whether, since when and until when the hub asked to wait. */
  uploadState(): UploadState {
    if (!this.backoff) return { backoffSeconds: 0, retryInSeconds: 0 };
    const now = this.ctx.clock.now().getTime();
    return {
      backoffSeconds: Math.max(1, Math.round((now - this.backoff.since.getTime()) / 1000)),
      retryInSeconds: this.backoff.due ? 0 : Math.max(0, Math.ceil((this.backoff.nextTryAt - now) / 1000)),
    };
  }

  /** Any message from the hub on this connection: it is subscribed, ack time-outs are the normal ones again. */
  hubHeard(): void {
    this.probing = null;
  }

  /** Forgets the chunks waiting for an ack (the connection they went out on is gone); they are sent again. */
  clearInFlight(): void {
    for (const f of this.inFlight.values()) f.cancelAckTimeout();
    this.inFlight.clear();
  }

  /** Drops the pending retries of refused chunks (the satellite is stopping). */
  cancelRetries(): void {
    for (const cancel of this.retryCancels) cancel();
    this.retryCancels.clear();
    this.backoff?.cancel();
  }

  /** A passing refusal: wait longer than last time (up to retryMaxMs), then offer the oldest chunk alone. */
  private backOff(chunkId: string, error: string): void {
    const { ctx } = this;
    const { retryBaseMs, retryMaxMs, random } = ctx.options;
    const previous = this.backoff;
    const now = ctx.clock.now();
    // A chunk that went out before this wait began (maxInFlight > 1): the wait stands.
    if (previous && now.getTime() < previous.nextTryAt) {
      previous.lastRefusal = { chunkId, error, at: now };
      return;
    }
    previous?.cancel();
    const waitMs = previous ? Math.min(previous.waitMs * 2, retryMaxMs) : Math.min(retryBaseMs, retryMaxMs);
    const delayMs = Math.round(waitMs * (0.5 + 0.5 * random()));
    const state: BackingOff = {
      since: previous?.since ?? now,
      waitMs,
      nextTryAt: now.getTime() + delayMs,
      due: false,
      cancel: () => {},
      lastRefusal: { chunkId, error, at: now },
    };
    state.cancel = ctx.clock.after(delayMs, () => {
      if (this.backoff !== state) return;
      state.due = true;
      this.drain();
    });
    this.backoff = state;
    ctx.log('warn', `the hub cannot take chunks now (${error}); offering the oldest again in ${delayMs} ms`);
    ctx.emit('backoff', { chunkId, error, delayMs });
  }

  /** A chunk was stored: the hub takes chunks again. */
  private resumed(): void {
    if (!this.backoff) return;
    const waited = this.ctx.clock.now().getTime() - this.backoff.since.getTime();
    this.backoff.cancel();
    this.backoff = null;
    this.ctx.log('info', `the hub takes chunks again after ${Math.round(waited / 1000)} s; sending what waited`);
    this.ctx.emit('resumed', { waitedMs: waited });
  }

  async onAck(body: Record<string, unknown>): Promise<void> {
    const { ctx } = this;
    const chunkId = typeof body.chunkId === 'string' ? body.chunkId : null;
    if (!chunkId) return ctx.log('warn', 'ack without chunkId ignored');
    ctx.emit('ack', body);
    const f = this.inFlight.get(chunkId);
    if (f) {
      f.cancelAckTimeout();
      this.inFlight.delete(chunkId);
    }
    if (body.status === 'stored') {
      this.resumed();
      const row = ctx.outbox.get(chunkId);
      // Counted at once, so "nothing pending" never runs ahead of the count.
      if (!row || row.status === 'acked' || this.settling.has(chunkId)) return this.drain();
      this.settling.add(chunkId);
      ctx.status.ackedCount++;
      try {
        await ctx.outbox.markAcked(chunkId);
      } finally {
        this.settling.delete(chunkId);
      }
      ctx.emit('acked', { ...row, status: 'acked' });
    } else {
      const error = typeof body.error === 'string' && body.error ? body.error : `status ${String(body.status)}`;
      if (isPassingRefusal(body, error)) {
        this.backOff(chunkId, error);
        return this.drain();
      }
      ctx.log('error', `hub refused chunk ${chunkId}: ${error}`);
      ctx.status.errorAcks.push({ chunkId, error });
      this.settling.add(chunkId);
      try {
        await ctx.outbox.markError(chunkId, error);
      } finally {
        this.settling.delete(chunkId);
      }
      ctx.emit('ack-error', chunkId, error);
      if ((ctx.outbox.get(chunkId)?.errorCount ?? Infinity) < ctx.options.maxErrorRetries) {
        const cancel = ctx.clock.after(ctx.options.errorRetryMs, () => {
          this.retryCancels.delete(cancel);
          void ctx.outbox
            .requeueErrors(ctx.options.maxErrorRetries)
            .then(() => this.drain())
            .catch((err) => ctx.log('error', `requeueing refused chunks failed: ${(err as Error).message}`));
        });
        this.retryCancels.add(cancel);
      }
    }
    this.drain();
  }

  private async drainLoop(): Promise<void> {
    const { ctx } = this;
    while (this.drainRequested) {
      this.drainRequested = false;
      while (ctx.status.connected && !ctx.isStopped() && this.inFlight.size < ctx.options.maxInFlight) {
        // Backing off: nothing until the wait is over, then one chunk, whose ack decides.
        const probe = this.backoff !== null;
        if (this.backoff && (!this.backoff.due || this.inFlight.size > 0)) break;
        const row = ctx.outbox.pending().find((r) => !this.inFlight.has(r.chunkId) && !this.settling.has(r.chunkId));
        if (!row) break;
        if (this.backoff) this.backoff.due = false;
        if (!(await this.send(row))) {
          if (this.backoff) this.backoff.due = true;
          break;
        }
        if (probe) {
          // Nothing went out after all (its audio was missing): the next chunk is the probe.
          if (this.backoff && this.inFlight.size === 0) {
            this.backoff.due = true;
            continue;
          }
          break;
        }
      }
    }
  }

  private async send(row: OutboxRow): Promise<boolean> {
    const { ctx } = this;
    const audio = await ctx.outbox.readAudio(row.chunkId);
    if (!audio) {
      if (ctx.outbox.get(row.chunkId)) await ctx.outbox.markError(row.chunkId, 'audio file missing from the outbox');
      return true;
    }
    const client = this.connection.client;
    if (!client || !ctx.status.connected) return false;
    const body = {
      chunkId: row.chunkId,
      satelliteId: ctx.id,
      tenantId: ctx.tenantId,
      recordedAt: row.recordedAt,
      durationMs: row.durationMs,
      sampleRate: row.sampleRate,
      ...(row.latitude !== null && row.longitude !== null ? { latitude: row.latitude, longitude: row.longitude } : {}),
      audio: audio.toString('base64'),
    };
    const sentAt = ctx.clock.now().getTime();
    const timedOut = (waited: number) => {
      if (!this.inFlight.has(row.chunkId)) return;
      // Heard from the hub meanwhile: it got the chunk (one client's messages arrive in order); wait out the normal time-out.
      if (!this.probing && waited < ctx.options.ackTimeoutMs) {
        const rest = ctx.options.ackTimeoutMs - waited;
        this.inFlight.set(row.chunkId, { cancelAckTimeout: ctx.clock.after(rest, () => timedOut(ctx.options.ackTimeoutMs)), sentAt });
        return;
      }
      this.inFlight.delete(row.chunkId);
      // A probe nobody answered: offer the oldest chunk again.
      if (this.backoff) this.backoff.due = true;
      if (this.probing) {
        ctx.log('warn', `no answer from the hub ${waited} ms after reconnecting; sending chunk ${row.chunkId} again`);
        this.probing.timeoutMs = Math.min(this.probing.timeoutMs * 2, ctx.options.ackTimeoutMs);
      } else ctx.log('warn', `no ack for chunk ${row.chunkId} within ${ctx.options.ackTimeoutMs} ms; sending it again`);
      this.drain();
    };
    const wait = this.probing ? this.probing.timeoutMs : ctx.options.ackTimeoutMs;
    const cancelAckTimeout = ctx.clock.after(wait, () => timedOut(wait));
    this.inFlight.set(row.chunkId, { cancelAckTimeout, sentAt });
    client.publish(ctx.topic('audio'), JSON.stringify(body), { qos: 1 }, (err) => {
      if (err && this.connection.client === client) ctx.log('warn', `audio ${row.chunkId}: ${err.message}`);
    });
    ctx.emit('sent', row);
    return true;
  }
}
