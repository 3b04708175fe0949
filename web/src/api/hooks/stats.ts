/**
 * The /stats views (spec §4 "Stats"). Every view shares one filter — the team, a satellite or
 * all, and a window of the last N local days or from/to dates — so one helper builds each
 * query; the hub answers with the window it counted and the time zone of its days and hours.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, data, type Body, type Query } from '../client';
import type { paths } from '../schema';

export interface StatsFilter {
  tenantId: string | null;
  satelliteId?: string;
  /** The last N local days (today included), or from/to local dates (to exclusive). */
  days?: number;
  from?: string;
  to?: string;
}

type StatsPath = Extract<keyof paths, `/api/stats/${string}`>;

/** The common query part of a filter: the window as days or as from/to, never both. */
export function windowQuery(f: StatsFilter): Record<string, string | number> {
  const q: Record<string, string | number> = {};
  if (f.tenantId) q.tenantId = f.tenantId;
  if (f.satelliteId) q.satelliteId = f.satelliteId;
  if (f.from || f.to) {
    if (f.from) q.from = f.from;
    if (f.to) q.to = f.to;
  } else q.days = f.days ?? 30;
  return q;
}

// openapi-fetch types GET per literal path; one loosened call serves every stats path, and the
// answer keeps the exact body type of its path.
const get = api.GET as unknown as (
  path: string,
  init: { params: { query: unknown; path?: unknown } },
) => Promise<{
  data?: unknown;
  error?: unknown;
  response: Response;
}>;

function useStats<P extends StatsPath>(
  path: P,
  filter: StatsFilter,
  extra: Partial<Query<P, 'get'>> = {},
  opts: { enabled?: boolean; pathParams?: Record<string, string> } = {},
) {
  const query = { ...windowQuery(filter), ...extra };
  return useQuery({
    queryKey: ['stats', path, opts.pathParams ?? null, query] as const,
    enabled: !!filter.tenantId && (opts.enabled ?? true),
    placeholderData: keepPreviousData,
    queryFn: () => data(get(path, { params: { query, path: opts.pathParams } })) as Promise<Body<P, 'get'>>,
  });
}

export type Dashboard = Body<'/api/stats/dashboard', 'get'>;
export type SpeciesProfile = Body<'/api/stats/species/{code}', 'get'>;
export type MapAnswer = Body<'/api/stats/map', 'get'>;

export const useDashboardStats = (f: StatsFilter) => useStats('/api/stats/dashboard', f);
export const useTrends = (f: StatsFilter) => useStats('/api/stats/trends', f);
export const useTopSpecies = (f: StatsFilter, limit = 10) => useStats('/api/stats/top-species', f, { limit });
export const useActivity = (f: StatsFilter) => useStats('/api/stats/activity', f);
export const useHeatmap = (f: StatsFilter) => useStats('/api/stats/activity-heatmap', f);
export const useSatelliteActivity = (f: StatsFilter) => useStats('/api/stats/satellite-activity', f);
export const useVerification = (f: StatsFilter) => useStats('/api/stats/verification', f);
export const useLeaderboard = (f: StatsFilter) => useStats('/api/stats/leaderboard', f);
export const useSpeciesAccuracy = (f: StatsFilter) => useStats('/api/stats/species-accuracy', f);
export const useSpeciesList = (f: StatsFilter) => useStats('/api/stats/species', f);
export const useSpeciesProfile = (f: StatsFilter, code: string) => useStats('/api/stats/species/{code}', f, {}, { pathParams: { code } });
export const useBiodiversity = (f: StatsFilter) => useStats('/api/stats/biodiversity', f);
export const useCompare = (f: StatsFilter, satelliteIds: string[]) =>
  useStats(
    '/api/stats/compare',
    { ...f, satelliteId: undefined },
    { satelliteIds: satelliteIds.join(',') },
    { enabled: satelliteIds.length >= 2 },
  );
export const useMigration = (f: StatsFilter) => useStats('/api/stats/migration', f);
export const useWeatherCorrelation = (f: StatsFilter) => useStats('/api/stats/weather-correlation', f);
export const useExpectedSpecies = (f: StatsFilter) => useStats('/api/stats/expected-species', f);
export const useMapStats = (f: StatsFilter) => useStats('/api/stats/map', f);
export const useMapDetections = (f: StatsFilter) => useStats('/api/stats/map/detections', f);
