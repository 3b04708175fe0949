/**
 * The hub's persistent MQTT session on Mosquitto (issue 21 item 5): the connection that holds
 * the ingest subscriptions, apart from the connection that publishes and runs dynsec commands.
 *
 * - Stable client id per hub (per dispatcher when there are several) and clean session off: while
 *   the dispatcher restarts, the broker keeps its QoS 1 subscriptions and queues what satellites
 *   publish (delivered on reconnect).
 * - With several dispatchers (a share group), the filters go to the broker as one MQTT shared
 *   subscription group per hub (`$share/{group}/{filter}`), so each message reaches one of them.
 *   Mosquitto 2.0 does not bring shared subscriptions back from its persistence file, so they are
 *   sent again on every connect; a message the broker took in between, or queued for a dispatcher
 *   that never comes back, is sent again by its satellite (no ack), and ingest stores a chunk id
 *   once whichever dispatcher takes it.
 * - It publishes nothing, so on a CONNACK without a session (broker restarted without
 *   persistence, or the session expired) the SUBSCRIBE is the first packet it sends: one packet
 *   for every filter. mqtt.js's own resubscribe is off; it resubscribes after its offline queue.
 * - It connects only once the first subscribers registered (the callers subscribe synchronously
 *   in one tick), so messages the broker queued for it never arrive before their handler.
 * - suspend() (shutdown) stops delivering and withholds the PUBACK of anything arriving after:
 *   the broker keeps those messages in the session for the next dispatcher.
 */
import type { MqttClient, IClientOptions } from 'mqtt';
import { isValidFilter, topicMatches, type Qos } from '../../protocol/topics.ts';
import type { BrokerLog, MessageHandler } from './types.ts';

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface IngestSessionOptions {
  /** Opens the connection (mqtt.connect with the given options). */
  connect: (opts: IClientOptions) => MqttClient;
  clientId: string;
  /** The shared subscription group; without one the filters are plain subscriptions. */
  shareGroup?: string;
  username: string;
  password: string;
  log: BrokerLog;
  /** How it names the broker in log lines and errors. */
  where: string;
}

export class IngestSession {
  private readonly filters = new Map<string, Qos>();
  private readonly handlers: Array<{ filter: string; handler: MessageHandler }> = [];
  /** Filters the broker holds for us as far as this process knows. */
  private readonly granted = new Set<string>();
  private readonly waiters = new Map<string, Waiter[]>();
  private client: MqttClient | null = null;
  private opening = false;
  private holding = false;
  private closed = false;
  private connects = 0;
  private downSince: number | null = null;
  private unrouted = 0;

  constructor(private readonly o: IngestSessionOptions) {}

  /** Connected, or not needed yet (nobody subscribed). */
  get connected(): boolean {
    return this.client ? this.client.connected : !this.opening;
  }

