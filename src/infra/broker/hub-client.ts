/**
 * The hub's own MQTT client (full access), shared by both adapters: mqtt.js over TCP/WebSocket to
 * Mosquitto, or over an in-memory stream straight into the embedded Aedes. It routes incoming
 * messages to the handlers whose filter matches, so several subscribers share one connection.
 */
import mqtt from 'mqtt';
import type { MqttClient, IClientOptions } from 'mqtt';
import { isValidFilter, topicMatches, type Qos } from '../../protocol/topics.ts';
import type { BrokerLog, MessageHandler } from './types.ts';

export const silentLog: BrokerLog = { warn() {} };

export class HubClient {
  private readonly handlers: Array<{ filter: string; handler: MessageHandler }> = [];
  private closed = false;
  private downSince: number | null = null;
  private readonly reconnectListeners: Array<() => void> = [];

  constructor(
    readonly mqtt: MqttClient,
    private readonly log: BrokerLog,
  ) {
    mqtt.on('message', (topic, payload, packet) => this.dispatch(topic, payload, packet.qos, packet.retain));
    // Errors after the first connect (a dropped broker, a refused reconnect) are retried by mqtt.js.
    mqtt.on('error', (err) => {
      if (!this.closed) this.log.warn({ err }, 'broker: hub client error');
    });
    // Disconnects and reconnects are an operator's first clue (issue 21): one line each.
    mqtt.on('close', () => {
      if (this.closed || this.downSince !== null) return;
      this.downSince = performance.now();
      this.log.warn({ clientId: mqtt.options.clientId }, 'broker: hub connection lost; reconnecting every second');
    });
    mqtt.on('connect', (connack) => {
      if (this.downSince === null) return;
      const downMs = Math.round(performance.now() - this.downSince);
      this.downSince = null;
      (this.log.info ?? this.log.warn).call(
        this.log,
        { clientId: mqtt.options.clientId, downMs, sessionPresent: connack.sessionPresent },
        `broker: hub connection back after ${downMs} ms`,
      );
      for (const l of this.reconnectListeners) l();
    });
  }

  /** Runs after every reconnect (not the first connect). */
  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  /** Waits for the first CONNACK; a refusal or the timeout ends the client and throws. */
  static async start(mqttClient: MqttClient, log: BrokerLog, what: string, timeoutMs = 10_000): Promise<HubClient> {
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`${what}: no CONNACK within ${timeoutMs} ms`)), timeoutMs);
        const onConnect = () => done(null);
        const onError = (err: Error) => done(new Error(`${what}: ${err.message}`, { cause: err }));
        const done = (err: Error | null) => {
          clearTimeout(timer);
          mqttClient.off('connect', onConnect);
          mqttClient.off('error', onError);
          if (err) reject(err);
          else resolve();
        };
        mqttClient.on('connect', onConnect);
        mqttClient.on('error', onError);
      });
    } catch (err) {
      mqttClient.end(true);
      throw err;
    }
    return new HubClient(mqttClient, log);
  }

  static options(o: { clientId: string; username: string; password: string }): IClientOptions {
    return {
      clientId: o.clientId,
      username: o.username,
      password: o.password,
      protocolVersion: 4,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      resubscribe: true,
    };
  }

  async publish(topic: string, payload: Buffer | string, qos: Qos, retain = false): Promise<void> {
    if (this.closed) throw new Error('broker is closed');
    await this.mqtt.publishAsync(topic, payload, { qos, retain });
  }

  /**
   * Subscribes a handler to a filter. Resolves once the broker granted it; a refusal (granted 128)
   * removes the handler and throws. Overlapping filters may see a message once per filter,
   * depending on the broker: subscribe with disjoint filters.
   */
  async subscribe(filter: string, handler: MessageHandler, qos: Qos): Promise<void> {
    if (this.closed) throw new Error('broker is closed');
    if (!isValidFilter(filter)) throw new Error(`invalid topic filter "${filter}"`);
    const entry = { filter, handler };
    this.handlers.push(entry);
    try {
      await this.mqtt.subscribeAsync(filter, { qos });
    } catch (err) {
      this.handlers.splice(this.handlers.indexOf(entry), 1);
      const granted = (err as { packet?: { granted?: number[] } }).packet?.granted;
      throw new Error(
        `broker refused the subscription to "${filter}"${granted ? ` (granted ${granted.join(',')})` : ''}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  /** Drops every handler of a filter and the subscription itself. */
  async unsubscribe(filter: string): Promise<void> {
    for (let i = this.handlers.length - 1; i >= 0; i--) if (this.handlers[i].filter === filter) this.handlers.splice(i, 1);
    if (!this.closed) await this.mqtt.unsubscribeAsync(filter);
  }

  private dispatch(topic: string, payload: Buffer, qos: Qos, retain: boolean): void {
    for (const { filter, handler } of this.handlers) {
      if (!topicMatches(filter, topic)) continue;
      try {
        const r = handler(topic, payload, { qos, retain });
        if (r && typeof (r as Promise<void>).catch === 'function') {
          (r as Promise<void>).catch((err) => this.log.warn({ err, topic }, 'broker: message handler failed'));
        }
      } catch (err) {
        this.log.warn({ err, topic }, 'broker: message handler failed');
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handlers.length = 0;
    // A graceful end waits for in-flight acks; when the broker is gone that never comes.
    let timer: NodeJS.Timeout | undefined;
    const graceful = this.mqtt.endAsync(false).then(
      () => true,
      () => false,
    );
    const ended = await Promise.race([graceful, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 2000)))]);
    clearTimeout(timer);
    if (!ended) await this.mqtt.endAsync(true).catch(() => {});
  }
}

export const createMqttClient = (streamBuilder: ConstructorParameters<typeof mqtt.MqttClient>[0], opts: IClientOptions) =>
  new mqtt.MqttClient(streamBuilder, opts);

export const connectMqtt = (url: string, opts: IClientOptions) => mqtt.connect(url, opts);
