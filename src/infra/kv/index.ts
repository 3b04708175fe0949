import { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import type { RateLimitFactory } from '../../core/rate-limit.ts';
import { createMemoryLimit, createRedisLimit } from './limiter.ts';

/** Key-value store with TTLs: rate limits, short-lived challenges, the service registry. */
export interface Kv {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  /** Sets only when absent; true when this call set it (single-use tokens, locks). */
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean>;
  /** Increments a counter, starting its TTL window on first use; returns the new count. */
  incr(key: string, ttlSeconds: number): Promise<number>;
  del(key: string): Promise<void>;
  /** Every live entry whose key starts with `prefix` (keys as given to set, without the store's prefix); order unspecified. */
  scan(prefix: string): Promise<Array<{ key: string; value: string }>>;
  /** A named abuse limit in this store: shared by every process that uses the same Redis. */
  limiter: RateLimitFactory;
  close(): Promise<void>;
}

/** In-memory store. Expiry reads the injected clock so tests can move past a TTL. */
export function createMemoryKv(clock: Clock, prefix: string): Kv {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  const live = (key: string) => {
    const e = entries.get(prefix + key);
    if (!e) return undefined;
    if (e.expiresAt <= clock.now().getTime()) {
      entries.delete(prefix + key);
      return undefined;
    }
    return e;
  };
  const put = (key: string, value: string, ttl: number) =>
    entries.set(prefix + key, { value, expiresAt: clock.now().getTime() + ttl * 1000 });
  return {
    kind: 'memory',
    async get(key) {
      return live(key)?.value ?? null;
    },
    async set(key, value, ttl) {
      put(key, value, ttl);
    },
    async setIfAbsent(key, value, ttl) {
      if (live(key)) return false;
      put(key, value, ttl);
      return true;
    },
    async incr(key, ttl) {
      const e = live(key);
      if (!e) {
        put(key, '1', ttl);
        return 1;
      }
      e.value = String(Number(e.value) + 1);
      return Number(e.value);
    },
    async del(key) {
      entries.delete(prefix + key);
    },
    async scan(start) {
      const out: Array<{ key: string; value: string }> = [];
      for (const full of [...entries.keys()]) {
        if (!full.startsWith(prefix + start)) continue;
        const key = full.slice(prefix.length);
        const e = live(key);
        if (e) out.push({ key, value: e.value });
      }
      return out;
    },
    limiter: (name, rule) => createMemoryLimit(prefix, name, rule),
    async close() {
      entries.clear();
    },
  };
}

/**
 * Redis store. Redis keeps its own time, so TTL-based rules that tests drive with the clock
 * must not depend on the KV expiring: services store absolute expiry times in the value too.
 */
export function createRedisKv(url: string, prefix: string): Kv {
  const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 2, lazyConnect: false });
  redis.on('error', () => {});
  return {
    kind: 'redis',
    get: (key) => redis.get(key),
    async set(key, value, ttl) {
      await redis.set(key, value, 'EX', ttl);
    },
    async setIfAbsent(key, value, ttl) {
      return (await redis.set(key, value, 'EX', ttl, 'NX')) === 'OK';
    },
    async incr(key, ttl) {
      const [[, count]] = (await redis.multi().incr(key).expire(key, ttl, 'NX').exec()) as [[unknown, number]];
      return count;
    },
    async del(key) {
      await redis.del(key);
    },
    async scan(start) {
      // SCAN's MATCH does not get ioredis' keyPrefix: the pattern names the full key, glob characters escaped.
      const match = (prefix + start).replace(/[*?[\]\\]/g, (c) => `\\${c}`) + '*';
      const keys = new Set<string>();
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 500);
        for (const k of batch) keys.add(k.slice(prefix.length));
        cursor = next;
      } while (cursor !== '0');
      if (keys.size === 0) return [];
      const list = [...keys];
      const values = await redis.mget(list);
      return list.flatMap((key, i) => (values[i] === null ? [] : [{ key, value: values[i]! }]));
    },
    limiter: (name, rule) => createRedisLimit(redis, name, rule),
    async close() {
      await redis.quit().catch(() => {});
    },
  };
}

export function createKv(opts: { redisUrl: string | null; kvPrefix: string }, clock: Clock): Kv {
  return opts.redisUrl ? createRedisKv(opts.redisUrl, opts.kvPrefix) : createMemoryKv(clock, opts.kvPrefix);
}
