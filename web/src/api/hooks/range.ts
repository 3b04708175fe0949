/** The range filter (issue 35): the species a satellite's range model expects this week. */
import { useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type ExpectedAtSatellite = Body<'/api/satellites/{id}/expected-species', 'get'>;

export function useExpectedAtSatellite(id: string, week?: number) {
  return useQuery({
    queryKey: ['expected-at-satellite', id, week ?? null] as const,
    queryFn: () => data(api.GET('/api/satellites/{id}/expected-species', { params: { path: { id }, query: week ? { week } : {} } })),
  });
}
