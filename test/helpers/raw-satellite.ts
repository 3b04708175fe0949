/**
 * A hand-driven satellite for ingest tests: a plain mqtt.js client logged in with the
 * credentials registration minted. It sends exactly the bytes a test gives it — the point of
 * the ingest tests is malformed input, which the reference satellite would never produce.
 * Every wait is on a message or a handled-message report, with a timeout as a safety net.
 */
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import type { Hub } from './hub.ts';
import type { TestTeam, TestUser } from './factories.ts';
import { client } from './http.ts';
import { makeWav } from '../../src/protocol/wav.ts';
import type { HandledMessage } from '../../src/ingest/ingester.ts';
import { topicOf } from '../../src/protocol/topics.ts';
import { renderChunk } from '../../src/satellite/soundscape.ts';

export const TIMEOUT = 8000;

export interface Received {
  channel: string;
  body: any;
}

/** Resolves with the first value `pick` accepts among events of `ee`, or rejects after the timeout. */
function waitOn<T>(ee: EventEmitter, event: string, pick: (v: any) => T | undefined, what: string, timeoutMs = TIMEOUT): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      ee.off(event, on);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const on = (v: unknown) => {
      const got = pick(v);
      if (got === undefined) return;
      clearTimeout(timer);
      ee.off(event, on);
      resolve(got);
    };
    ee.on(event, on);
  });
}

export class RawSatellite {
  readonly received: Received[] = [];
  /** The MQTT password registration minted (a test that logs in again after a broker restart needs it). */
  password = '';
  private readonly ee = new EventEmitter();

  private constructor(
    readonly hub: Hub,
    readonly id: string,
    readonly tenantId: string,
    readonly apiKey: string,
    readonly mqtt: MqttClient,
  ) {
    this.ee.setMaxListeners(0);
    mqtt.on('message', (topic, payload) => {
      const channel = topic.split('/')[3];
      let body: unknown = payload.toString('utf8');
      try {
        body = JSON.parse(body as string);
      } catch {
        // kept as text
      }
      const m = { channel, body };
      this.received.push(m);
      this.ee.emit('message', m);
    });
  }

  /** Registers a satellite over HTTP as `as` and connects it to the hub's broker (MQTT 3.1.1, client id satellite-{id}). */
  static async register(
    hub: Hub,
    as: TestUser,
    team: TestTeam,
    name = `Sat ${crypto.randomBytes(3).toString('hex')}`,
    position?: { latitude: number; longitude: number },
  ): Promise<RawSatellite> {
    const res = await client(hub.url).post('/satellites', { tenantId: team.id, name, ...position }, as);
    assert.equal(res.status, 201, `register: ${res.status} ${res.text}`);
    const c = await mqtt.connectAsync(res.body.mqtt.brokerUrl, {
      clientId: `satellite-${res.body.id}`,
      username: res.body.id,
      password: res.body.mqtt.password,
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: TIMEOUT,
    });
    const sat = new RawSatellite(hub, res.body.id, team.id, res.body.apiKey, c);
    sat.password = res.body.mqtt.password;
    await c.subscribeAsync(`${topicOf(team.id, res.body.id, '#')}`, { qos: 2 });
    return sat;
  }

  topic(channel: string): string {
    return topicOf(this.tenantId, this.id, channel);
  }

  /** Publishes raw bytes, a string, or an object as JSON, at QoS 1 (PUBACK awaited). */
  async send(channel: string, body: unknown): Promise<void> {
    const payload = Buffer.isBuffer(body) ? body : typeof body === 'string' ? body : JSON.stringify(body);
    await this.mqtt.publishAsync(this.topic(channel), payload, { qos: 1 });
  }

  /** The next message on a channel that `pred` accepts (including ones that already arrived after `since`). */
  waitFor(channel: string, pred: (body: any) => boolean = () => true, what = channel, since = 0): Promise<any> {
    const seen = this.received.slice(since).find((m) => m.channel === channel && pred(m.body));
    if (seen) return Promise.resolve(seen.body);
    return waitOn(
      this.ee,
      'message',
      (m: Received) => (m.channel === channel && pred(m.body) ? m.body : undefined),
      `${what} on ${this.id}`,
    );
  }

  /** Sends and waits for the ack that names `chunkId` (or, without one, the next error ack without a chunkId). */
  async sendAudio(body: unknown, chunkId?: string): Promise<any> {
    const since = this.received.length;
    const ack = this.waitFor(
      'ack',
      (b) => (chunkId ? b.chunkId === chunkId : b.chunkId === undefined),
      `ack of ${chunkId ?? 'a chunk without id'}`,
      since,
    );
    await this.send('audio', body);
    return ack;
  }

  /**
   * Publishes one valid chunk of the reference satellite's soundscape (`species` heard over its
   * seeded noise; none is a silent chunk) and waits for its ack.
   */
  async publishChunk(opts: { species?: string[]; seed?: number; recordedAt?: Date } = {}): Promise<{ chunkId: string; ack: any }> {
    const wav = makeWav(renderChunk({ species: opts.species ?? [], seed: opts.seed ?? 1 }));
    const body = audioBody(this, opts.recordedAt ? { recordedAt: opts.recordedAt.toISOString() } : {}, wav);
    return { chunkId: body.chunkId, ack: await this.sendAudio(body, body.chunkId) };
  }

  /** Sends and waits until the ingester has handled that message (done, refused or failed). */
  async sendHandled(channel: HandledMessage['channel'], body: unknown): Promise<HandledMessage> {
    const handled = waitHandled(this.hub, (m) => m.channel === channel && m.satelliteId === this.id);
    await this.send(channel, body);
    return handled;
  }

  acksOf(chunkId: string): any[] {
    return this.received.filter((m) => m.channel === 'ack' && m.body.chunkId === chunkId).map((m) => m.body);
  }

  async close(): Promise<void> {
    await this.mqtt.endAsync(true);
  }
}

/** The next message the hub's ingester reports as handled that `pred` accepts. */
export function waitHandled(hub: Hub, pred: (m: HandledMessage) => boolean, what = 'a handled message'): Promise<HandledMessage> {
  const ee = new EventEmitter();
  const off = hub.runtime.ingester!.onHandled((m) => ee.emit('m', m));
  return waitOn(ee, 'm', (m: HandledMessage) => (pred(m) ? m : undefined), what).finally(off);
}

/** `ms` of 48 kHz mono 16-bit PCM: a quiet 1 kHz tone, so the bytes are not all zero. */
export function toneWav(ms = 3000, opts: Parameters<typeof makeWav>[1] = {}): Buffer {
  const rate = opts.sampleRate ?? 48_000;
  const channels = opts.channels ?? 1;
  const samples = new Int16Array(Math.round((rate * ms) / 1000) * channels);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(3000 * Math.sin((2 * Math.PI * 1000 * Math.floor(i / channels)) / rate));
  return makeWav(samples, opts);
}

/** A valid audio message body for a satellite; `over` replaces or adds fields. */
export function audioBody(
  sat: { id: string; tenantId: string },
  over: Record<string, unknown> = {},
  wav: Buffer = toneWav(),
): Record<string, unknown> & { chunkId: string; recordedAt: string } {
  return {
    chunkId: crypto.randomUUID(),
    satelliteId: sat.id,
    tenantId: sat.tenantId,
    recordedAt: new Date().toISOString(),
    durationMs: 3000,
    sampleRate: 48000,
    latitude: 52.09,
    longitude: 5.12,
    audio: wav.toString('base64'),
    ...over,
  } as Record<string, unknown> & { chunkId: string; recordedAt: string };
}
