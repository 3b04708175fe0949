import { UpstreamError } from './types.ts';

/** A photo we refuse for good (too large, not an image, a bomb): the candidate is skipped, nothing stored. */
export class RefusedImage extends Error {}

export interface Fetcher {
  json(url: string): Promise<unknown>;
  /** The body, at most maxBytes: a larger answer is cut off before it is all read. */
  bytes(url: string, maxBytes: number): Promise<{ body: Buffer; contentType: string }>;
}

/**
 * Outbound requests of one provider: spaced at least `intervalMs` apart in this process (the
 * provider's rate limit), each bounded by `timeoutMs`. Real time here, not the injected clock:
 * the pacing is for the upstream's sake.
 */
export function createFetcher(opts: { intervalMs: number; timeoutMs: number; userAgent: string }): Fetcher {
  let next = 0;
  async function pace(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, next);
    next = at + opts.intervalMs;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }

  async function get(url: string, accept: string): Promise<Response> {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RefusedImage(`not an http(s) URL: ${u.protocol}`);
    await pace();
    let res: Response;
    try {
      res = await fetch(u, {
        headers: { accept, 'user-agent': opts.userAgent },
        signal: AbortSignal.timeout(opts.timeoutMs),
        redirect: 'follow',
      });
    } catch (err) {
      throw new UpstreamError(`${u.host}: ${(err as Error).message}`);
    }
    if (res.status === 429 || res.status >= 500) {
      await res.body?.cancel();
      throw new UpstreamError(`${u.host} answered ${res.status}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new RefusedImage(`${u.host} answered ${res.status}`);
    }
    return res;
  }

  return {
    async json(url) {
      const res = await get(url, 'application/json');
      const text = await readCapped(res, 4 * 1024 * 1024);
      try {
        return JSON.parse(text.toString('utf8'));
      } catch {
        throw new UpstreamError(`${new URL(url).host}: the answer is not JSON`);
      }
    },
    async bytes(url, maxBytes) {
      const res = await get(url, 'image/jpeg, image/png, image/webp');
      const declared = Number(res.headers.get('content-length') ?? NaN);
      if (Number.isFinite(declared) && declared > maxBytes) {
        await res.body?.cancel();
        throw new RefusedImage(`the image is ${declared} bytes, more than ${maxBytes}`);
      }
      return { body: await readCapped(res, maxBytes), contentType: res.headers.get('content-type') ?? '' };
    },
  };
}

async function readCapped(res: Response, maxBytes: number): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new RefusedImage(`the answer is more than ${maxBytes} bytes`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}
