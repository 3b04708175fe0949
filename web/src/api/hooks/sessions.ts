/** Recording sessions and the timeline of one. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, data, type Body, type Query } from '../client';

export type SessionRow = Body<'/api/sessions', 'get'>['sessions'][number];
export type SessionTimeline = Body<'/api/sessions/timeline', 'get'>;
type SessionsQuery = Query<'/api/sessions', 'get'>;

export const sessionKeys = {
  list: (tenantId: string, satelliteId: string, filter: unknown, sortBy: string, page: number) =>
    ['sessions', tenantId, satelliteId, filter, sortBy, page] as const,
  timeline: (sessionId: string) => ['timeline', sessionId] as const,
};

export function useSessions(key: ReturnType<typeof sessionKeys.list>, query: () => SessionsQuery) {
  return useQuery({
    queryKey: key,
    enabled: !!key[1],
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/sessions', { params: { query: query() } })),
  });
}

/** One satellite's chunks and detections over [from, to). */
export function useSessionTimeline(sessionId: string, query: { tenantId: string; satelliteId: string; from: string; to: string }) {
  return useQuery({
    queryKey: sessionKeys.timeline(sessionId),
    queryFn: () => data(api.GET('/api/sessions/timeline', { params: { query } })),
  });
}
