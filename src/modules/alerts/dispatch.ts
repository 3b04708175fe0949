/**
 * Delivery of stored alerts to their channels through the queue port (BullMQ in split mode).
 * One job is one attempt: a retryable failure (network error, time-out, 408, 429, 5xx) schedules
 * the next attempt as a delayed job, after the exponential back-off or the receiver's
 * Retry-After, whichever is longer; other statuses fail the delivery at once. Each attempt is
 * recorded on the delivery row, which the channel's delivery list shows.
 */
import type { Db } from '../../infra/db/index.ts';
import type { JobQueue } from '../../infra/queue/types.ts';
import type { Metrics } from '../../infra/metrics/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AlertDeliveryConfig } from '../../config.ts';
import { createSealer } from '../../core/sealer.ts';
import { createAlertsRepo, type ChannelRow, type DeliveryRow } from './repo.ts';
import type { ChannelSecrets, SplitConfig } from './channel-config.ts';
import { targetOf } from './channel-config.ts';
import { isRetryable, type AllowList } from './delivery/outbound.ts';
import { sendOnce } from './delivery/send.ts';
import { sendStream } from './delivery/stream-send.ts';
import type { MqttClients } from './delivery/mqtt-clients.ts';

export const ALERT_DELIVERY_QUEUE = 'alert-delivery';

export interface AttemptOutcome {
  delivered: boolean;
  status: number | null;
  durationMs: number;
  error: string | null;
  state: DeliveryRow['status'];
}

export interface Mail {
  send(m: { to: string; subject: string; text: string }): Promise<void>;
}

export function createDispatcher(deps: {
  db: Db;
  clock: Clock;
  queue: JobQueue;
  metrics?: Pick<Metrics, 'alertDelivery'>;
  mail: Mail;
  secret: string;
  config: AlertDeliveryConfig;
  allow: AllowList;
  /** Reads the hub's allow list again (index.ts): before each attempt, so a host allowed a moment ago counts. */
  refreshAllow?: () => Promise<void>;
  /** Home Assistant channels' broker connections (stream channels, issue 38). */
  mqtt: MqttClients;
  /** A chunk's stored WAV (BirdWeather soundscapes), null when gone. */
  chunkAudio: (tenantId: string, chunkId: string) => Promise<Buffer | null>;
}) {
  const { db, clock, queue, config } = deps;
  const repo = createAlertsRepo(db);
  const sealer = createSealer(deps.secret, 'alert-channel-secrets');

  const jobId = (deliveryId: string, attempt: number) => `${deliveryId}.${attempt}`;

  function openChannel(row: Pick<ChannelRow, 'id' | 'config' | 'secrets'>): SplitConfig {
    const secrets = row.secrets ? (JSON.parse(sealer.open(row.secrets, row.id)) as ChannelSecrets) : {};
    return { config: row.config, secrets };
  }

  /** One attempt of one delivery; `retry: false` for a channel test, whose caller waits for the answer. */
  async function attempt(deliveryId: string, opts: { retry: boolean } = { retry: true }): Promise<AttemptOutcome | null> {
    const d = await repo.findDelivery(deliveryId);
    if (!d || d.status === 'delivered' || d.status === 'failed') return null;
    const channel = await repo.findChannel(d.tenantId, d.channelId);
    if (!channel) return null;
    // A file delivery (file-delivery.ts) is recorded as sent or failed and never queued: only an
    // alert's payload or a stream channel's detection (issue 38) is sent here.
    const payload = d.payload;
    if (!('event' in payload) && !('stream' in payload)) return null;
    const target = targetOf(channel.type, openChannel(channel), channel.payloadTemplate);
    await deps.refreshAllow?.();
    const result =
      'stream' in payload
        ? await sendStream(target, payload, {
            allow: deps.allow,
            timeoutMs: config.timeoutMs,
            tenantId: d.tenantId,
            channelId: channel.id,
            mqtt: deps.mqtt,
            chunkAudio: deps.chunkAudio,
          })
        : await sendOnce(target, payload, {
            allow: deps.allow,
            timeoutMs: config.timeoutMs,
            telegramApiUrl: config.telegramApiUrl,
            deliveryId: d.id,
            mail: deps.mail,
          });
    const delivered = result.error === null && (result.status === null || (result.status >= 200 && result.status < 300));
    const attempts = d.attempts + 1;
    const retry = !delivered && opts.retry && attempts < config.maxAttempts && isRetryable(result);
    const state: DeliveryRow['status'] = delivered ? 'delivered' : retry ? 'retrying' : 'failed';
    const error = delivered ? null : (result.error ?? `the receiver answered ${result.status}`);
    const durationMs = Math.round(result.durationMs);
    await repo.recordAttempt(d.id, { status: state, attempts, receiverStatus: result.status, durationMs, error, at: clock.now() });
    deps.metrics?.alertDelivery(channel.type, state);
    if (retry) {
      const backoff = config.backoffMs * 2 ** (attempts - 1);
      await queue.enqueue(
        ALERT_DELIVERY_QUEUE,
        jobId(d.id, attempts + 1),
        { deliveryId: d.id },
        { delayMs: Math.max(backoff, result.retryAfterMs ?? 0) },
      );
    }
    return { delivered, status: result.status, durationMs, error, state };
  }

  return {
    sealSecrets: (channelId: string, secrets: ChannelSecrets): string | null =>
      Object.keys(secrets).length === 0 ? null : sealer.seal(JSON.stringify(secrets), channelId),
    openChannel,
    attempt,
    /** First attempts of freshly stored deliveries. */
    async enqueue(deliveryIds: readonly string[]) {
      for (const id of deliveryIds) await queue.enqueue(ALERT_DELIVERY_QUEUE, jobId(id, 1), { deliveryId: id });
    },
    /** Deliveries a stopped process left open: their next attempt is queued again (ids make it idempotent). */
    async recover(olderThan: Date) {
      const stale = await repo.staleDeliveries(olderThan, 500);
      for (const d of stale) await queue.enqueue(ALERT_DELIVERY_QUEUE, jobId(d.id, d.attempts + 1), { deliveryId: d.id });
      return stale.length;
    },
    /** Takes delivery jobs in this process. */
    start: (concurrency = 4) =>
      queue.process<{ deliveryId: string }>(ALERT_DELIVERY_QUEUE, concurrency, async (job) => {
        await attempt(job.data.deliveryId);
      }),
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
