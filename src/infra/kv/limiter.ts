/**
 * Rate limits behind the key-value port, on rate-limiter-flexible: its memory store for the
 * embedded key-value, its Redis store (the same ioredis client) when REDIS_URL is set, so every
 * api process counts into one budget. The memory store keeps time with Date.now(), not the
 * injected clock (docs/decisions.md): tests use small budgets rather than moving the clock.
 */
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { limitKey } from '../../core/client-address.ts';
import type { RateLimit, RateRule } from '../../core/rate-limit.ts';

const waitSeconds = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** Every limit keyed by a client address counts an IPv6 client by its /64 (limitKey); other keys pass as they are. */
function wrap(limiter: RateLimiterAbstract, rule: RateRule): RateLimit {
  return {
    rule,
    async hit(key) {
      try {
        await limiter.consume(limitKey(key));
        return null;
      } catch (err) {
        // A refusal is a RateLimiterRes; anything else is a store failure and reaches the caller.
        if (err instanceof RateLimiterRes) return waitSeconds(err);
        throw err;
      }
    },
    async spent(key) {
      const res = await limiter.get(limitKey(key));
      return res && res.consumedPoints >= rule.points ? waitSeconds(res) : null;
    },
  };
}

const keyPrefixOf = (prefix: string, name: string) => `${prefix}limit:${name}`;

export function createMemoryLimit(prefix: string, name: string, rule: RateRule): RateLimit {
  return wrap(new RateLimiterMemory({ keyPrefix: keyPrefixOf(prefix, name), points: rule.points, duration: rule.durationSec }), rule);
}

/** `redis` already prefixes every key with the kv prefix. */
export function createRedisLimit(redis: Redis, name: string, rule: RateRule): RateLimit {
  return wrap(
    new RateLimiterRedis({ storeClient: redis, keyPrefix: keyPrefixOf('', name), points: rule.points, duration: rule.durationSec }),
    rule,
  );
}
