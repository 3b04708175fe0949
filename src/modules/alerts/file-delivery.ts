/**
 * Files through a team's channels (scheduled exports, issue 18): an email attachment, or a
 * signed webhook POST. The channel's secrets stay in this module; the exports module hands over
 * the file and gets back what the receiver said. Each send is listed among the channel's
 * deliveries (event `scheduled_export`).
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AlertDeliveryConfig } from '../../config.ts';
import { newId } from '../../core/crypto.ts';
import { createAlertsRepo } from './repo.ts';
import { targetOf } from './channel-config.ts';
import type { ChannelType } from './delivery/types.ts';
import { postJson, type AllowList } from './delivery/outbound.ts';
import { DELIVERY_ID_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signatureOf } from './delivery/signature.ts';
import type { Dispatcher } from './dispatch.ts';

export interface OutgoingFile {
  /** The schedule's name. */
  name: string;
  format: string;
  filename: string;
  contentType: string;
  rows: number;
  /** The file, or null when it is too large to carry (then `link` says where it is). */
  content: Buffer | null;
  link: string | null;
}

export interface FileMail {
  send(m: {
    to: string;
    subject: string;
    text: string;
    attachments?: Array<{ filename: string; content: Buffer; contentType: string }>;
  }): Promise<void>;
}

/**
 * A file in a JSON body: text as text, read in the charset its media type names (an iNaturalist
 * file is ISO-8859-1), anything else (a zip of parts) as base64.
 */
export function webhookContent(contentType: string, content: Buffer): { content: string; contentEncoding: 'text' | 'base64' } {
  const text = /^(text\/|application\/json)/i.test(contentType);
  if (!text) return { content: content.toString('base64'), contentEncoding: 'base64' };
  const latin1 = /charset=(iso-8859-1|latin1)/i.test(contentType);
  return { content: content.toString(latin1 ? 'latin1' : 'utf8'), contentEncoding: 'text' };
}

/** Channel types that can carry a file. */
export const FILE_CHANNEL_TYPES: readonly ChannelType[] = ['email', 'webhook'];

export function createFileDelivery(deps: {
  db: Db;
  clock: Clock;
  dispatcher: Pick<Dispatcher, 'openChannel'>;
  mail: FileMail;
  allow: AllowList;
  /** Reads the hub's allow list again (index.ts) before a file is posted. */
  refreshAllow?: () => Promise<void>;
  config: Pick<AlertDeliveryConfig, 'timeoutMs'>;
}) {
  const { db, clock } = deps;
  const repo = createAlertsRepo(db);

  async function send(
    tenantId: string,
    channelId: string,
    file: OutgoingFile,
  ): Promise<{ delivered: boolean; status: number | null; error: string | null }> {
    const channel = await repo.findChannel(tenantId, channelId);
    if (!channel) return { delivered: false, status: null, error: 'the channel no longer exists' };
    const type = channel.type;
    const target = targetOf(type, deps.dispatcher.openChannel(channel), channel.payloadTemplate);
    const deliveryId = newId();
    const started = performance.now();
    let outcome: { delivered: boolean; status: number | null; error: string | null };
    if (target.type === 'email') {
      const text = [
        `${file.name}: ${file.rows} rows (${file.format}).`,
        file.content
          ? `The file is attached: ${file.filename}.`
          : `The file is too large to attach; download it (sign-in needed): ${file.link}`,
      ].join('\n\n');
      const errors: string[] = [];
      for (const to of target.addresses) {
        try {
          await deps.mail.send({
            to,
            subject: `Chorus export: ${file.name}`.slice(0, 200),
            text,
            ...(file.content ? { attachments: [{ filename: file.filename, content: file.content, contentType: file.contentType }] } : {}),
          });
        } catch (err) {
          errors.push(`${to}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      outcome = { delivered: errors.length === 0, status: null, error: errors.length ? errors.join('; ') : null };
    } else if (target.type === 'webhook') {
      const body = JSON.stringify({
        event: 'scheduled_export',
        timestamp: clock.now().toISOString(),
        data: {
          name: file.name,
          format: file.format,
          filename: file.filename,
          contentType: file.contentType,
          rows: file.rows,
          ...(file.content ? webhookContent(file.contentType, file.content) : { content: null, contentEncoding: null }),
          link: file.link,
        },
      });
      const headers: Record<string, string> = { [DELIVERY_ID_HEADER]: deliveryId, [EVENT_HEADER]: 'scheduled_export' };
      if (target.secret) headers[SIGNATURE_HEADER] = signatureOf(target.secret, body);
      await deps.refreshAllow?.();
      const r = await postJson(target.url, body, headers, { allow: deps.allow, timeoutMs: deps.config.timeoutMs });
      const ok = r.error === null && r.status !== null && r.status >= 200 && r.status < 300;
      const error = ok ? null : (r.error ?? `the receiver answered ${r.status}`);
      // The URL may hold a token: never in what is stored.
      outcome = { delivered: ok, status: r.status, error: error ? error.split(target.url).join('[url]') : null };
    } else {
      outcome = { delivered: false, status: null, error: `a ${type} channel cannot carry a file` };
    }
    const now = clock.now();
    await db.tx(async (tx) => {
      await repo.insertDeliveries(tx, [
        {
          id: deliveryId,
          tenantId,
          channelId,
          alertId: null,
          event: 'scheduled_export',
          status: outcome.delivered ? 'delivered' : 'failed',
          payload: { name: file.name, filename: file.filename, rows: file.rows },
          createdAt: now,
          updatedAt: now,
        },
      ]);
      await repo.recordAttemptIn(tx, deliveryId, {
        status: outcome.delivered ? 'delivered' : 'failed',
        attempts: 1,
        receiverStatus: outcome.status,
        durationMs: Math.round(performance.now() - started),
        error: outcome.error,
        at: now,
      });
    });
    return outcome;
  }

  return {
    send,
    /** The type of a team's channel, or null (scheduled exports check it at save). */
    channelType: async (tenantId: string, channelId: string) => (await repo.findChannel(tenantId, channelId))?.type ?? null,
  };
}

export type FileDelivery = ReturnType<typeof createFileDelivery>;
