import { PartUnavailable } from '../../core/errors.ts';

/** Connection failures (node's socket errors, PostgreSQL's class 08 and shutdown codes), not errors of a statement. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
]);
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end|connection error|the embedded database thread stopped|PGlite is closed/i;

export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof PartUnavailable) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  return CONNECTION_MESSAGES.test(err.message);
}

/** Rethrows `err`, as PartUnavailable('database') when it is a lost connection (a promise's catch handler: no extra async frame per statement). */
export function rethrowUnavailable(err: unknown): never {
  throw isConnectionFailure(err) ? new PartUnavailable('database', err) : err;
}
