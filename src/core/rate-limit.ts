/**
 * Abuse limits (docs/security.md): fixed windows of `points` attempts per `durationSec`, kept
 * by the key-value port (rate-limiter-flexible over memory or Redis) so api processes share
 * them. Modules see only this shape; the store behind it lives in infra.
 */
import { tooManyRequests } from './errors.ts';

export interface RateRule {
  readonly points: number;
  readonly durationSec: number;
}

export interface RateLimit {
  readonly rule: RateRule;
  /** Counts one attempt under `key`; null while within the budget, else whole seconds until it frees. */
  hit(key: string): Promise<number | null>;
  /** Whether `key` already spent its budget, without counting: seconds to wait, or null. */
  spent(key: string): Promise<number | null>;
}

/** What the key-value port offers: one named limit (its name keeps its keys apart from others). */
export type RateLimitFactory = (name: string, rule: RateRule) => RateLimit;

/** Counts an attempt and refuses it with 429 RATE_LIMITED (and Retry-After) past the budget. */
export async function spendOrRefuse(limit: RateLimit, key: string, message: string): Promise<void> {
  const wait = await limit.hit(key);
  if (wait !== null) throw tooManyRequests(message, wait);
}
