/**
 * A BirdWeather station upload (issue 38; docs/integrations.md), as BirdNET-Pi and BirdNET-Go
 * post theirs: the chunk's WAV as a soundscape, then the detection naming that soundscape.
 *
 *   POST {api}/api/v1/stations/{token}/soundscapes?timestamp=<ISO 8601>   body: WAV bytes
 *        → {"success": true, "soundscape": {"id": …}}
 *   POST {api}/api/v1/stations/{token}/detections                         body: JSON
 *        {timestamp, lat, lon, soundscapeId, soundscapeStartTime, soundscapeEndTime,
 *         commonName, scientificName, algorithm, confidence}
 *
 * The token is the station's credential and sits in the path: it is scrubbed from every error
 * and body kept. Both requests go through the hub's outbound policy.
 */
import { sendGuarded, OutboundRefused, type AllowList } from '../../../infra/outbound/index.ts';
import { parseRetryAfter, resultSince, type OutboundResult } from './outbound.ts';
import type { StreamPayload } from './types.ts';

export const BIRDWEATHER_ALGORITHM = 'chorus';
const BODY_LIMIT = 2048;

export interface BirdWeatherTarget {
  apiUrl: string;
  stationToken: string;
}

/** Four decimals: about 11 m, what a station's map shows; the satellite's fix is not published finer. */
const coord = (v: number) => Math.round(v * 10_000) / 10_000;

export function detectionBody(p: StreamPayload, soundscapeId: string | number) {
  return {
    timestamp: p.detectedAt,
    lat: coord(p.latitude!),
    lon: coord(p.longitude!),
    soundscapeId,
    // Seconds into the soundscape (the chunk), as BirdNET-Pi sends them.
    soundscapeStartTime: p.startMs / 1000,
    soundscapeEndTime: p.endMs / 1000,
    commonName: p.commonName,
    scientificName: p.scientificName,
    algorithm: BIRDWEATHER_ALGORITHM,
    confidence: Math.round(p.confidence * 1000) / 1000,
  };
}

async function post(url: string, body: Buffer, contentType: string, allow: AllowList, timeoutMs: number) {
  const res = await sendGuarded(url, {
    method: 'POST',
    allow,
    timeoutMs,
    headers: { 'content-type': contentType, 'user-agent': 'Chorus-Hub' },
    body,
    maxBodyBytes: BODY_LIMIT,
    overflow: 'truncate',
    maxRedirects: 0,
  });
  const header = res.headers['retry-after'];
  return { status: res.status, body: res.body.toString('utf8'), retryAfterMs: parseRetryAfter(Array.isArray(header) ? header[0] : header) };
}

/** Soundscape, then detection. Resolves (never rejects); `requestBody` is the detection JSON. */
export async function uploadToBirdWeather(
  t: BirdWeatherTarget,
  p: StreamPayload,
  wav: Buffer,
  o: { allow: AllowList; timeoutMs: number },
): Promise<OutboundResult & { requestBody: string }> {
  const outcome = resultSince(performance.now());
  const base = `${t.apiUrl.replace(/\/+$/, '')}/api/v1/stations/${encodeURIComponent(t.stationToken)}`;
  let requestBody = '';
  const result = (r: Partial<OutboundResult>) => ({ ...outcome(r), requestBody });
  try {
    const timestamp = p.chunkStartedAt ?? p.detectedAt;
    const sc = await post(`${base}/soundscapes?timestamp=${encodeURIComponent(timestamp)}`, wav, 'audio/wav', o.allow, o.timeoutMs);
    if (sc.status < 200 || sc.status >= 300)
      return result({
        status: sc.status,
        responseBody: sc.body,
        retryAfterMs: sc.retryAfterMs,
        error: `the soundscape upload was answered ${sc.status}`,
      });
    let id: unknown;
    try {
      const parsed = JSON.parse(sc.body) as { success?: boolean; soundscape?: { id?: unknown } };
      id = parsed.success === true ? parsed.soundscape?.id : undefined;
    } catch {
      id = undefined;
    }
    if (typeof id !== 'number' && typeof id !== 'string')
      return result({ status: sc.status, responseBody: sc.body, error: 'the soundscape upload did not report success and an id' });
    requestBody = JSON.stringify(detectionBody(p, id));
    const det = await post(`${base}/detections`, Buffer.from(requestBody, 'utf8'), 'application/json', o.allow, o.timeoutMs);
    return result({
      status: det.status,
      responseBody: det.body,
      retryAfterMs: det.retryAfterMs,
      error: det.status >= 200 && det.status < 300 ? null : `the detection post was answered ${det.status}`,
    });
  } catch (err) {
    return result({ error: (err as Error).message, refused: err instanceof OutboundRefused });
  }
}
