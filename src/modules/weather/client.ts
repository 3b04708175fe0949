/**
 * Open-Meteo's hourly weather (no key): the archive API (`/v1/archive`, ERA5, a few days behind)
 * for older days and the forecast API (`/v1/forecast`, the last three months and today) for the
 * recent ones. Times are asked in GMT so an hour is the same instant whatever the team's zone.
 */
import type { WeatherHour } from './repo.ts';

/** One hour of weather (its shape is the stored row's, ./repo.ts). */
export type { WeatherHour };

/** Why an outside source gave no data; `detail` is for people and carries no secret. */
export interface SourceFailure {
  ok: false;
  reason: 'unreachable' | 'upstream_error' | 'invalid_response';
  detail: string;
}

export type WeatherAnswer = { ok: true; hours: WeatherHour[] } | SourceFailure;

export type WeatherApi = 'archive' | 'forecast';

export interface OpenMeteoClient {
  /** Hourly weather at a position for whole UTC days `startDate`..`endDate` (YYYY-MM-DD, both included). */
  hourly(api: WeatherApi, latitude: number, longitude: number, startDate: string, endDate: string): Promise<WeatherAnswer>;
}

export const WEATHER_VARIABLES = 'temperature_2m,precipitation,wind_speed_10m,cloud_cover';

const finiteOrNull = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The `hourly` block of an Open-Meteo answer as hours, or null when it is not one. */
export function parseHourly(body: unknown): WeatherHour[] | null {
  if (!body || typeof body !== 'object') return null;
  const hourly = (body as { hourly?: unknown }).hourly;
  if (!hourly || typeof hourly !== 'object') return null;
  const h = hourly as Record<string, unknown>;
  const time = h.time;
  if (!Array.isArray(time)) return null;
  const column = (name: string): unknown[] | null => {
    const c = h[name];
    if (c === undefined) return new Array(time.length).fill(null);
    return Array.isArray(c) && c.length === time.length ? c : null;
  };
  const cols = ['temperature_2m', 'precipitation', 'wind_speed_10m', 'cloud_cover'].map(column);
  if (cols.some((c) => c === null)) return null;
  const [temp, precip, wind, cloud] = cols as unknown[][];
  const hours: WeatherHour[] = [];
  for (let i = 0; i < time.length; i++) {
    const t = time[i];
    // GMT in ISO 8601 without a zone ("2026-11-01T05:00"), or seconds with timeformat=unixtime.
    const ms = typeof t === 'number' ? t * 1000 : typeof t === 'string' ? Date.parse(/Z|[+-]\d\d:?\d\d$/.test(t) ? t : `${t}Z`) : NaN;
    if (!Number.isFinite(ms)) return null;
    hours.push({
      hour: new Date(ms),
      temperature: finiteOrNull(temp[i]),
      precipitation: finiteOrNull(precip[i]),
      windSpeed: finiteOrNull(wind[i]),
      cloudCover: finiteOrNull(cloud[i]),
    });
  }
  return hours;
}

export function createOpenMeteoClient(opts: {
  forecastUrl: string;
  archiveUrl: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}): OpenMeteoClient {
  const doFetch = opts.fetch ?? fetch;
  return {
    async hourly(api, latitude, longitude, startDate, endDate) {
      const base = api === 'archive' ? opts.archiveUrl : opts.forecastUrl;
      const url = new URL(`${base}/v1/${api}`);
      url.search = new URLSearchParams({
        latitude: String(latitude),
        longitude: String(longitude),
        start_date: startDate,
        end_date: endDate,
        hourly: WEATHER_VARIABLES,
        timezone: 'GMT',
        wind_speed_unit: 'kmh',
      }).toString();
      let res: Response;
      try {
        res = await doFetch(url, { signal: AbortSignal.timeout(opts.timeoutMs), headers: { accept: 'application/json' } });
      } catch (err) {
        const timedOut = (err as Error).name === 'TimeoutError';
        return {
          ok: false,
          reason: 'unreachable',
          detail: timedOut ? 'The weather service did not answer in time' : 'The weather service cannot be reached',
        };
      }
      const text = await res.text().catch(() => '');
      if (!res.ok) return { ok: false, reason: 'upstream_error', detail: `The weather service answered ${res.status}` };
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return { ok: false, reason: 'invalid_response', detail: 'The weather service answered something other than JSON' };
      }
      const hours = parseHourly(body);
      if (!hours) return { ok: false, reason: 'invalid_response', detail: 'The weather service answer has no hourly series' };
      return { ok: true, hours };
    },
  };
}
