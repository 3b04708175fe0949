import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

export interface BusEvents {
  /** A satellite's effective config changed; the broker pushes it (satellite protocol "Config push"). */
  'satellite.config_changed': { tenantId: string; satelliteId: string; config: Record<string, unknown> };
  /** The offline monitor marked a satellite offline (once per silence); alert rules route it. */
  'satellite.offline': { tenantId: string; satelliteId: string; name: string; lastSeenAt: string };
  /** A live-audio chunk from a satellite (dispatcher/full live relay → the sockets watching, in api/full). */
  'satellite.live_audio': { tenantId: string; satelliteId: string; sessionId: string | null; audio: string };
  /** Split mode: a broker command from an api instance, executed by the dispatcher (src/infra/broker/bus-broker.ts). */
  'broker.command': BrokerCommandEnvelope;
  /** The dispatcher's answer to a broker.command. */
  'broker.command_result': { id: string; ok: boolean; error?: string };
  /** A detection the Detections page now lists, or one its team's votes just confirmed: alert rules evaluate it (src/modules/alerts). */
  'detection.announced': { trigger: 'announced' | 'confirmed'; detection: AnnouncedDetection };
  /** A team's alert rules changed: every process drops its cached copy. */
  'alerts.rules_changed': { tenantId: string };
  /** A state-changing request was answered: every process forgets the sign-ins it remembers (src/modules/auth/principal-cache.ts). */
  'auth.principals_changed': Record<string, never>;
  /** An event for a team's WebSocket clients (and hub admins'), from any process (src/modules/live). */
  'live.team_event': { tenantId: string; event: { type: string } & Record<string, unknown> };
}

export interface AnnouncedDetection {
  id: string;
  tenantId: string;
  satelliteId: string;
  satelliteName: string;
  speciesCode: string;
  scientificName: string;
  commonName: string;
  modelId: string | null;
  confidence: number;
  isRare: boolean;
  isFirstOfDay: boolean;
  isFirstOfSeason: boolean;
  detectedAt: string;
}

export type BrokerCommand =
  | { op: 'publish'; topic: string; payload: string; encoding: 'utf8' | 'base64'; qos: 0 | 1 | 2 }
  | { op: 'provision'; satelliteId: string; tenantId: string; password: string }
  | { op: 'revoke'; satelliteId: string };

export interface BrokerCommandEnvelope {
  id: string;
  command: BrokerCommand;
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
