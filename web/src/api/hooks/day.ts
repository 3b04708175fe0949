/** The day at a glance (issue 36): one local day as species × hour, for the team and on its public page. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type DayGrid = Body<'/api/stats/day', 'get'>;

export const dayKeys = {
  team: (tenantId: string | null, date: string | null) => ['stats', 'day', tenantId, date] as const,
  public: (slug: string, date: string | null, lang: string) => ['public-team-day', slug, date, lang] as const,
};

/** The team's day (`date` null: today in the team's zone). */
export function useDay(tenantId: string | null, date: string | null) {
  return useQuery({
    queryKey: dayKeys.team(tenantId, date),
    enabled: !!tenantId,
    placeholderData: keepPreviousData,
    // Today fills up as the satellites hear birds; a past day does not change much.
    refetchInterval: date ? false : 60_000,
    queryFn: () => data(api.GET('/api/stats/day', { params: { query: { tenantId: tenantId!, ...(date ? { date } : {}) } } })),
  });
}

export function usePublicDay(slug: string, date: string | null, lang: string) {
  return useQuery({
    queryKey: dayKeys.public(slug, date, lang),
    placeholderData: keepPreviousData,
    retry: false,
    // The hub keeps it 10 minutes.
    staleTime: 5 * 60_000,
    queryFn: () =>
      data(api.GET('/api/public/teams/{slug}/day', { params: { path: { slug }, query: { lang, ...(date ? { date } : {}) } } })),
  });
}
