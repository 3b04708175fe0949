import { type AllowList, OutboundRefused, type OutboundResponse, OutboundTooLarge, sendGuarded } from '../../../infra/outbound/index.ts';
import { UpstreamError } from './types.ts';

/** A photo we refuse for good (too large, not an image, a bomb): the candidate is skipped, nothing stored. */
export class RefusedImage extends Error {}

export interface Fetcher {
  json(url: string): Promise<unknown>;
  /** The body, at most maxBytes: a larger answer is cut off before it is all read. */
  bytes(url: string, maxBytes: number): Promise<{ body: Buffer; contentType: string }>;
}

/** Redirects a provider's answer may take (a CDN moving a thumbnail); each target is checked like the first URL. */
const MAX_REDIRECTS = 3;
const JSON_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Outbound requests of one provider: spaced at least `intervalMs` apart in this process (the
 * provider's rate limit), each bounded by `timeoutMs`. Real time here, not the injected clock:
 * the pacing is for the upstream's sake. Photo URLs come from the provider's answer, so every
 * request follows the hub's outbound policy (src/infra/outbound), as webhook deliveries do:
 * private, loopback and link-local addresses are refused after resolution and again at
 * connect time, unless listed in OUTBOUND_ALLOW_HOSTS, and so is every redirect target.
 */
export function createFetcher(opts: { intervalMs: number; timeoutMs: number; userAgent: string; allow: AllowList }): Fetcher {
  let next = 0;
  async function pace(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, next);
    next = at + opts.intervalMs;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }

  async function get(url: string, accept: string, maxBytes: number): Promise<OutboundResponse> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new RefusedImage('not a valid URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RefusedImage(`not an http(s) URL: ${u.protocol}`);
    await pace();
    let res: OutboundResponse;
    try {
      res = await sendGuarded(u.href, {
        allow: opts.allow,
        timeoutMs: opts.timeoutMs,
        headers: { accept, 'user-agent': opts.userAgent },
        maxBodyBytes: maxBytes,
        overflow: 'refuse',
        maxRedirects: MAX_REDIRECTS,
      });
    } catch (err) {
      // Policy and size refusals hold for good; the rest is upstream trouble the queue may retry.
      if (err instanceof OutboundRefused || err instanceof OutboundTooLarge) throw new RefusedImage(`${u.host}: ${(err as Error).message}`);
      throw new UpstreamError(`${u.host}: ${(err as Error).message}`);
    }
    if (res.status === 429 || res.status >= 500) throw new UpstreamError(`${u.host} answered ${res.status}`);
    if (res.status < 200 || res.status >= 300) throw new RefusedImage(`${u.host} answered ${res.status}`);
    if (!res.complete) throw new UpstreamError(`${u.host}: the answer was cut short`);
    return res;
  }

  return {
    async json(url) {
      const res = await get(url, 'application/json', JSON_MAX_BYTES);
      try {
        return JSON.parse(res.body.toString('utf8'));
      } catch {
        throw new UpstreamError(`${new URL(url).host}: the answer is not JSON`);
      }
    },
    async bytes(url, maxBytes) {
      const res = await get(url, 'image/jpeg, image/png, image/webp', maxBytes);
      const type = res.headers['content-type'];
      return { body: res.body, contentType: typeof type === 'string' ? type : '' };
    },
  };
}
