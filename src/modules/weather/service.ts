/**
 * Hourly weather at a position, from the database when it has the hour and from Open-Meteo
 * otherwise (docs/decisions.md "Statistics (weather, eBird, map)"). Each hour at a rounded
 * position is fetched once: what the service answers is stored, hours it has no value for yet
 * (the archive's last days, the future) are left to a later request.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { OpenMeteoClient, SourceFailure, WeatherApi, WeatherHour } from './client.ts';
import { createWeatherRepo } from './repo.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Days before today that the archive may still lack (ERA5 comes about five days late). */
const ARCHIVE_LAG_DAYS = 6;
/** Longest span one request to Open-Meteo asks for. */
const MAX_REQUEST_DAYS = 366;

/** The 0.01° grid the cache is keyed by. */
export const gridOf = (degrees: number) => Math.round(degrees * 100);

const dayString = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const utcDay = (ms: number) => Math.floor(ms / DAY) * DAY;

export type WeatherHours = { ok: true; hours: Map<number, WeatherHour>; fetched: number } | SourceFailure;

export function createWeatherService(deps: { db: Db; clock: Clock; client: OpenMeteoClient }) {
  const repo = createWeatherRepo(deps.db);

  /** Runs of consecutive UTC days (start ms), split where a run would cross `split`. */
  function runs(days: number[], split: number): Array<{ api: WeatherApi; from: number; to: number }> {
    const out: Array<{ api: WeatherApi; from: number; to: number }> = [];
    for (const d of days) {
      const api: WeatherApi = d < split ? 'archive' : 'forecast';
      const last = out[out.length - 1];
      if (last && last.api === api && d === last.to + DAY && (d - last.from) / DAY < MAX_REQUEST_DAYS) last.to = d;
      else out.push({ api, from: d, to: d });
    }
    return out;
  }

  return {
    /**
     * Weather per UTC hour (key: the hour's start in ms) at a position over [start, end), the
     * past only. `fetched` counts the requests it took (0 when the database had every hour).
     * `cachedOnly`: answer from the database or else with that failure.
     */
    async hourly(
      latitude: number,
      longitude: number,
      start: Date,
      end: Date,
      opts: { cachedOnly?: SourceFailure } = {},
    ): Promise<WeatherHours> {
      const now = deps.clock.now().getTime();
      const latE2 = gridOf(latitude);
      const lngE2 = gridOf(longitude);
      const from = Math.floor(start.getTime() / HOUR) * HOUR;
      const to = Math.min(end.getTime(), Math.floor(now / HOUR) * HOUR);
      const hours = new Map<number, WeatherHour>();
      if (to <= from) return { ok: true, hours, fetched: 0 };
      for (const h of await repo.hours(latE2, lngE2, new Date(from), new Date(to))) hours.set(new Date(h.hour).getTime(), h);
      const missingDays = new Set<number>();
      for (let t = from; t < to; t += HOUR) if (!hours.has(t)) missingDays.add(utcDay(t));
      if (missingDays.size === 0) return { ok: true, hours, fetched: 0 };
      // A caller that already saw the service fail does not wait on it again (one timeout per request, not per satellite).
      if (opts.cachedOnly) return opts.cachedOnly;

      const split = utcDay(now) - ARCHIVE_LAG_DAYS * DAY;
      let fetched = 0;
      for (const run of runs(
        [...missingDays].sort((a, b) => a - b),
        split,
      )) {
        const answer = await deps.client.hourly(run.api, latE2 / 100, lngE2 / 100, dayString(run.from), dayString(run.to));
        fetched++;
        if (!answer.ok) return answer;
        // Only whole past hours with every value are kept: a gap is asked again next time.
        const complete = answer.hours.filter(
          (h) =>
            h.hour.getTime() + HOUR <= now &&
            h.temperature !== null &&
            h.precipitation !== null &&
            h.windSpeed !== null &&
            h.cloudCover !== null,
        );
        await repo.store(latE2, lngE2, complete, new Date(now));
        for (const h of complete) {
          const t = h.hour.getTime();
          if (t >= from && t < to) hours.set(t, h);
        }
      }
      return { ok: true, hours, fetched };
    },
  };
}

export type WeatherService = ReturnType<typeof createWeatherService>;
