/**
 * The live relay (full and dispatcher modes): subscribes to `chorus/+/+/live-audio` (QoS 0) on
 * the broker and republishes each chunk on the event bus as `satellite.live_audio`, where the
 * api/full side hands it to the sockets watching that satellite (src/modules/live/hub.ts).
 *
 * The topic is trusted for tenant and satellite: the broker's ACL lets a satellite publish only
 * under its own prefix. Body: base64 WAV as text, or JSON {sessionId?, audio}.
 */
import type { Bus, BusEvents } from '../../infra/bus/index.ts';
import type { Broker } from '../../infra/broker/index.ts';
import { ingestPattern, parseTopic } from '../../protocol/topics.ts';

/** A 3-second 48 kHz 16-bit mono WAV is ~384 KB in base64; anything far beyond is refused. */
export const MAX_LIVE_AUDIO_CHARS = 2 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Reads a live-audio body; null when it is neither base64 text nor {sessionId?, audio}. */
export function parseLiveAudio(payload: Buffer): { sessionId: string | null; audio: string } | null {
  if (payload.length === 0 || payload.length > MAX_LIVE_AUDIO_CHARS + 1024) return null;
  const text = payload.toString('utf8').trim();
  let sessionId: string | null = null;
  let audio = text;
  if (text.startsWith('{')) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return null;
    }
    const b = body as { sessionId?: unknown; audio?: unknown };
    if (typeof b.audio !== 'string') return null;
    if (b.sessionId !== undefined && b.sessionId !== null && typeof b.sessionId !== 'string') return null;
    audio = b.audio.trim();
    sessionId = (b.sessionId as string | undefined) ?? null;
  }
  if (audio.length === 0 || audio.length > MAX_LIVE_AUDIO_CHARS || audio.length % 4 !== 0 || !BASE64.test(audio)) return null;
  return { sessionId, audio };
}

/** Returns its stop function, with `ready`: resolves once the subscription is granted (never rejects; a refusal goes to onError). */
export function startLiveRelay(deps: {
  bus: Bus;
  broker: Pick<Broker, 'subscribe'>;
  onError: (err: unknown) => void;
}): (() => void) & { ready: Promise<void> } {
  let stopped = false;
  const ready = deps.broker
    .subscribe(
      ingestPattern('live-audio'),
      async (topic, payload) => {
        if (stopped) return;
        const where = parseTopic(topic);
        const body = where && where.channel === 'live-audio' ? parseLiveAudio(payload) : null;
        if (!where || !body) return; // fire-and-forget channel: a bad chunk is dropped
        const event: BusEvents['satellite.live_audio'] = { tenantId: where.tenantId, satelliteId: where.satelliteId, ...body };
        await deps.bus.publish('satellite.live_audio', event);
      },
      { qos: 0 },
    )
    .catch(deps.onError);
  const stop = () => {
    stopped = true;
  };
  return Object.assign(stop, { ready });
}
