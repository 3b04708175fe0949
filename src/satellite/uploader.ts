/**
 * The upload (satellite protocol §4): drains the outbox to the hub and settles chunks by their
 * acks.
 *
 * Unacked rows go oldest-first, QoS 1, at most `maxInFlight` waiting for their ack (default 1,
 * which keeps the hub's arrival order equal to recording order). An `ack` `stored` marks the row
 * acked; `error` keeps the row with the reason (logged, counted, and retried after
 * `errorRetryMs` and on the next reconnect, up to `maxErrorRetries` error acks: the hub's
 * refusals include passing ones such as "storage unavailable, send again later"). A chunk whose
 * ack does not come within `ackTimeoutMs` is sent again (the hub's ingest is idempotent on
 * chunkId).
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

export class Uploader {
  private readonly inFlight = new Map<string, InFlight>();
  private draining = false;
  private drainRequested = false;
  private readonly retryCancels = new Set<() => void>();
  /** Chunks whose ack is being written to the outbox: not sent again meanwhile (a `stored` one is counted already). */
  private readonly settling = new Set<string>();
  /** From the start too: the hub may be down when the satellite boots. */
  private probing: Probing | null;

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
        const row = ctx.outbox.pending().find((r) => !this.inFlight.has(r.chunkId) && !this.settling.has(r.chunkId));
        if (!row) break;
        if (!(await this.send(row))) break;
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
