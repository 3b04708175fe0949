/**
 * The four geo views behind one front: each query's teams, zone and window resolved the way every
 * stats view resolves them (window.ts), then handed to the view's service.
 */
import type { Clock } from '../../core/clock.ts';
import type { SettingsService } from '../settings/service.ts';
import type { StatsQuery } from './schemas.ts';
import { resolveWindow, zoneOf } from './window.ts';
import { MAP_POINTS_DEFAULT, type GeoWindow, type MapService } from './map-service.ts';
import type { WeatherCorrelationService } from './weather-correlation.ts';
import { EXPECTED_BACK_DEFAULT_DAYS, EXPECTED_DIST_DEFAULT_KM, type ExpectedSpeciesService } from './expected-species.ts';

export function createGeoStatsService(deps: {
  clock: Clock;
  settings: Pick<SettingsService, 'teamSetting' | 'hubSetting'>;
  map: MapService;
  weather: WeatherCorrelationService;
  expected: ExpectedSpeciesService;
}) {
  async function windowOf(tenantIds: readonly string[] | null, q: StatsQuery): Promise<GeoWindow> {
    const timeZone = await zoneOf(tenantIds, deps.settings);
    const w = resolveWindow(q, timeZone, deps.clock.now());
    return { tenantIds, start: w.from, end: w.to, timeZone, satelliteId: q.satelliteId, species: q.species };
  }
  return {
    map: async (tenantIds: readonly string[] | null, q: StatsQuery) => deps.map.map(await windowOf(tenantIds, q)),
    mapDetections: async (tenantIds: readonly string[] | null, q: StatsQuery & { limit?: number }) =>
      deps.map.points(await windowOf(tenantIds, q), q.limit ?? MAP_POINTS_DEFAULT),
    weatherCorrelation: async (tenantIds: readonly string[] | null, q: StatsQuery) =>
      deps.weather.correlation(await windowOf(tenantIds, q)),
    expectedSpecies: async (tenantIds: readonly string[] | null, q: StatsQuery & { distKm?: number; backDays?: number }) =>
      deps.expected.expected(await windowOf(tenantIds, q), {
        distKm: q.distKm ?? EXPECTED_DIST_DEFAULT_KM,
        backDays: q.backDays ?? EXPECTED_BACK_DEFAULT_DAYS,
      }),
  };
}

export type GeoStatsService = ReturnType<typeof createGeoStatsService>;
