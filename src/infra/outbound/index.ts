/**
 * Outbound HTTP to addresses the hub did not choose itself: webhook URLs typed in by team admins,
 * photo URLs named in a provider's answer. Each could be an attempt to reach the hub's own
 * network (SSRF), so every request here follows one policy (docs/security.md "Outbound requests"):
 *
 * - http and https only, no credentials in the URL;
 * - only public unicast addresses, unless the operator lists a host, address or range in
 *   OUTBOUND_ALLOW_HOSTS; a name is resolved once, every answer must pass, and the address
 *   connected to is checked again on the socket (no DNS rebinding between check and connect);
 * - redirects are not followed unless the caller allows some, and then each target passes the
 *   same checks as the first URL;
 * - one time limit for the whole exchange, redirects included, and a cap on the body read.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { type AllowList, bare, isAddressAllowed, nameKey } from '../../core/outbound-allow-list.ts';

export { type AllowList, isAddressAllowed, parseAllowList } from '../../core/outbound-allow-list.ts';

/** Policy, not the network, stopped the request: trying again cannot help. */
export class OutboundRefused extends Error {
  constructor(
    readonly code: 'URL_NOT_ALLOWED' | 'URL_INVALID' | 'REQUEST_INVALID',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

/** The answer's body is larger than the caller accepts (`overflow: 'refuse'`). */
export class OutboundTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundTooLarge';
  }
}

/** Nothing (or no status) came back within the time limit. */
export class OutboundTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundTimeout';
  }
}

export interface OutboundOptions {
  allow: AllowList;
  /** The whole exchange, every redirect included: first connect to last byte. */
  timeoutMs: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Buffer;
  /** Bytes of the answer's body read at most. */
  maxBodyBytes: number;
  /** `truncate`: keep the first maxBodyBytes and drop the connection; `refuse`: fail with OutboundTooLarge. */
  overflow: 'truncate' | 'refuse';
  /** Redirects followed (default 0: a 3xx is the answer). */
  maxRedirects?: number;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** False when the body was cut short: by the byte cap (`truncate`), the time limit or a broken connection. */
  complete: boolean;
  /** The URL that answered, after any redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const notAllowed = (host: string) =>
  new OutboundRefused('URL_NOT_ALLOWED', `${host} is a private, local or reserved address; list it in OUTBOUND_ALLOW_HOSTS to allow it`);

/** The checks that need no DNS: shape, scheme, credentials, IP literals. */
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

/** Trying several addresses in turn fails with an AggregateError whose own message is empty. */
function describeError(err: Error): string {
  if (err.message) return err.message;
  if (err instanceof AggregateError) return err.errors.map((e: Error) => e.message).join('; ') || 'connection failed';
  return (err as NodeJS.ErrnoException).code ?? 'request failed';
}

type Hop = { redirect: string; status: number } | { response: OutboundResponse };

/** One request to one URL under the policy; a followable redirect comes back as its target. */
function hop(url: string, method: string, body: Buffer | undefined, o: OutboundOptions, deadline: number, follow: boolean): Promise<Hop> {
  const { parsed, host, listed } = checkShape(url, o.allow);
  const remaining = Math.ceil(deadline - performance.now());
  if (remaining <= 0) return Promise.reject(new OutboundTimeout(`timed out after ${o.timeoutMs} ms`));

  return new Promise((resolve, reject) => {
    let response: http.IncomingMessage | null = null;
    const chunks: Buffer[] = [];
    let kept = 0;
    let done = false;
    const settle = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      fn();
    };
    const answer = (complete: boolean) =>
      settle(() =>
        resolve({
          response: { status: response!.statusCode ?? 0, headers: response!.headers, body: Buffer.concat(chunks), complete, url },
        }),
      );
    const fail = (err: Error) => settle(() => reject(err));

    const request = parsed.protocol === 'https:' ? https.request : http.request;
    const headers: Record<string, string> = { ...o.headers };
    if (body !== undefined) headers['content-length'] = String(body.length);
    const req = request({
      method,
      hostname: host,
      port: parsed.port === '' ? undefined : Number(parsed.port),
      path: `${parsed.pathname}${parsed.search}`,
      // A fresh connection per request, so the connect-time check below always runs.
      agent: false,
      lookup: listed ? undefined : guardedLookup(o.allow),
      headers,
    });

    const timer = setTimeout(() => {
      // Once a status is in, the caller decides what a cut-short body is worth.
      if (response !== null) answer(false);
      else fail(new OutboundTimeout(`timed out after ${o.timeoutMs} ms`));
    }, remaining);

    req.on('socket', (socket) => {
      socket.once('connect', () => {
        // No peer means the socket is already gone, and the request fails as a network error.
        const peer = socket.remoteAddress;
        if (!listed && peer !== undefined && !isAddressAllowed(peer, o.allow)) req.destroy(notAllowed(peer));
      });
    });
    req.on('error', (err) => {
      if (response !== null) return answer(false);
      const e = err instanceof OutboundRefused ? err : new Error(describeError(err));
      fail(e);
    });
    req.on('response', (res) => {
      response = res;
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (follow && REDIRECTS.has(status) && typeof location === 'string' && location !== '') {
        let target: string;
        try {
          target = new URL(location, url).href;
        } catch {
          return fail(new OutboundRefused('URL_INVALID', 'the redirect target is not a valid URL'));
        }
        return settle(() => resolve({ redirect: target, status }));
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (o.overflow === 'refuse' && Number.isFinite(declared) && declared > o.maxBodyBytes) {
        return fail(new OutboundTooLarge(`the answer is ${declared} bytes, more than ${o.maxBodyBytes}`));
      }
      res.on('data', (chunk: Buffer) => {
        if (done) return;
        const room = o.maxBodyBytes - kept;
        if (chunk.length > room) {
          if (o.overflow === 'refuse') return fail(new OutboundTooLarge(`the answer is more than ${o.maxBodyBytes} bytes`));
          chunks.push(chunk.subarray(0, room));
          kept += room;
          // The rest is not worth the bandwidth: drop the connection instead of draining it.
          return answer(false);
        }
        chunks.push(chunk);
        kept += chunk.length;
      });
      res.on('end', () => answer(true));
      res.on('error', () => answer(false));
    });
    req.end(body);
  });
}

/**
 * One request under the outbound policy. Rejects with OutboundRefused (policy: never worth a
 * retry), OutboundTimeout, OutboundTooLarge, or an Error naming the network failure; any status
 * resolves, including a 3xx past `maxRedirects`.
 */
export async function sendGuarded(url: string, o: OutboundOptions): Promise<OutboundResponse> {
  for (const [name, value] of Object.entries(o.headers ?? {})) {
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch (err) {
      throw new OutboundRefused('REQUEST_INVALID', (err as Error).message);
    }
  }
  const deadline = performance.now() + o.timeoutMs;
  const max = o.maxRedirects ?? 0;
  let current = url;
  let method: string = o.method ?? 'GET';
  let body = o.body;
  for (let redirects = 0; ; redirects++) {
    const r = await hop(current, method, body, o, deadline, redirects < max);
    if ('response' in r) return r.response;
    // As browsers do: a 303, or a 301/302 after a POST, continues as a GET without the body.
    if (r.status === 303 || ((r.status === 301 || r.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
    current = r.redirect;
  }
}
