/**
 * One MQTT connection per Home Assistant channel (issue 38), kept between deliveries: a team's
 * detections come seconds apart, and a connect per message would cost a TLS handshake each.
 * A connection is keyed by the channel and its settings, so a channel whose broker or login
 * changed gets a new one (in every process, not only the one that saved it); one unused for a
 * while is closed. mqtt.js reconnects a dropped connection by itself.
 */
import crypto from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { checkUrl, type AllowList } from '../../../infra/outbound/index.ts';
import { brokerPolicyUrl } from '../channel-config.ts';

export interface BrokerLogin {
  brokerUrl: string;
  username: string | null;
  password: string | null;
}

export interface BrokerConnection {
  client: MqttClient;
  /** Satellites whose discovery configs this connection has published (each connection once: the broker may have lost them). */
  discovered: Set<string>;
  /** Newest detection time published per satellite: an older retry never overwrites a newer retained state. */
  newest: Map<string, number>;
}

interface Held extends BrokerConnection {
  key: string;
  lastUsed: number;
}

/** Refused by the broker for the login (MQTT 3.1.1 codes 4 and 5; MQTT 5 codes 134 and 135): retrying cannot help. */
const AUTH_CODES = new Set([4, 5, 134, 135]);

export class BrokerRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrokerRefused';
  }
}

const IDLE_MS = 10 * 60_000;

const keyOf = (login: BrokerLogin) =>
  crypto
    .createHash('sha256')
    .update(JSON.stringify([login.brokerUrl, login.username, login.password]))
    .digest('hex');

export function createMqttClients(opts: { connectTimeoutMs: number }) {
  const held = new Map<string, Held>();

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, h] of held) if (now - h.lastUsed > IDLE_MS) close(id);
  }, 60_000);
  sweep.unref();

  function close(channelId: string) {
    const h = held.get(channelId);
    if (!h) return;
    held.delete(channelId);
    h.client.end(true);
  }

  /** Waits for the client's connection (the first, or a reconnect in progress) up to the time limit. */
  function connected(client: MqttClient): Promise<void> {
    if (client.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error('the broker did not answer in time')), opts.connectTimeoutMs);
      const onConnect = () => done(null);
      const onError = (err: Error & { code?: number | string }) =>
        done(
          typeof err.code === 'number' && AUTH_CODES.has(err.code)
            ? new BrokerRefused(`the broker refused the login: ${err.message}`)
            : err,
        );
      const done = (err: Error | null) => {
        clearTimeout(timer);
        client.off('connect', onConnect);
        client.off('error', onError);
        if (err) reject(err);
        else resolve();
      };
      client.on('connect', onConnect);
      client.on('error', onError);
    });
  }

  /**
   * The channel's live connection, opened when there is none (or its settings changed). The
   * broker's host passes the hub's outbound address policy before each new connection.
   */
  async function acquire(channelId: string, login: BrokerLogin, allow: AllowList): Promise<BrokerConnection> {
    const key = keyOf(login);
    let h = held.get(channelId);
    if (h && h.key !== key) {
      close(channelId);
      h = undefined;
    }
    if (!h) {
      await checkUrl(brokerPolicyUrl(new URL(login.brokerUrl)), allow);
      const client = mqtt.connect(login.brokerUrl, {
        protocolVersion: 4,
        clientId: `chorus-${channelId.slice(0, 8)}-${crypto.randomBytes(4).toString('hex')}`,
        ...(login.username ? { username: login.username } : {}),
        ...(login.password ? { password: login.password } : {}),
        connectTimeout: opts.connectTimeoutMs,
        reconnectPeriod: 5_000,
        clean: true,
      });
      // Errors are reported by the delivery that meets them; without a listener mqtt.js would throw.
      client.on('error', () => {});
      h = { key, client, discovered: new Set(), newest: new Map(), lastUsed: Date.now() };
      held.set(channelId, h);
    }
    h.lastUsed = Date.now();
    try {
      await connected(h.client);
    } catch (err) {
      // A refused login or a broker that never answered: the next attempt starts afresh.
      close(channelId);
      throw err;
    }
    return h;
  }

  return {
    acquire,
    /** The channel was deleted or changed: its connection goes now (other processes notice the change by its key). */
    close,
    closeAll() {
      clearInterval(sweep);
      for (const id of [...held.keys()]) close(id);
    },
  };
}

export type MqttClients = ReturnType<typeof createMqttClients>;
