/**
 * Outbound HTTP for alert deliveries. Webhook URLs are typed in by team admins, so every request
 * goes through the hub's one outbound policy (src/infra/outbound: public unicast only unless
 * listed in OUTBOUND_ALLOW_HOSTS, checked again at connect time, no redirects, time and size caps).
 */
import { type AllowList, OutboundRefused, sendGuarded } from '../../../infra/outbound/index.ts';

export { type AllowList, checkUrl, isAddressAllowed, OutboundRefused, parseAllowList } from '../../../infra/outbound/index.ts';

export interface OutboundResult {
  status: number | null;
  durationMs: number;
  error: string | null;
  retryAfterMs: number | null;
  /** The receiver's body, first 2 KB. */
  responseBody: string;
  /** True when policy, not the network, stopped the request: retrying cannot help. */
  refused: boolean;
}

const BODY_LIMIT = 2048;
const RETRY_AFTER_CAP_MS = 3_600_000;

/** Delta-seconds or an HTTP date; capped at an hour so a receiver cannot park the queue. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, RETRY_AFTER_CAP_MS);
}

/** A result builder for a delivery started at `started` (performance.now()): unset fields read as nothing answered. */
export function resultSince(started: number): (r: Partial<OutboundResult>) => OutboundResult {
  return (r) => ({
    status: null,
    error: null,
    retryAfterMs: null,
    responseBody: '',
    refused: false,
    ...r,
    durationMs: Math.round(performance.now() - started),
  });
}

/** One POST, no redirects, no retries. Resolves (never rejects), with `status: null` when nothing was answered. */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { allow: AllowList; timeoutMs: number },
): Promise<OutboundResult> {
  const result = resultSince(performance.now());
  try {
    const res = await sendGuarded(url, {
      method: 'POST',
      allow: opts.allow,
      timeoutMs: opts.timeoutMs,
      headers: { 'content-type': 'application/json', 'user-agent': 'Chorus-Hub', ...headers },
      body: Buffer.from(body, 'utf8'),
      // Only the receiver's explanation is kept; a slow or long body costs nothing more.
      maxBodyBytes: BODY_LIMIT,
      overflow: 'truncate',
      maxRedirects: 0,
    });
    const header = res.headers['retry-after'];
    return result({
      status: res.status,
      retryAfterMs: parseRetryAfter(Array.isArray(header) ? header[0] : header),
      responseBody: res.body.toString('utf8'),
    });
  } catch (err) {
    return result({ error: (err as Error).message, refused: err instanceof OutboundRefused });
  }
}

/** Network trouble, time-outs, 408, 429 and 5xx may pass; a policy refusal or any other answer will not. */
export function isRetryable(r: OutboundResult): boolean {
  if (r.status === null) return !r.refused;
  return r.status === 408 || r.status === 429 || r.status >= 500;
}

/** Removes every secret, and its URL-encoded form, from text that is stored and shown to admins. */
export function redact(text: string, secrets: Array<string | null>): string {
  let out = text;
  for (const s of secrets) {
    if (!s) continue;
    out = out.split(s).join('[redacted]');
    const encoded = encodeURIComponent(s);
    if (encoded !== s) out = out.split(encoded).join('[redacted]');
  }
  return out;
}
