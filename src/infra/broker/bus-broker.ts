/**
 * Split mode (DESIGN.md §3): an `api` instance has no broker connection of its own. Its broker
 * commands (publish, provisionSatellite, revokeSatellite) travel over the internal event bus
 * (Redis pub/sub) as `broker.command`; the dispatcher, which holds the broker connection, runs
 * them and answers with `broker.command_result`. The api waits for that answer, so a command
 * resolves once the broker acknowledged it, as it does in full mode.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import type { Bus, BrokerCommand } from '../bus/index.ts';
import type { Broker, BrokerConfig } from './types.ts';
import { WS_PATH } from './embedded.ts';
import { isTopicSegment } from '../../protocol/topics.ts';
import { AppError } from '../../core/errors.ts';

/** No dispatcher answered a broker command in time: 503 BROKER_UNAVAILABLE over HTTP. */
export class BrokerUnavailableError extends AppError {
  constructor(message: string) {
    super(503, 'BROKER_UNAVAILABLE', message);
  }
}

/**
 * Where satellites dial when this process does not run the broker: MQTT_URL (Mosquitto), else the
 * dispatcher's embedded broker at MQTT_PORT / MQTT_WS_PORT on the CHORUS_PUBLIC_URL host (or on
 * MQTT_HOST when that names one host).
 */
export function advertisedBrokerUrls(config: BrokerConfig): { brokerUrl: string; wsUrl: string | null } {
  if (config.mqttUrl) {
    const u = new URL(config.mqttUrl);
    u.username = '';
    u.password = '';
    const url = u.toString().replace(/\/$/, '');
    return { brokerUrl: url, wsUrl: /^wss?:/.test(url) ? url : null };
  }
  const bind = config.mqttHost;
  const host =
    bind === '0.0.0.0' || bind === '::' || bind === '' ? new URL(config.publicUrl).hostname : net.isIPv6(bind) ? `[${bind}]` : bind;
  return { brokerUrl: `mqtt://${host}:${config.mqttPort}`, wsUrl: config.mqttWsPublicUrl ?? `ws://${host}:${config.mqttWsPort}${WS_PATH}` };
}

export interface BusBrokerOptions {
  /** How long a command waits for the dispatcher's answer (default 10 s). */
  timeoutMs?: number;
}

/** The api side: a Broker whose commands are executed by the dispatcher. */
export function createBusBroker(config: BrokerConfig, bus: Bus, opts: BusBrokerOptions = {}): Broker {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const pending = new Map<string, { resolve: () => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  let closed = false;
  const unsubscribe = bus.subscribe('broker.command_result', (r) => {
    const p = pending.get(r.id);
    if (!p) return; // another api instance's command, or a second dispatcher's late answer
    pending.delete(r.id);
    clearTimeout(p.timer);
    if (r.ok) p.resolve();
    else p.reject(new Error(`dispatcher: ${r.error ?? 'broker command failed'}`));
  });

  async function send(command: BrokerCommand, wait = true): Promise<void> {
    if (closed) throw new Error('broker is closed');
    const id = crypto.randomUUID();
    if (!wait) {
      await bus.publish('broker.command', { id, command });
      return;
    }
    const answered = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new BrokerUnavailableError(`No dispatcher answered the broker command "${command.op}" within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
    });
    try {
      await bus.publish('broker.command', { id, command });
    } catch (err) {
      const p = pending.get(id);
      if (p) clearTimeout(p.timer);
      pending.delete(id);
      answered.catch(() => {});
      throw new BrokerUnavailableError(`The event bus refused the broker command: ${(err as Error).message}`);
    }
    return answered;
  }

  const { brokerUrl, wsUrl } = advertisedBrokerUrls(config);
  return {
    kind: 'bus',
    brokerUrl,
    wsUrl,
    provisionSatellite: ({ satelliteId, tenantId, password }) => send({ op: 'provision', satelliteId, tenantId, password }),
    revokeSatellite: (satelliteId) => send({ op: 'revoke', satelliteId }),
    publish: (topic, payload, o = {}) => {
      const qos = o.qos ?? 1;
      const body =
        typeof payload === 'string'
          ? { payload, encoding: 'utf8' as const }
          : { payload: payload.toString('base64'), encoding: 'base64' as const };
      // QoS 0 is fire-and-forget on the broker too: no answer is awaited.
      return send({ op: 'publish', topic, ...body, qos }, qos > 0);
    },
    subscribe: async () => {
      throw new Error('an api instance has no broker subscriptions: the dispatcher subscribes and forwards over the bus');
    },
    async close() {
      closed = true;
      unsubscribe();
      for (const [id, p] of pending) {
        clearTimeout(p.timer);
        p.reject(new Error('broker is closed'));
        pending.delete(id);
      }
    },
  };
}

/**
 * The dispatcher side: runs every `broker.command` on the real broker and answers. Topics are
 * checked to lie under `chorus/` so the bus cannot be used to reach the broker's control topics.
 * Every dispatcher hears each command; the one that claims its id in the key-value store runs it,
 * so a publish reaches the satellite once and a provision is not repeated.
 */
export function startBrokerCommandExecutor(deps: {
  bus: Bus;
  broker: Broker;
  kv: { setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean> };
  onError: (err: unknown) => void;
}): () => void {
  const { bus, broker } = deps;
  return bus.subscribe('broker.command', (env) => {
    void (async () => {
      if (!(await deps.kv.setIfAbsent(`broker:command:${env.id}`, String(process.pid), 300).catch(() => true))) return;
      let error: string | undefined;
      try {
        const c = env.command;
        if (c.op === 'publish') {
          const parts = c.topic.split('/');
          if (parts.length !== 4 || parts[0] !== 'chorus' || !parts.slice(1).every(isTopicSegment))
            throw new Error(`refused topic "${c.topic}"`);
          const qos = c.qos === 0 || c.qos === 1 || c.qos === 2 ? c.qos : 1;
          await broker.publish(c.topic, c.encoding === 'base64' ? Buffer.from(c.payload, 'base64') : c.payload, { qos });
        } else if (c.op === 'provision') {
          await broker.provisionSatellite({ satelliteId: c.satelliteId, tenantId: c.tenantId, password: c.password });
        } else if (c.op === 'revoke') {
          await broker.revokeSatellite(c.satelliteId);
        } else {
          throw new Error(`unknown broker command "${(c as { op?: unknown }).op}"`);
        }
      } catch (err) {
        error = (err as Error).message;
        deps.onError(err);
      }
      await bus
        .publish('broker.command_result', error === undefined ? { id: env.id, ok: true } : { id: env.id, ok: false, error })
        .catch(deps.onError);
    })();
  });
}
