/**
 * The embedded broker (DESIGN.md §2): Aedes inside the hub with a TCP listener and a WebSocket
 * listener at /mqtt. Satellites log in with username = satellite id, password = the secret minted
 * at registration (checked through SatelliteCredentialCheck), client id `satellite-{id}` or
 * `mobile-{id}`; each may publish and subscribe only under `chorus/{tenant}/{satellite}/`.
 * The hub itself is no MQTT client here: it subscribes and publishes inside Aedes (its in-process
 * emitter), so a 384 KB audio message is handed over as the buffer Aedes parsed, not encoded
 * again into a stream and parsed a second time (the ingest bench's second-largest cost).
 * MQTT 3.1.1 (Aedes has no MQTT 5).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes, type AedesPublishPacket, type AuthenticateError, type Client } from 'aedes';
import type { Duplex } from 'node:stream';
import { WebSocketServer, createWebSocketStream } from 'ws';
import type { Broker, BrokerLog, MessageHandler, SatelliteCredentialCheck } from './types.ts';
import { silentLog } from './hub-client.ts';
import { PacketGuard, type PacketViolation } from './packet-guard.ts';
import { peerAddressRule, type PeerAddress } from './peer.ts';
import { limitKey } from '../../core/client-address.ts';
import type { RateLimit } from '../../core/rate-limit.ts';
import { MQTT_MAX_CONNECT_BYTES, MQTT_MAX_PACKET_BYTES } from '../../protocol/limits.ts';
import { isTopicSegment, isUnderPrefix, isValidFilter, satellitePrefix, topicMatches, type Qos } from '../../protocol/topics.ts';

export interface EmbeddedBrokerOptions {
  /** TCP port (0 = any free port). */
  readonly port: number;
  /** WebSocket port (0 = any free port), path /mqtt. */
  readonly wsPort: number;
  /** Bind address of both listeners. */
  readonly host: string;
  /** The hub's public URL: its host name is what satellites dial when the bind address is a wildcard. */
  readonly publicUrl: string;
  /** The WebSocket address handed to satellites when it is not this listener's own (a TLS proxy in front). */
  readonly wsPublicUrl?: string | null;
  readonly check: SatelliteCredentialCheck;
  readonly log?: BrokerLog;
  /**
   * Refused logins per client id and client address; once a pair spent it, that pair is refused
   * before any check (other client ids from the same address still log in).
   */
  readonly failures?: RateLimit;
  /** Names a client's address (default: the socket peer); see peer.ts for the WebSocket proxy rule. */
  readonly peerAddress?: PeerAddress;
  /** Largest packet a logged-in satellite may send (default MQTT_MAX_PACKET_BYTES); larger ones close it. */
  readonly maxPacketBytes?: number;
}

/** The name the hub's own login had; refused, as any name that is not a topic level. */
export const HUB_USERNAME = '$chorus-hub';
export const WS_PATH = '/mqtt';

type Identity = { satelliteId: string; tenantId: string; prefix: string };

// MQTT 3.1.1 CONNACK return codes (aedes declares them as an ambient const enum).
const IDENTIFIER_REJECTED = 2;
const SERVER_UNAVAILABLE = 3;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

