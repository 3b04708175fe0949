/**
 * Outbound HTTP for alert deliveries. Webhook URLs are typed in by team admins, so every request
 * could be an attempt to reach the hub's own network (SSRF): only public unicast addresses are
 * reached unless the operator lists a host, address or range in WEBHOOK_ALLOW_HOSTS.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { type AllowList, bare, isAddressAllowed, nameKey } from './allow-list.ts';

export { type AllowList, isAddressAllowed, parseAllowList } from './allow-list.ts';

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

export class OutboundRefused extends Error {
  constructor(
    readonly code: 'URL_NOT_ALLOWED' | 'URL_INVALID',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

const BODY_LIMIT = 2048;
const RETRY_AFTER_CAP_MS = 3_600_000;

const notAllowed = (host: string) =>
  new OutboundRefused('URL_NOT_ALLOWED', `${host} is a private, local or reserved address; list it in WEBHOOK_ALLOW_HOSTS to allow it`);

/** The checks that need no DNS: shape, scheme, credentials, IP literals. Returns the bare host. */
function checkShape(url: string, allow: AllowList): { parsed: URL; host: string; listed: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OutboundRefused('URL_INVALID', 'not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new OutboundRefused('URL_INVALID', 'only http and https URLs');
  // Credentials in a URL end up in logs and Referer-like places; receivers authenticate by signature.
  if (parsed.username !== '' || parsed.password !== '')
    throw new OutboundRefused('URL_INVALID', 'the URL must not carry a user name or password');
  const host = bare(parsed.hostname);
  if (host === '') throw new OutboundRefused('URL_INVALID', 'the URL has no host');
  if (net.isIP(host) !== 0) {
    if (!isAddressAllowed(host, allow)) throw notAllowed(host);
    return { parsed, host, listed: false };
  }
  return { parsed, host, listed: allow.names.has(nameKey(host)) };
}

/** The save-time check: refuses a URL whose host is, or resolves to, an address we would not connect to. */
export async function checkUrl(url: string, allow: AllowList): Promise<void> {
  const { host, listed } = checkShape(url, allow);
  if (listed || net.isIP(host) !== 0) return;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    throw new OutboundRefused('URL_INVALID', `${host} does not resolve`);
  }
  if (addresses.length === 0) throw new OutboundRefused('URL_INVALID', `${host} does not resolve`);
  // Every answer counts: a name that mixes public and private answers is a rebinding trick.
  if (addresses.some((a) => !isAddressAllowed(a.address, allow))) {
    throw new OutboundRefused('URL_NOT_ALLOWED', `${host} resolves to a private, local or reserved address`);
  }
}

/** Resolves as dns.lookup does, but fails when any answer is not allowed: the checked address is the one connected to. */
function guardedLookup(allow: AllowList): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0 || addresses.some((a) => !isAddressAllowed(a.address, allow))) {
        return callback(new OutboundRefused('URL_NOT_ALLOWED', `${hostname} resolves to a private, local or reserved address`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

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

/** Trying several addresses in turn fails with an AggregateError whose own message is empty. */
function describe(err: Error): string {
  if (err.message) return err.message;
  if (err instanceof AggregateError) return err.errors.map((e: Error) => e.message).join('; ') || 'connection failed';
  return (err as NodeJS.ErrnoException).code ?? 'request failed';
}

/** One POST, no redirects, no retries. Resolves (never rejects), with `status: null` when nothing was answered. */
export function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { allow: AllowList; timeoutMs: number },
): Promise<OutboundResult> {
  const started = performance.now();
  const result = (r: Partial<OutboundResult>): OutboundResult => ({
    status: null,
    error: null,
    retryAfterMs: null,
    responseBody: '',
    refused: false,
    ...r,
    durationMs: Math.round(performance.now() - started),
  });
  let target: ReturnType<typeof checkShape>;
  try {
    target = checkShape(url, opts.allow);
    // request() throws on a bad header, and this function promises to resolve.
    for (const [name, value] of Object.entries(headers)) {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    }
  } catch (err) {
    return Promise.resolve(result({ error: (err as Error).message, refused: true }));
  }
  const { parsed, host, listed } = target;
  const bytes = Buffer.from(body, 'utf8');

  return new Promise((resolve) => {
    let status: number | null = null;
    let retryAfterMs: number | null = null;
    const chunks: Buffer[] = [];
    let kept = 0;
    let done = false;
    const finish = (r: Partial<OutboundResult>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(result({ status, retryAfterMs, responseBody: Buffer.concat(chunks).toString('utf8'), ...r }));
    };

    const request = parsed.protocol === 'https:' ? https.request : http.request;
    const req = request({
      method: 'POST',
      hostname: host,
      port: parsed.port === '' ? undefined : Number(parsed.port),
      path: `${parsed.pathname}${parsed.search}`,
      // A fresh connection per attempt, so the connect-time check below always runs.
      agent: false,
      lookup: listed ? undefined : guardedLookup(opts.allow),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Chorus-Hub',
        ...headers,
        'content-length': String(bytes.length),
      },
    });

    const timer = setTimeout(() => {
      // Once a status is in, a slow body only costs us the receiver's explanation.
      if (status !== null) finish({});
      else finish({ error: `timed out after ${opts.timeoutMs} ms` });
    }, opts.timeoutMs);

    req.on('socket', (socket) => {
      socket.once('connect', () => {
        // No peer means the socket is already gone, and the request fails as a network error.
        const peer = socket.remoteAddress;
        if (!listed && peer !== undefined && !isAddressAllowed(peer, opts.allow)) req.destroy(notAllowed(peer));
      });
    });
    req.on('error', (err) => {
      if (status !== null) return finish({});
      finish({ error: describe(err), refused: err instanceof OutboundRefused });
    });
    req.on('response', (res) => {
      status = res.statusCode ?? null;
      const header = res.headers['retry-after'];
      retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header);
      res.on('data', (chunk: Buffer) => {
        if (kept < BODY_LIMIT) {
          const part = chunk.subarray(0, BODY_LIMIT - kept);
          chunks.push(part);
          kept += part.length;
        }
        // The rest is not worth the bandwidth: drop the connection instead of draining it.
        if (kept >= BODY_LIMIT) finish({});
      });
      res.on('end', () => finish({}));
      res.on('error', () => finish({}));
    });
    req.end(bytes);
  });
}

/** Network trouble, time-outs, 408, 429 and 5xx may pass; a policy refusal or any other answer will not. */
export function isRetryable(r: OutboundResult): boolean {
  if (r.status === null) return !r.refused;
  return r.status === 408 || r.status === 429 || r.status >= 500;
}
