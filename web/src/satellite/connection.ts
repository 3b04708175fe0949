/**
 * The phone's MQTT connection to the hub over WebSocket (satellite protocol §5): client id
 * `mobile-{satelliteId}`, username = satellite id, password = the registration secret, clean
 * session, as the reference satellite's src/satellite/connection.ts. mqtt.js's own reconnect is
 * off: every connection is a fresh client, so nothing is re-sent behind the outbox's back;
 * reconnects back off from `reconnectMs`, doubling up to `maxReconnectMs`.
 */
import mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import { HUB_TO_SATELLITE, topicOf } from '../../../src/protocol/topics.ts';

export interface Credentials {
  satelliteId: string;
  tenantId: string;
  username: string;
  password: string;
  /** ws:// or wss:// address of the broker (registration's mqtt.wsUrl). */
  wsUrl: string;
}

export interface ConnectionHooks {
  message(channel: string, body: Record<string, unknown>): void;
  /** Subscribed and config requested. */
  ready(): void;
  /** The connection closed: what waited on it is void. */
  lost(): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

export const RECONNECT_MS = 1000;
export const MAX_RECONNECT_MS = 4000;

export class BrokerConnection {
  private current: MqttClient | null = null;
  private delay = RECONNECT_MS;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;
  connected = false;

  constructor(
    private readonly creds: Credentials,
    private readonly hooks: ConnectionHooks,
  ) {}

  topic(channel: string): string {
    return topicOf(this.creds.tenantId, this.creds.satelliteId, channel);
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  /** Publishes on one of this satellite's channels; false when not connected or the broker failed. */
  async publish(channel: string, body: unknown, qos: 0 | 1): Promise<boolean> {
    const client = this.current;
    if (!client || !this.connected) return false;
    try {
      await client.publishAsync(this.topic(channel), JSON.stringify(body), { qos });
      return true;
    } catch (err) {
      this.hooks.log('warn', `publish on ${channel} failed: ${(err as Error).message}`);
      return false;
    }
  }

  /** Sends without waiting for the broker's answer (the audio: its ack comes from the hub). */
  send(channel: string, body: unknown, qos: 0 | 1): boolean {
    const client = this.current;
    if (!client || !this.connected) return false;
    client.publish(this.topic(channel), JSON.stringify(body), { qos }, (err) => {
      if (err && this.current === client) this.hooks.log('warn', `${channel}: ${err.message}`);
    });
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const client = this.current;
    this.current = null;
    this.connected = false;
    if (client) await Promise.race([client.endAsync(false).catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
    client?.end(true);
  }

  private connect(): void {
    if (this.stopped) return;
    const client = mqtt.connect(this.creds.wsUrl, {
      clientId: `mobile-${this.creds.satelliteId}`,
      username: this.creds.username,
      password: this.creds.password,
      protocolVersion: 4,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      // mqtt.js's default timers run in a blob: worker, which the dashboard's CSP (script-src 'self') refuses.
      timerVariant: 'native',
    });
    this.current = client;
    client.on('connect', () => {
      if (this.current === client) void this.onConnected(client);
    });
    client.on('message', (topic, payload) => {
      if (this.current !== client) return;
      const channel = topic.slice(topic.lastIndexOf('/') + 1);
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = payload.length ? JSON.parse(new TextDecoder().decode(payload)) : {};
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
      } catch {
        return this.hooks.log('warn', `unreadable ${channel} message`);
      }
      this.hooks.message(channel, body);
    });
    client.on('error', (err) => {
      if (this.current === client) this.hooks.log('warn', `broker: ${err.message}`);
    });
    client.on('close', () => this.onClosed(client));
  }

  private onClosed(client: MqttClient): void {
    if (this.current !== client) return;
    this.current = null;
    client.end(true);
    const was = this.connected;
    this.connected = false;
    this.hooks.lost();
    if (was) this.hooks.log('warn', 'disconnected from the broker; recording continues into the outbox');
    if (this.stopped) return;
    const delay = this.delay;
    this.delay = Math.min(MAX_RECONNECT_MS, this.delay * 2);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }

  private async onConnected(client: MqttClient): Promise<void> {
    try {
      const granted = await client.subscribeAsync(
        Object.fromEntries(Object.entries(HUB_TO_SATELLITE).map(([ch, qos]) => [this.topic(ch), { qos: qos as 0 | 1 | 2 }])),
      );
      const refused = granted.filter((g) => g.qos === 128).map((g) => g.topic);
      if (refused.length) this.hooks.log('error', `broker refused subscriptions: ${refused.join(', ')}`);
      if (this.current !== client) return;
      this.connected = true;
      this.delay = RECONNECT_MS;
      this.hooks.log('info', `connected to ${this.creds.wsUrl}`);
      await client.publishAsync(
        this.topic('config-request'),
        JSON.stringify({ satelliteId: this.creds.satelliteId, tenantId: this.creds.tenantId, overrides: {} }),
        { qos: 1 },
      );
      this.hooks.ready();
    } catch (err) {
      if (this.current === client) this.hooks.log('warn', `connection setup failed: ${(err as Error).message}`);
    }
  }
}
