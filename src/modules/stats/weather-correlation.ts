/**
 * GET /stats/weather-correlation: how a satellite's hourly detection count goes with the weather
 * at its position (temperature, precipitation, wind, cloud cover), as Pearson's r and Spearman's
 * ρ with the sample size. Weather comes from the weather module (Open-Meteo, cached per hour);
 * when it cannot be had the answer says so and why, and is still a 200.
 */
import type { Db } from '../../infra/db/index.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { DeviceService } from '../satellites/device-service.ts';
import type { WeatherService } from '../weather/service.ts';
import type { SourceFailure, WeatherHour } from '../weather/client.ts';
import { pearson, spearman } from './correlation.ts';
import { createGeoRepo } from './geo-repo.ts';
import { positionOf, type GeoWindow } from './map-service.ts';

const HOUR = 3_600_000;

export const WEATHER_FIELDS = ['temperature', 'precipitation', 'windSpeed', 'cloudCover'] as const;
type Field = (typeof WEATHER_FIELDS)[number];

export interface Correlation {
  pearson: number | null;
  spearman: number | null;
  n: number;
}
export type Correlations = Record<Field, Correlation>;

/** One sample: an hour's detection count and its weather. */
interface Sample {
  count: number;
  weather: WeatherHour;
}

export function correlate(samples: readonly Sample[]): Correlations {
  const out = {} as Correlations;
  for (const field of WEATHER_FIELDS) {
    const x: number[] = [];
    const y: number[] = [];
    for (const s of samples) {
      const v = s.weather[field];
      if (v === null) continue;
      x.push(s.count);
      y.push(v);
    }
    out[field] = { pearson: pearson(x, y), spearman: spearman(x, y), n: x.length };
  }
  return out;
}

/** The local date (YYYY-MM-DD) of an instant in a time zone. */
export function localDayOf(timeZone: string): (ms: number) => string {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (ms) => f.format(ms);
}

export function createWeatherCorrelationService(deps: {
  db: Db;
  devices: Pick<DeviceService, 'positions'>;
  visibility: Pick<CategoryVisibility, 'of'>;
  weather: Pick<WeatherService, 'hourly'>;
}) {
  const repo = createGeoRepo(deps.db);

  return {
    /**
     * The sample of a satellite is every hour of the window with weather that falls on a local
     * day on which the satellite counted a detection: days it counted nothing are most likely
     * days it did not record, and their zero hours would read as "no birds in this weather".
     */
    async correlation(w: GeoWindow) {
      const frame = { timeZone: w.timeZone, from: w.start.toISOString(), to: w.end.toISOString(), fields: [...WEATHER_FIELDS] };
      const [sats, visible] = await Promise.all([deps.devices.positions(w.tenantIds, w.satelliteId), deps.visibility.of(w.tenantIds)]);
      const located = sats.map((s) => ({ s, at: positionOf(s) })).filter((x) => x.at.latitude !== null && x.at.longitude !== null);
      if (located.length === 0) {
        return {
          ...frame,
          available: false,
          reason: 'no_position',
          detail: 'No satellite in the selection has a position (profile or GPS)',
          satellites: [],
          overall: null,
        };
      }
      const counts = await repo.hourlyCounts({ ...w, visible, satelliteIds: located.map((x) => x.s.satelliteId) });
      const bySatellite = new Map<string, Map<number, number>>();
      for (const c of counts) {
        let m = bySatellite.get(c.satelliteId);
        if (!m) bySatellite.set(c.satelliteId, (m = new Map()));
        m.set(c.hour * HOUR, c.count);
      }
      const dayOf = localDayOf(w.timeZone);
      const pooled: Sample[] = [];
      const satellites = [];
      let failure: SourceFailure | null = null;
      // One satellite after the other: the weather service is free and asks to be spared bursts.
      for (const { s, at } of located) {
        const base = { satelliteId: s.satelliteId, name: s.name, latitude: at.latitude, longitude: at.longitude };
        const weather = await deps.weather.hourly(at.latitude!, at.longitude!, w.start, w.end, { cachedOnly: failure ?? undefined });
        if (!weather.ok) {
          failure ??= weather;
          satellites.push({ ...base, available: false, reason: weather.reason, detail: weather.detail, hours: 0, correlations: null });
          continue;
        }
        const hourly = bySatellite.get(s.satelliteId) ?? new Map<number, number>();
        const activeDays = new Set([...hourly.keys()].map(dayOf));
        const samples: Sample[] = [];
        for (const [t, wx] of [...weather.hours].sort((a, b) => a[0] - b[0])) {
          if (activeDays.has(dayOf(t))) samples.push({ count: hourly.get(t) ?? 0, weather: wx });
        }
        pooled.push(...samples);
        satellites.push({ ...base, available: true, hours: samples.length, correlations: correlate(samples) });
      }
      const anyWeather = satellites.some((s) => s.available);
      return {
        ...frame,
        available: anyWeather,
        ...(anyWeather ? {} : { reason: failure!.reason, detail: failure!.detail }),
        satellites,
        overall: anyWeather ? { hours: pooled.length, correlations: correlate(pooled) } : null,
      };
    },
  };
}

export type WeatherCorrelationService = ReturnType<typeof createWeatherCorrelationService>;