  /** Resolves once the broker granted the filter (at once when this process saw it granted already). */
  subscribe(filter: string, handler: MessageHandler, qos: Qos): Promise<void> {
    if (this.closed) return Promise.reject(new Error('broker is closed'));
    if (!isValidFilter(filter)) return Promise.reject(new Error(`invalid topic filter "${filter}"`));
    this.handlers.push({ filter, handler });
    const before = this.filters.get(filter);
    if (before === undefined || before < qos) {
      this.filters.set(filter, qos);
      this.granted.delete(filter);
    }
    if (this.granted.has(filter)) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => {
      const list = this.waiters.get(filter) ?? [];
      list.push({ resolve, reject });
      this.waiters.set(filter, list);
    });
    if (!this.client && !this.opening) {
      this.opening = true;
      // The other subscribers of this start-up register in the same tick; connect after them.
      setImmediate(() => this.open());
    } else if (this.client?.connected) {
      void this.sendSubscribe([filter]);
    }
    return done;
  }

  /** Stops delivering; what arrives from now on stays unacknowledged on the broker (shutdown). */
  suspend(): void {
    this.holding = true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.holding = true;
    for (const [filter, list] of this.waiters) for (const w of list) w.reject(new Error(`broker closed before "${filter}" was granted`));
    this.waiters.clear();
    const client = this.client;
    this.client = null;
    if (!client) return;
    // No DISCONNECT needed: with clean session off the broker keeps the session either way, and a
    // graceful end would wait for the PUBACKs this session withholds.
    await client.endAsync(true).catch(() => {});
  }

  private open(): void {
    if (this.closed) return;
    const client = this.o.connect({
      clientId: this.o.clientId,
      username: this.o.username,
      password: this.o.password,
      protocolVersion: 4,
      clean: false,
      keepalive: 30,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      resubscribe: false,
    });
    this.client = client;
    const defaultHandleMessage = client.handleMessage.bind(client);
    // The PUBACK goes out when this calls back: never while suspended.
    client.handleMessage = (packet, callback) => {
      if (!this.holding) defaultHandleMessage(packet, callback);
    };
    client.on('message', (topic, payload, packet) => {
      if (!this.holding) this.dispatch(topic, payload, packet.qos, packet.retain);
    });
    client.on('connect', (connack) => void this.onConnect(connack.sessionPresent));
    client.on('close', () => {
      if (this.closed || this.downSince !== null || this.connects === 0) return;
      this.downSince = performance.now();
      this.o.log.warn(
        { clientId: this.o.clientId },
        `broker: ingest session lost its connection to ${this.o.where}; reconnecting every second`,
      );
    });
    client.on('error', (err) => {
      if (!this.closed) this.o.log.warn({ err, clientId: this.o.clientId }, 'broker: ingest session error');
    });
  }

  /** The filter as the broker holds it. */
  private wire(filter: string): string {
    return this.o.shareGroup ? `$share/${this.o.shareGroup}/${filter}` : filter;
  }

  private async onConnect(sessionPresent: boolean): Promise<void> {
    this.connects += 1;
    const downMs = this.downSince === null ? null : Math.round(performance.now() - this.downSince);
    this.downSince = null;
    if (!sessionPresent || this.o.shareGroup) this.granted.clear();
    const missing = [...this.filters.keys()].filter((f) => !this.granted.has(f));
    const info = this.o.log.info?.bind(this.o.log) ?? this.o.log.warn.bind(this.o.log);
    const fields = { clientId: this.o.clientId, sessionPresent, ...(downMs === null ? {} : { downMs }) };
    if (this.connects === 1)
      info(fields, `broker: ingest session ${sessionPresent ? 'resumed' : 'started'} on ${this.o.where} (clean session off)`);
    else info(fields, `broker: ingest session reconnected to ${this.o.where}${downMs === null ? '' : ` after ${downMs} ms`}`);
    if (missing.length) await this.sendSubscribe(missing, this.connects > 1 && !sessionPresent);
  }

  /** One SUBSCRIBE for the filters; resolves their waiters or rejects the refused ones. */
  private async sendSubscribe(list: string[], resubscribing = false): Promise<void> {
    const client = this.client;
    if (!client) return;
    const started = performance.now();
    let grants: Array<{ topic: string; qos: number }>;
    try {
      grants = await client.subscribeAsync(Object.fromEntries(list.map((f) => [this.wire(f), { qos: this.filters.get(f) ?? 0 }])));
    } catch (err) {
      // The connection dropped meanwhile: the next CONNACK subscribes again.
      this.o.log.warn({ err, filters: list }, 'broker: ingest session could not subscribe; trying again on the next connect');
      return;
    }
    const plain = new Map(list.map((f) => [this.wire(f), f]));
    for (const granted of grants) {
      const g = { topic: plain.get(granted.topic) ?? granted.topic, qos: granted.qos };
      const waiters = this.waiters.get(g.topic) ?? [];
      this.waiters.delete(g.topic);
      if (g.qos === 128) {
        for (let i = this.handlers.length - 1; i >= 0; i--) if (this.handlers[i].filter === g.topic) this.handlers.splice(i, 1);
        this.filters.delete(g.topic);
        const err = new Error(`broker refused the subscription to "${g.topic}" (granted 128)`);
        this.o.log.warn({ filter: g.topic }, `broker: ${err.message}`);
        for (const w of waiters) w.reject(err);
      } else {
        this.granted.add(g.topic);
        for (const w of waiters) w.resolve();
      }
    }
    if (resubscribing) {
      const info = this.o.log.info?.bind(this.o.log) ?? this.o.log.warn.bind(this.o.log);
      info(
        { filters: grants.map((g) => plain.get(g.topic) ?? g.topic), ms: Math.round(performance.now() - started) },
        `broker: ingest session re-subscribed ${grants.length} filter(s) (the broker held no session)`,
      );
    }
  }

  private dispatch(topic: string, payload: Buffer, qos: Qos, retain: boolean): void {
    let routed = false;
    for (const { filter, handler } of this.handlers) {
      if (!topicMatches(filter, topic)) continue;
      routed = true;
      try {
        const r = handler(topic, payload, { qos, retain });
        if (r && typeof (r as Promise<void>).catch === 'function') {
          (r as Promise<void>).catch((err) => this.o.log.warn({ err, topic }, 'broker: message handler failed'));
        }
      } catch (err) {
        this.o.log.warn({ err, topic }, 'broker: message handler failed');
      }
    }
    // A filter the session still holds from an older version of the hub: say so once in a while.
    if (!routed && this.unrouted++ % 1000 === 0)
      this.o.log.warn({ topic }, 'broker: ingest session got a message no subscriber of this process takes');
  }
}
