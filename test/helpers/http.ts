import assert from 'node:assert/strict';

/** A small HTTP client for tests: every call goes over the network to the hub. */
export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface Credential {
  token?: string;
  cookie?: string;
  headers?: Record<string, string>;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; raw?: string | Buffer; as?: Credential | null; headers?: Record<string, string>; contentType?: string } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...(opts.as?.headers ?? {}), ...(opts.headers ?? {}) };
  if (opts.as?.token) headers.authorization = `Bearer ${opts.as.token}`;
  if (opts.as?.cookie) headers.cookie = opts.as.cookie;
  let body: string | Buffer | undefined;
  if (opts.raw !== undefined) {
    body = opts.raw;
    headers['content-type'] = opts.contentType ?? 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(base + '/api' + path, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('application/json') && text) parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

/** Binds call() to a hub URL. */
export function client(base: string) {
  return {
    get: <T = any>(path: string, as?: Credential | null) => call<T>(base, 'GET', path, { as }),
    post: <T = any>(path: string, body?: unknown, as?: Credential | null) => call<T>(base, 'POST', path, { body, as }),
    put: <T = any>(path: string, body?: unknown, as?: Credential | null) => call<T>(base, 'PUT', path, { body, as }),
    patch: <T = any>(path: string, body?: unknown, as?: Credential | null) => call<T>(base, 'PATCH', path, { body, as }),
    del: <T = any>(path: string, as?: Credential | null, body?: unknown) => call<T>(base, 'DELETE', path, { as, body }),
    call: <T = any>(method: string, path: string, opts: Parameters<typeof call>[3] = {}) => call<T>(base, method, path, opts),
  };
}

export function cookieFrom(res: Res): string {
  const set = res.headers.getSetCookie();
  const session = set.find((c) => c.startsWith('chorus_session='));
  if (!session) throw new Error('no session cookie in response');
  return session.split(';')[0];
}

/**
 * Asserts the one error shape (DESIGN §1.6): status, JSON {error: {code, message, details?}},
 * a readable message and no framework codes or stack frames. Returns the error object.
 */
export function assertError(res: Res, status: number, code: string): { code: string; message: string; details?: any } {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, 'error bodies are JSON');
  assert.equal(typeof res.body, 'object', `body is JSON: ${res.text}`);
  assert.deepEqual(Object.keys(res.body), ['error'], `only "error" at the top level: ${res.text}`);
  const err = res.body.error;
  const keys = Object.keys(err).sort();
  assert.ok(
    JSON.stringify(keys) === '["code","message"]' || JSON.stringify(keys) === '["code","details","message"]',
    `error has code, message and optionally details, got ${keys.join(',')}`,
  );
  assert.equal(err.code, code);
  assert.equal(typeof err.message, 'string');
  assert.ok(err.message.length > 0, 'message is not empty');
  assert.doesNotMatch(err.message, /FST_ERR|at .*\.ts:\d+/, 'no framework codes or stack frames leak');
  return err;
}

/** Distinct client addresses (sent as X-Forwarded-For), so per-IP limits of one test never touch another. */
export function ipSequence(prefix: string): () => string {
  let n = 0;
  return () => {
    n++;
    return `${prefix}.${Math.floor(n / 250)}.${(n % 250) + 1}`;
  };
}
