import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

export interface BusEvents {
  /** A satellite's effective config changed; the broker pushes it (satellite protocol "Config push"). */
  'satellite.config_changed': { tenantId: string; satelliteId: string; config: Record<string, unknown> };
}

export type BusTopic = keyof BusEvents;

/**
 * The internal event bus (api ⇄ dispatcher). Publishers fire after their transaction commits;
 * handlers must not assume they run in the publishing process.
 */
export interface Bus {
  publish<T extends BusTopic>(topic: T, payload: BusEvents[T]): Promise<void>;
  subscribe<T extends BusTopic>(topic: T, handler: (payload: BusEvents[T]) => void): () => void;
  close(): Promise<void>;
}

export function createMemoryBus(): Bus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(topic, payload) {
      emitter.emit(topic, payload);
    },
    subscribe(topic, handler) {
      emitter.on(topic, handler as (p: unknown) => void);
      return () => emitter.off(topic, handler as (p: unknown) => void);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

/** Redis pub/sub: one connection publishes, one subscribes; channels carry the key prefix. */
export function createRedisBus(url: string, prefix: string): Bus {
  const pub = new Redis(url, { maxRetriesPerRequest: 2 });
  const sub = new Redis(url, { maxRetriesPerRequest: null });
  pub.on('error', () => {});
  sub.on('error', () => {});
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const subscribed = new Set<string>();
  sub.on('message', (channel: string, message: string) => {
    if (!channel.startsWith(prefix)) return;
    try {
      local.emit(channel.slice(prefix.length), JSON.parse(message));
    } catch {
      // A malformed message on our channel is dropped, never fatal.
    }
  });
  return {
    async publish(topic, payload) {
      await pub.publish(prefix + topic, JSON.stringify(payload));
    },
    subscribe(topic, handler) {
      if (!subscribed.has(topic)) {
        subscribed.add(topic);
        void sub.subscribe(prefix + topic);
      }
      local.on(topic, handler as (p: unknown) => void);
      return () => local.off(topic, handler as (p: unknown) => void);
    },
    async close() {
      local.removeAllListeners();
      await Promise.allSettled([pub.quit(), sub.quit()]);
    },
  };
}

export function createBus(opts: { redisUrl: string | null; kvPrefix: string }): Bus {
  return opts.redisUrl ? createRedisBus(opts.redisUrl, opts.kvPrefix + 'bus:') : createMemoryBus();
}
