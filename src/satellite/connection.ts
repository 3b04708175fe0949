/**
 * The MQTT 3.1.1 connection to the hub, over TCP (mqtt://) or WebSocket (ws://).
 *
 * Client id `satellite-{id}`, username = satellite id, password = the registration secret, clean
 * session. mqtt.js's own reconnect is off: every connection is a fresh client, so nothing is
 * re-sent behind the outbox's back; reconnects back off from `reconnectMs` up to
 * `maxReconnectMs`. On every (re)connect it subscribes to the hub-to-satellite channels and sends
 * config-request {satelliteId, tenantId, overrides: {}}; the hooks do the rest.
 */
import mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import { HUB_TO_SATELLITE } from '../protocol/topics.ts';
import type { SatelliteContext } from './types.ts';

const SUBSCRIPTIONS = HUB_TO_SATELLITE;

/** What the rest of the satellite does as the connection comes and goes. */
export interface ConnectionHooks {
  /** A message on one of the subscribed channels of the current connection. */
  message(topic: string, payload: Buffer): void;
  /** Subscribed and config requested; awaited before `connected` is emitted. */
  prepare(): Promise<void>;
  /** Just after `connected` was emitted. */
  ready(): void;
  /** The connection closed: what waited on it is void. */
  lost(): void;
}

export class BrokerConnection {
  private current: MqttClient | null = null;
  private reconnectDelay: number;
  private cancelReconnectTimer: (() => void) | null = null;
  private latencyMs: number | null = null;

  constructor(
    private readonly ctx: Pick<
      SatelliteContext,
      'id' | 'tenantId' | 'options' | 'status' | 'clock' | 'isStopped' | 'log' | 'emit' | 'topic'
    >,
    private readonly hooks: ConnectionHooks,
  ) {
    this.reconnectDelay = ctx.options.reconnectMs;
  }

  /** The client of the current connection (null between connections). */
  get client(): MqttClient | null {
    return this.current;
  }

  /** How long the last QoS 1 publish took to be acknowledged. */
  get lastLatencyMs(): number | null {
    return this.latencyMs;
  }

  /** The address this satellite dials. */
  get url(): string {
    const o = this.ctx.options;
    if (o.url) return o.url;
    if (o.transport === 'ws') {
      if (!o.credentials.wsUrl) throw new Error('no WebSocket broker address known (pass --broker ws://host:port/mqtt)');
      return o.credentials.wsUrl;
    }
    return o.credentials.brokerUrl;
  }

  connect(): void {
    const { ctx } = this;
    if (ctx.isStopped()) return;
    let url: string;
    try {
      url = this.url;
    } catch (err) {
      ctx.log('error', (err as Error).message);
      ctx.emit('connect-error', err);
      return;
    }
    const client = mqtt.connect(url, {
      clientId: `satellite-${ctx.id}`,
      username: ctx.options.credentials.username,
      password: ctx.options.credentials.password,
      protocolVersion: 4,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
    });
    this.current = client;
    client.on('connect', () => {
      if (this.current === client) void this.onConnected(client);
    });
    client.on('message', (topic, payload) => {
      if (this.current === client) this.hooks.message(topic, payload);
    });
    client.on('error', (err) => {
      if (this.current !== client) return;
      ctx.log('warn', `broker ${url}: ${err.message}`);
      ctx.emit('connect-error', err);
    });
    client.on('close', () => this.onClosed(client));
  }

  /** Stops a pending reconnect (the satellite is stopping). */
  cancelReconnect(): void {
    this.cancelReconnectTimer?.();
    this.cancelReconnectTimer = null;
  }

  /** Ends the current connection, waiting a little for the broker to hear it. */
  async close(): Promise<void> {
    const client = this.current;
    this.current = null;
    this.ctx.status.connected = false;
    if (client) {
      // A bound in real time: it waits on the network, and a stopped test clock must not hang the shutdown.
      await Promise.race([client.endAsync(false).catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
      client.end(true);
    }
  }

  /** Publishes on one of this satellite's channels; false when not connected or the broker failed. */
  async publish(channel: string, body: unknown, qos: 0 | 1): Promise<boolean> {
    const client = this.current;
    if (!client || !this.ctx.status.connected) return false;
    try {
      const t0 = this.ctx.clock.now().getTime();
      await client.publishAsync(this.ctx.topic(channel), JSON.stringify(body), { qos });
      if (qos === 1) this.latencyMs = this.ctx.clock.now().getTime() - t0;
      return true;
    } catch (err) {
      this.ctx.log('warn', `publish on ${channel} failed: ${(err as Error).message}`);
      return false;
    }
  }

  private onClosed(client: MqttClient): void {
    const { ctx } = this;
    if (this.current !== client) return;
    this.current = null;
    client.end(true);
    const was = ctx.status.connected;
    ctx.status.connected = false;
    this.hooks.lost();
    if (was) {
      ctx.log('warn', 'disconnected from the broker; recording continues into the outbox');
      ctx.emit('disconnected');
    }
    if (ctx.isStopped()) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(ctx.options.maxReconnectMs, this.reconnectDelay * 2);
    this.cancelReconnectTimer = ctx.clock.after(delay, () => {
      this.cancelReconnectTimer = null;
      this.connect();
    });
  }

  private async onConnected(client: MqttClient): Promise<void> {
    const { ctx } = this;
    try {
      const granted = await client.subscribeAsync(
        Object.fromEntries(Object.entries(SUBSCRIPTIONS).map(([ch, qos]) => [ctx.topic(ch), { qos: qos as 0 | 1 | 2 }])),
      );
      const refused = granted.filter((g) => g.qos === 128).map((g) => g.topic);
      if (refused.length) ctx.log('error', `broker refused subscriptions: ${refused.join(', ')}`);
      if (this.current !== client) return;
      ctx.status.connected = true;
      this.reconnectDelay = ctx.options.reconnectMs;
      ctx.log('info', `connected to ${this.url}`);
      await client.publishAsync(
        ctx.topic('config-request'),
        JSON.stringify({ satelliteId: ctx.id, tenantId: ctx.tenantId, overrides: {} }),
        { qos: 1 },
      );
      await this.hooks.prepare();
      ctx.emit('connected');
      this.hooks.ready();
    } catch (err) {
      if (this.current === client) ctx.log('warn', `connection setup failed: ${(err as Error).message}`);
    }
  }
}
