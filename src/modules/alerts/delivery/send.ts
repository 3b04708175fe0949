/**
 * One delivery attempt to one channel. Retries, back-off and bookkeeping are the queue's; this
 * only turns an alert into a request (or mails) and reports what happened, secrets scrubbed.
 */
import { discordBody, emailMessage, slackBody, teamsBody, telegramBody } from './chat.ts';
import { type AllowList, type OutboundResult, postJson, redact } from './outbound.ts';
import { DELIVERY_ID_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signatureOf } from './signature.ts';
import { defaultWebhookBody, renderTemplate } from './template.ts';
import type { AlertPayload, ChannelTarget } from './types.ts';

export interface Mailer {
  send(m: { to: string; subject: string; text: string }): Promise<void>;
}

export interface SendOptions {
  allow: AllowList;
  timeoutMs: number;
  /** https://api.telegram.org in production; a local stand-in in tests. */
  telegramApiUrl: string;
  deliveryId: string;
  mail: Mailer;
}

export type SendResult = OutboundResult & { requestBody: string };

export const DEFAULT_TELEGRAM_API_URL = 'https://api.telegram.org';

const TELEGRAM_TOKEN = /^\d+:[A-Za-z0-9_-]+$/;

const scrub = (r: OutboundResult, requestBody: string, secrets: Array<string | null>): SendResult => ({
  ...r,
  error: r.error === null ? null : redact(r.error, secrets),
  responseBody: redact(r.responseBody, secrets),
  requestBody,
});

/** A failure no retry can mend: nothing was sent. */
const refusal = (error: string, requestBody: string): SendResult => ({
  status: null,
  durationMs: 0,
  error,
  retryAfterMs: null,
  responseBody: '',
  refused: true,
  requestBody,
});

/**
 * For email, `status` stays null: the caller treats `error === null` as delivered. A failure
 * after some addresses were mailed is retried whole, so those may get the alert twice.
 */
async function sendMail(addresses: string[], p: AlertPayload, mail: Mailer): Promise<SendResult> {
  const started = performance.now();
  const { subject, text } = emailMessage(p);
  const failures: string[] = [];
  for (const to of addresses) {
    try {
      await mail.send({ to, subject, text });
    } catch (err) {
      failures.push(`${to}: ${(err as Error).message}`);
    }
  }
  return {
    status: null,
    durationMs: Math.round(performance.now() - started),
    error: failures.length === 0 ? null : failures.join('; '),
    retryAfterMs: null,
    responseBody: '',
    refused: false,
    requestBody: JSON.stringify({ to: addresses, subject, text }),
  };
}

export async function sendOnce(target: ChannelTarget, p: AlertPayload, o: SendOptions): Promise<SendResult> {
  const net = { allow: o.allow, timeoutMs: o.timeoutMs };
  switch (target.type) {
    case 'email':
      return sendMail(target.addresses, p, o.mail);
    case 'webhook': {
      let body: string;
      try {
        body = target.payloadTemplate ? renderTemplate(target.payloadTemplate, p) : defaultWebhookBody(p);
        // Checked at save in every branch; a template saved before that check is held to it here.
        if (target.payloadTemplate) JSON.parse(body);
      } catch (err) {
        // Saved templates were validated; one that still fails will fail on every retry.
        return refusal(`the payload template does not render: ${(err as Error).message}`, '');
      }
      const headers: Record<string, string> = { [DELIVERY_ID_HEADER]: o.deliveryId, [EVENT_HEADER]: p.event };
      if (target.secret) headers[SIGNATURE_HEADER] = signatureOf(target.secret, body);
      return scrub(await postJson(target.url, body, headers, net), body, [target.secret, target.url]);
    }
    case 'chat_blocks':
    case 'chat_cards':
    case 'chat_embeds': {
      const payload = target.type === 'chat_blocks' ? slackBody(p) : target.type === 'chat_cards' ? teamsBody(p) : discordBody(p);
      const body = JSON.stringify(payload);
      // Chat webhook URLs are bearer secrets: the path is the credential.
      const url = URL.canParse(target.webhookUrl) ? new URL(target.webhookUrl) : null;
      return scrub(await postJson(target.webhookUrl, body, {}, net), body, [
        target.webhookUrl,
        url && url.pathname.length > 1 ? url.pathname + url.search : null,
      ]);
    }
    case 'chat_bot': {
      const body = JSON.stringify(telegramBody(target.chatId, p));
      if (!TELEGRAM_TOKEN.test(target.botToken)) {
        return refusal('the bot token is not in the form 123456:ABC…', body);
      }
      const url = `${o.telegramApiUrl.replace(/\/+$/, '')}/bot${target.botToken}/sendMessage`;
      return scrub(await postJson(url, body, {}, net), body, [target.botToken, url]);
    }
    case 'mqtt_home_assistant':
    case 'birdweather':
      // Stream channels carry detections (stream-send.ts); a rule naming one is refused at save.
      return refusal(`a ${target.type} channel carries the detection stream, not alerts`, '');
  }
}