function authError(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

const PACKET_TYPES: Record<number, string> = { 1: 'CONNECT', 3: 'PUBLISH', 8: 'SUBSCRIBE' };

function advertisedHost(bindHost: string, publicUrl: string): string {
  if (bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '') return new URL(publicUrl).hostname;
  return net.isIPv6(bindHost) ? `[${bindHost}]` : bindHost;
}

function listen(server: net.Server, port: number, host: string, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) =>
      reject(new Error(`embedded MQTT broker: cannot listen for ${what} on ${host}:${port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function createEmbeddedBroker(opts: EmbeddedBrokerOptions): Promise<Broker> {
  const log = opts.log ?? silentLog;
  const addressOf = opts.peerAddress ?? peerAddressRule({ kind: 'none' });
  const peerAddress = (client: Client) =>
    addressOf((client.conn as { remoteAddress?: string }).remoteAddress, client.req as http.IncomingMessage | undefined);
  const identities = new WeakMap<Client, Identity>();
  /** Satellites whose access was revoked in this process; provisioning lifts it. */
  const revoked = new Set<string>();
  /** Bumped on every provision and revoke, so a login whose check straddles one is refused. */
  const generations = new Map<string, number>();
  const generation = (id: string) => generations.get(id) ?? 0;

  /** The login rule: satellite id, client id of that id, not revoked, the minted secret. */
  function checkLogin(
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
    refuse: (returnCode: number, message: string) => void,
  ): void {
    if (!username || !password) return refuse(BAD_USERNAME_OR_PASSWORD, 'username and password required');
    if (!isTopicSegment(username)) return refuse(BAD_USERNAME_OR_PASSWORD, 'bad username');
    if (client.id !== `satellite-${username}` && client.id !== `mobile-${username}`) {
      return refuse(IDENTIFIER_REJECTED, 'client id must be satellite-{id} or mobile-{id} of the username');
    }
    if (revoked.has(username)) return refuse(NOT_AUTHORIZED, 'access revoked');
    const gen = generation(username);
    opts.check(username, password.toString('utf8')).then(
      (found) => {
        if (!found || !isTopicSegment(found.tenantId)) return refuse(BAD_USERNAME_OR_PASSWORD, 'bad credentials');
        if (revoked.has(username)) return refuse(NOT_AUTHORIZED, 'access revoked');
        // Credentials rotated while we checked: let the client retry against the new state.
        if (gen !== generation(username)) return done(authError(SERVER_UNAVAILABLE, 'credentials changed, retry'), null);
        identities.set(client, {
          satelliteId: username,
          tenantId: found.tenantId,
          prefix: satellitePrefix(found.tenantId, username),
        });
        if (client.conn instanceof PacketGuard) client.conn.loginSucceeded();
        done(null, true);
      },
      (err) => {
        log.warn({ err, satelliteId: username }, 'broker: credential check failed');
        done(authError(SERVER_UNAVAILABLE, 'credential check failed'), null);
      },
    );
  }

  const aedes = await Aedes.createBroker({
    id: `chorus-${crypto.randomBytes(4).toString('hex')}`,
    connectTimeout: 10_000,
    maxClientsIdLength: 128,

    authenticate(client, username, password, done) {
      // Per client id and address: a flood of bad logins behind a shared NAT or proxy spends its
      // own pair's budget, not the fleet's (issue 33 item 6).
      // An IPv6 client counts by its /64, as the HTTP limits count it.
      const key = `${limitKey(peerAddress(client))} ${client.id}`;
      const refuse = (returnCode: number, message: string) => {
        opts.failures?.hit(key).catch((err: unknown) => log.warn({ err }, 'broker: failure count not kept'));
        done(authError(returnCode, message), null);
      };
      if (!opts.failures) return checkLogin(client, username, password, done, refuse);
      opts.failures.spent(key).then(
        (wait) =>
          wait === null
            ? checkLogin(client, username, password, done, refuse)
            : done(authError(NOT_AUTHORIZED, `too many refused logins for this client id from this address; retry in ${wait} s`), null),
        () => checkLogin(client, username, password, done, refuse),
      );
    },

    // A refusal drops the message and closes the client (MQTT-3.3.5-2: nothing tells it why).
    authorizePublish(client, packet, callback) {
      const id = client ? identities.get(client) : undefined;
      if (!id) return callback(new Error('not authenticated'));
      if (packet.topic.startsWith('$')) return callback(new Error(`${packet.topic}: reserved topic`));
      if (!isUnderPrefix(id.prefix, packet.topic)) return callback(new Error(`${packet.topic}: outside ${id.prefix}`));
      // Aedes would keep a retained message in memory and hand it to every later subscriber: the
      // protocol uses none, so a satellite asking for one is misbehaving (issue 33 item 5).
      if (packet.retain) {
        log.warn({ satelliteId: id.satelliteId, topic: packet.topic }, 'broker: retained publish refused; closing the client');
        return callback(new Error(`${packet.topic}: retained messages are refused`));
      }
      callback(null);
    },

    // A refusal negates the subscription (granted 128) and keeps the client connected.
    authorizeSubscribe(client, sub, callback) {
      const id = identities.get(client);
      if (!id || !isValidFilter(sub.topic)) return callback(null, null);
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

  // Listeners. Each connection passes a size check before Aedes parses it (packet-guard.ts).
  const caps = { beforeLogin: MQTT_MAX_CONNECT_BYTES, afterLogin: opts.maxPacketBytes ?? MQTT_MAX_PACKET_BYTES };
  const guard = (inner: Duplex, address: () => string) =>
    new PacketGuard(inner, caps, (v: PacketViolation) =>
      log.warn(
        {
          address: address(),
          packet: v.type === null ? 'malformed' : (PACKET_TYPES[v.type] ?? v.type),
          bytes: v.bytes,
          limit: v.limit,
          loggedIn: v.loggedIn,
        },
        'broker: packet over the size cap; connection closed',
      ),
    );
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    aedes.handle(guard(socket, () => addressOf(socket.remoteAddress, undefined)));
  });
  const web = http.createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end(`MQTT over WebSocket at ${WS_PATH}\n`);
  });
  // maxPayload: ws refuses a larger frame from its header; the guard catches a packet split over frames.
  const wss = new WebSocketServer({ server: web, path: WS_PATH, perMessageDeflate: false, maxPayload: caps.afterLogin });
  wss.on('connection', (ws, req) => {
    const stream = createWebSocketStream(ws);
    stream.on('error', () => {}); // an abrupt close; aedes sees the stream end
    aedes.handle(
      guard(stream, () => addressOf(undefined, req)),
      req,
    );
  });
  wss.on('error', (err) => log.warn({ err }, 'broker: websocket server error'));

  let closed = false;
  const shutdown = async () => {
    closed = true;
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
  } catch (err) {
    await shutdown().catch(() => {});
    throw err;
  }

  /** The hub's publish: straight into Aedes, resolved once every subscriber took the message. */
  function publish(topic: string, payload: Buffer | string, qos: Qos): Promise<void> {
    if (closed) return Promise.reject(new Error('broker is closed'));
    if (topic.startsWith('$')) return Promise.reject(new Error(`${topic}: reserved topic`));
    const packet = {
      cmd: 'publish',
      topic,
      payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
      qos,
      retain: false,
      dup: false,
    } as const;
    return new Promise((resolve, reject) =>
      aedes.publish(packet as Parameters<Aedes['publish']>[0], (err) => (err ? reject(err) : resolve())),
    );
  }

  /**
   * The hub's subscription, inside Aedes. Aedes calls back for every publish matching the filter;
   * the handler runs after the callback, so the publisher's PUBACK does not wait for it (as with a
   * client subscription). The QoS is the one a client subscribed at `qos` would get it with.
   */
  function subscribe(filter: string, handler: MessageHandler, qos: Qos): Promise<void> {
    if (closed) return Promise.reject(new Error('broker is closed'));
    if (!isValidFilter(filter)) return Promise.reject(new Error(`invalid topic filter "${filter}"`));
    const deliver = (packet: AedesPublishPacket, done: () => void) => {
      done();
      // Aedes' emitter matches `#` on `$SYS/…` too; an MQTT subscriber would not see those (MQTT-4.7.2-1).
      if (closed || !topicMatches(filter, packet.topic)) return;
      const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
      try {
        const r = handler(packet.topic, payload, { qos: Math.min(packet.qos, qos) as Qos, retain: false });
        if (r && typeof (r as Promise<void>).catch === 'function') {
          (r as Promise<void>).catch((err) => log.warn({ err, topic: packet.topic }, 'broker: message handler failed'));
        }
      } catch (err) {
        log.warn({ err, topic: packet.topic }, 'broker: message handler failed');
      }
    };
    return new Promise((resolve) => aedes.subscribe(filter, deliver, () => resolve()));
  }

  const host = advertisedHost(opts.host, opts.publicUrl);
  return {
    kind: 'embedded',
    connectedClients: () => aedes.connectedClients,
    connected: () => !closed,
    brokerUrl: `mqtt://${host}:${port}`,
    wsUrl: opts.wsPublicUrl ?? `ws://${host}:${wsPort}${WS_PATH}`,

    async provisionSatellite({ satelliteId, tenantId }) {
      if (!isTopicSegment(satelliteId) || !isTopicSegment(tenantId))
        throw new Error('satellite and tenant ids must be single topic levels');
      generations.set(satelliteId, generation(satelliteId) + 1);
      revoked.delete(satelliteId);
      await kick(satelliteId); // the password rotated: sessions on the old one end
    },

    async revokeSatellite(satelliteId) {
      generations.set(satelliteId, generation(satelliteId) + 1);
      revoked.add(satelliteId);
      await kick(satelliteId);
    },

    publish: (topic, payload, o) => publish(topic, payload, o?.qos ?? 0),
    subscribe: (pattern, handler, o) => subscribe(pattern, handler, o?.qos ?? 0),

    async close() {
      if (closed) return;
      await shutdown();
    },
  };
}
