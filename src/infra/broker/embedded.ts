/**
 * The embedded broker (DESIGN.md §2): Aedes inside the hub with a TCP listener and a WebSocket
 * listener at /mqtt. Satellites log in with username = satellite id, password = the secret minted
 * at registration (checked through SatelliteCredentialCheck), client id `satellite-{id}` or
 * `mobile-{id}`; each may publish and subscribe only under `chorus/{tenant}/{satellite}/`.
 * The hub's own client reaches Aedes through an in-memory stream and logs in with a random
 * per-process secret. MQTT 3.1.1 (Aedes has no MQTT 5).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { WebSocketServer, createWebSocketStream } from 'ws';
import type { Broker, SatelliteCredentialCheck } from './index.ts';
import { HubClient, createMqttClient, silentLog, type BrokerLog } from './hub-client.ts';
import { isTopicSegment, isUnderPrefix, isValidFilter, satellitePrefix } from './topics.ts';

export interface EmbeddedBrokerOptions {
  /** TCP port (0 = any free port). */
  readonly port: number;
  /** WebSocket port (0 = any free port), path /mqtt. */
  readonly wsPort: number;
  /** Bind address of both listeners. */
  readonly host: string;
  /** The hub's public URL: its host name is what satellites dial when the bind address is a wildcard. */
  readonly publicUrl: string;
  readonly check: SatelliteCredentialCheck;
  readonly log?: BrokerLog;
}

/** The hub's login; its client id is `chorus-hub-{random}`. Not a valid satellite id form. */
export const HUB_USERNAME = '$chorus-hub';
const HUB_CLIENT_PREFIX = 'chorus-hub-';
export const WS_PATH = '/mqtt';

type Identity = { kind: 'hub' } | { kind: 'satellite'; satelliteId: string; tenantId: string; prefix: string };

// MQTT 3.1.1 CONNACK return codes (aedes declares them as an ambient const enum).
const IDENTIFIER_REJECTED = 2;
const SERVER_UNAVAILABLE = 3;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

function authError(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

/** Two connected in-memory streams (node 20 has no stream.duplexPair). */
function duplexPair(): [Duplex, Duplex] {
  const make = (peer: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk, _enc, cb) {
        peer().push(chunk);
        cb();
      },
      final(cb) {
        peer().push(null);
        cb();
      },
      destroy(err, cb) {
        const p = peer();
        if (!p.destroyed) p.destroy();
        cb(err);
      },
    });
  const a: Duplex = make(() => b);
  const b: Duplex = make(() => a);
  return [a, b];
}

function advertisedHost(bindHost: string, publicUrl: string): string {
  if (bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '') return new URL(publicUrl).hostname;
  return net.isIPv6(bindHost) ? `[${bindHost}]` : bindHost;
}

