/**
 * eBird API 2.0: recent observations near a position (`GET /v2/data/obs/geo/recent`, the key in
 * the `x-ebirdapitoken` header, never in the URL, so it stays out of every log line).
 */
import type { SourceFailure } from '../weather/client.ts';

export interface EbirdObservation {
  speciesCode: string;
  comName: string;
  sciName: string;
  /** Local time at the location, as eBird writes it ("2026-11-20 08:15"). */
  obsDt: string | null;
  howMany: number | null;
  lat: number | null;
  lng: number | null;
}

export type EbirdAnswer = { ok: true; observations: EbirdObservation[] } | SourceFailure;

export interface EbirdClient {
  /** Species reported within `distKm` (≤ 50) over the last `backDays` (≤ 30). */
  recent(latitude: number, longitude: number, distKm: number, backDays: number): Promise<EbirdAnswer>;
}

/** eBird's array of observations, or null when the body is not one. */
export function parseObservations(body: unknown): EbirdObservation[] | null {
  if (!Array.isArray(body)) return null;
  const out: EbirdObservation[] = [];
  for (const o of body) {
    if (!o || typeof o !== 'object') return null;
    const r = o as Record<string, unknown>;
    if (typeof r.speciesCode !== 'string' || r.speciesCode === '') return null;
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    out.push({
      speciesCode: r.speciesCode,
      comName: typeof r.comName === 'string' ? r.comName : r.speciesCode,
      sciName: typeof r.sciName === 'string' ? r.sciName : '',
      obsDt: typeof r.obsDt === 'string' ? r.obsDt : null,
      howMany: num(r.howMany),
      lat: num(r.lat),
      lng: num(r.lng),
    });
  }
  return out;
}

export function createEbirdClient(opts: { baseUrl: string; apiKey: string; timeoutMs: number; fetch?: typeof fetch }): EbirdClient {
  const doFetch = opts.fetch ?? fetch;
  return {
    async recent(latitude, longitude, distKm, backDays) {
      const url = new URL(`${opts.baseUrl}/v2/data/obs/geo/recent`);
      url.search = new URLSearchParams({
        lat: latitude.toFixed(2),
        lng: longitude.toFixed(2),
        dist: String(distKm),
        back: String(backDays),
      }).toString();
      let res: Response;
      try {
        res = await doFetch(url, {
          signal: AbortSignal.timeout(opts.timeoutMs),
          headers: { accept: 'application/json', 'x-ebirdapitoken': opts.apiKey },
        });
      } catch (err) {
        const timedOut = (err as Error).name === 'TimeoutError';
        return { ok: false, reason: 'unreachable', detail: timedOut ? 'eBird did not answer in time' : 'eBird cannot be reached' };
      }
      const text = await res.text().catch(() => '');
      if (res.status === 401 || res.status === 403)
        return { ok: false, reason: 'upstream_error', detail: `eBird refused the API key (${res.status})` };
      if (!res.ok) return { ok: false, reason: 'upstream_error', detail: `eBird answered ${res.status}` };
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return { ok: false, reason: 'invalid_response', detail: 'eBird answered something other than JSON' };
      }
      const observations = parseObservations(body);
      if (!observations)
        return { ok: false, reason: 'invalid_response', detail: 'eBird answered something other than a list of observations' };
      return { ok: true, observations };
    },
  };
}
