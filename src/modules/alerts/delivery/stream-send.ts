/**
 * One delivery attempt of a detection to a stream channel (issue 38): Home Assistant over MQTT or
 * a BirdWeather station. Like send.ts for alerts, it reports what happened, secrets scrubbed;
 * retries are the dispatcher's.
 */
import { makeWav, SAMPLE_RATE } from '../../../protocol/wav.ts';
import { redact, type AllowList } from './outbound.ts';
import { OutboundRefused } from '../../../infra/outbound/index.ts';
import { uploadToBirdWeather } from './birdweather.ts';
import { discoveryMessages, stateMessage, type MqttMessage } from './home-assistant.ts';
import { BrokerRefused, type MqttClients } from './mqtt-clients.ts';
import type { SendResult } from './send.ts';
import type { ChannelTarget, StreamPayload } from './types.ts';

export interface StreamSendOptions {
  allow: AllowList;
  timeoutMs: number;
  tenantId: string;
  channelId: string;
  mqtt: MqttClients;
  /** The chunk's stored WAV, or null when it is gone (retention, voice privacy). */
  chunkAudio: (tenantId: string, chunkId: string) => Promise<Buffer | null>;
}

/** A channel test's detection: a Wren on a satellite that does not exist, so no real sensor is touched. */
export const SAMPLE_STREAM: Readonly<StreamPayload> = Object.freeze({
  stream: 'detection',
  sample: true,
  detectionId: '00000000-0000-4000-8000-000000000000',
  satelliteId: 'test',
  satelliteName: 'Chorus channel test',
  speciesCode: 'eurwre',
  scientificName: 'Troglodytes troglodytes',
  commonName: 'Eurasian Wren',
  confidence: 0.91,
  detectedAt: '2025-05-01T05:42:10.000Z',
  countToday: 1,
  sensitive: false,
  chunkId: null,
  chunkStartedAt: '2025-05-01T05:42:09.000Z',
  chunkDurationMs: 3000,
  startMs: 1000,
  endMs: 2500,
  // Null Island: a sample that reached a real station's map would be plainly a test.
  latitude: 0,
  longitude: 0,
});

/** Three seconds of a quiet 3 kHz tone: a valid soundscape for a channel test. */
function sampleWav(): Buffer {
  const samples = new Int16Array((SAMPLE_RATE * 3000) / 1000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(2000 * Math.sin((2 * Math.PI * 3000 * i) / SAMPLE_RATE));
  return makeWav(samples);
}

const failed = (error: string, refused: boolean, requestBody = '', durationMs = 0): SendResult => ({
  status: null,
  durationMs,
  error,
  retryAfterMs: null,
  responseBody: '',
  refused,
  requestBody,
});

async function toHomeAssistant(target: Extract<ChannelTarget, { type: 'mqtt_home_assistant' }>, p: StreamPayload, o: StreamSendOptions) {
  const started = performance.now();
  const topics = { topicPrefix: target.topicPrefix, discoveryPrefix: target.discoveryPrefix };
  // A test leaves nothing retained behind: Home Assistant shows the sample device only while it listens.
  const retain = !p.sample;
  const messages: MqttMessage[] = [];
  const ms = () => Math.round(performance.now() - started);
  try {
    const conn = await o.mqtt.acquire(o.channelId, target, o.allow);
    const announce = p.sample || !conn.discovered.has(p.satelliteId);
    if (announce) messages.push(...discoveryMessages(topics, { id: p.satelliteId, name: p.satelliteName }, retain));
    const at = Date.parse(p.detectedAt);
    // A retry of an older detection does not overwrite the newer state a later delivery published.
    const newest = conn.newest.get(p.satelliteId) ?? -Infinity;
    if (p.sample || at >= newest) messages.push(stateMessage(topics, p, retain));
    for (const m of messages) await conn.client.publishAsync(m.topic, m.payload, { qos: 1, retain: m.retain });
    if (!p.sample) {
      conn.discovered.add(p.satelliteId);
      if (at >= newest) conn.newest.set(p.satelliteId, at);
    }
    const body = JSON.stringify(messages.map((m) => ({ topic: m.topic, retain: m.retain })));
    return { ...failed('', false, body, ms()), error: null };
  } catch (err) {
    const refused = err instanceof BrokerRefused || err instanceof OutboundRefused;
    return failed(redact((err as Error).message, [target.password, target.username]), refused, '', ms());
  }
}

export async function sendStream(target: ChannelTarget, p: StreamPayload, o: StreamSendOptions): Promise<SendResult> {
  switch (target.type) {
    case 'mqtt_home_assistant':
      return toHomeAssistant(target, p, o);
    case 'birdweather': {
      // Never uploaded, whatever queued it: a public map would place the species (docs/decisions.md).
      if (p.sensitive) return failed('a sensitive species is never uploaded to BirdWeather', true);
      if (p.latitude === null || p.longitude === null)
        return failed("the satellite's position is not known (BirdWeather needs one): set it on the satellite", true);
      let wav: Buffer | null;
      if (p.sample) wav = sampleWav();
      else wav = p.chunkId ? await o.chunkAudio(o.tenantId, p.chunkId) : null;
      if (!wav) return failed("the chunk's audio is no longer stored", true);
      const r = await uploadToBirdWeather(target, p, wav, { allow: o.allow, timeoutMs: o.timeoutMs });
      const secrets = [target.stationToken];
      return { ...r, error: r.error === null ? null : redact(r.error, secrets), responseBody: redact(r.responseBody, secrets) };
    }
    default:
      return failed(`a ${target.type} channel carries alerts, not the detection stream`, true);
  }
}