function listen(server: net.Server, port: number, host: string, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(new Error(`embedded MQTT broker: cannot listen for ${what} on ${host}:${port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function createEmbeddedBroker(opts: EmbeddedBrokerOptions): Promise<Broker> {
  const log = opts.log ?? silentLog;
  const secretText = crypto.randomBytes(32).toString('hex');
  const secret = Buffer.from(secretText);
  const hubClientId = HUB_CLIENT_PREFIX + crypto.randomBytes(8).toString('hex');
  const identities = new WeakMap<Client, Identity>();
  /** Satellites whose access was revoked in this process; provisioning lifts it. */
  const revoked = new Set<string>();
  /** Bumped on every provision and revoke, so a login whose check straddles one is refused. */
  const generations = new Map<string, number>();
  const generation = (id: string) => generations.get(id) ?? 0;

  const aedes = await Aedes.createBroker({
    id: `chorus-${crypto.randomBytes(4).toString('hex')}`,
    connectTimeout: 10_000,
    maxClientsIdLength: 128,

    authenticate(client, username, password, done) {
      if (!username || !password) return done(authError(BAD_USERNAME_OR_PASSWORD, 'username and password required'), null);
      if (username === HUB_USERNAME) {
        const ok = client.id === hubClientId && password.length === secret.length && crypto.timingSafeEqual(password, secret);
        if (!ok) return done(authError(BAD_USERNAME_OR_PASSWORD, 'bad hub credentials'), null);
        identities.set(client, { kind: 'hub' });
        return done(null, true);
      }
      if (!isTopicSegment(username)) return done(authError(BAD_USERNAME_OR_PASSWORD, 'bad username'), null);
      if (client.id !== `satellite-${username}` && client.id !== `mobile-${username}`) {
        return done(authError(IDENTIFIER_REJECTED, 'client id must be satellite-{id} or mobile-{id} of the username'), null);
      }
      if (revoked.has(username)) return done(authError(NOT_AUTHORIZED, 'access revoked'), null);
      const gen = generation(username);
      opts.check(username, password.toString('utf8')).then(
        (found) => {
          if (!found || !isTopicSegment(found.tenantId)) return done(authError(BAD_USERNAME_OR_PASSWORD, 'bad credentials'), null);
          if (revoked.has(username)) return done(authError(NOT_AUTHORIZED, 'access revoked'), null);
          // Credentials rotated while we checked: let the client retry against the new state.
          if (gen !== generation(username)) return done(authError(SERVER_UNAVAILABLE, 'credentials changed, retry'), null);
          identities.set(client, {
            kind: 'satellite',
            satelliteId: username,
            tenantId: found.tenantId,
            prefix: satellitePrefix(found.tenantId, username),
          });
          done(null, true);
        },
        (err) => {
          log.warn({ err, satelliteId: username }, 'broker: credential check failed');
          done(authError(SERVER_UNAVAILABLE, 'credential check failed'), null);
        },
      );
    },

    // A refusal drops the message and closes the client (MQTT-3.3.5-2: nothing tells it why).
    authorizePublish(client, packet, callback) {
      const id = client ? identities.get(client) : undefined;
      if (!id) return callback(new Error('not authenticated'));
      if (packet.topic.startsWith('$')) return callback(new Error(`${packet.topic}: reserved topic`));
      if (id.kind === 'hub') return callback(null);
      if (!isUnderPrefix(id.prefix, packet.topic)) return callback(new Error(`${packet.topic}: outside ${id.prefix}`));
      callback(null);
    },

    // A refusal negates the subscription (granted 128) and keeps the client connected.
    authorizeSubscribe(client, sub, callback) {
      const id = identities.get(client);
      if (!id || !isValidFilter(sub.topic)) return callback(null, null);
      if (id.kind === 'hub') return callback(null, sub);
      callback(null, isUnderPrefix(id.prefix, sub.topic) ? sub : null);
    },
  });
  (aedes as unknown as NodeJS.EventEmitter).on('error', (err: Error) => log.warn({ err }, 'broker: aedes error'));

  /** Closes every live session of a satellite (both client id forms). */
  async function kick(satelliteId: string): Promise<void> {
    const clients = (aedes as unknown as { clients: Record<string, Client | undefined> }).clients;
    await Promise.all(
      [`satellite-${satelliteId}`, `mobile-${satelliteId}`].map((cid) => {
        const c = clients[cid];
        return c ? new Promise<void>((resolve) => c.close(() => resolve())) : undefined;
      }),
    );
  }

  // Listeners.
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    aedes.handle(socket);
  });
  const web = http.createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end(`MQTT over WebSocket at ${WS_PATH}\n`);
  });
  const wss = new WebSocketServer({ server: web, path: WS_PATH, perMessageDeflate: false });
  wss.on('connection', (ws, req) => {
    const stream = createWebSocketStream(ws);
    stream.on('error', () => {}); // an abrupt close; aedes sees the stream end
    aedes.handle(stream, req);
  });
  wss.on('error', (err) => log.warn({ err }, 'broker: websocket server error'));

  let hub: HubClient | undefined;
  const shutdown = async () => {
    await hub?.close();
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    for (const s of sockets) s.destroy();
    for (const ws of wss.clients) ws.terminate();
    await Promise.all([
      new Promise<void>((resolve) => (tcp.listening ? tcp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => wss.close(() => resolve())),
      new Promise<void>((resolve) => {
        if (!web.listening) return resolve();
        web.close(() => resolve());
        web.closeAllConnections();
      }),
    ]);
  };

  let port: number;
  let wsPort: number;
  try {
    port = await listen(tcp, opts.port, opts.host, 'MQTT (MQTT_PORT)');
    wsPort = await listen(web, opts.wsPort, opts.host, 'MQTT over WebSocket (MQTT_WS_PORT)');
    hub = await HubClient.start(
      createMqttClient(
        () => {
          const [hubEnd, brokerEnd] = duplexPair();
          aedes.handle(brokerEnd);
          return hubEnd;
        },
        HubClient.options({ clientId: hubClientId, username: HUB_USERNAME, password: secretText }),
      ),
      log,
      'embedded MQTT broker: hub client',
    );
  } catch (err) {
    await shutdown().catch(() => {});
    throw err;
  }
  const hubClient = hub;

  const host = advertisedHost(opts.host, opts.publicUrl);
  let closed = false;
  return {
    kind: 'embedded',
    brokerUrl: `mqtt://${host}:${port}`,
    wsUrl: `ws://${host}:${wsPort}${WS_PATH}`,

    async provisionSatellite({ satelliteId, tenantId }) {
      if (!isTopicSegment(satelliteId) || !isTopicSegment(tenantId)) throw new Error('satellite and tenant ids must be single topic levels');
      generations.set(satelliteId, generation(satelliteId) + 1);
      revoked.delete(satelliteId);
      await kick(satelliteId); // the password rotated: sessions on the old one end
    },

    async revokeSatellite(satelliteId) {
      generations.set(satelliteId, generation(satelliteId) + 1);
      revoked.add(satelliteId);
      await kick(satelliteId);
    },

    publish: (topic, payload, o) => hubClient.publish(topic, payload, o?.qos ?? 0),
    subscribe: (pattern, handler, o) => hubClient.subscribe(pattern, handler, o?.qos ?? 0),

    async close() {
      if (closed) return;
      closed = true;
      await shutdown();
    },
  };
}
