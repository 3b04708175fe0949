/** The team's alerts: the list (filtered, paged), the unread count for the navigation, acknowledging. */
import { useCallback } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body, type Query } from '../client';

export type AlertList = Body<'/api/alerts', 'get'>;
export type Alert = AlertList['alerts'][number];
export type AlertEvent = Alert['event'];
export type AlertQuery = Query<'/api/alerts', 'get'>;

export const ALERT_EVENTS: AlertEvent[] = [
  'rare_species',
  'first_of_day',
  'first_of_season',
  'satellite_offline',
  'absence',
  'trend',
  'custom_rule',
  'test',
];

export const alertKeys = {
  /** Every alert query of a team: the lists and the unread count (an alert frame refreshes them all). */
  of: (tenantId: string | null) => ['alerts', tenantId] as const,
  list: (tenantId: string | null, query: AlertQuery) => ['alerts', tenantId, 'list', query] as const,
  unread: (tenantId: string | null) => ['alerts', tenantId, 'unread'] as const,
};

/** One page of the team's alerts, newest first. */
export function useAlerts(tenantId: string | null, query: Omit<AlertQuery, 'tenantId'>) {
  const q = { ...query, tenantId: tenantId ?? undefined };
  return useQuery({
    queryKey: alertKeys.list(tenantId, q),
    enabled: !!tenantId,
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/alerts', { params: { query: q } })),
  });
}

/** How many of the team's alerts nobody acknowledged yet (the list answers the count with one row). */
export function useUnreadAlerts(tenantId: string | null) {
  return useQuery({
    queryKey: alertKeys.unread(tenantId),
    enabled: !!tenantId,
    select: (r: AlertList) => r.unacknowledged,
    queryFn: () => data(api.GET('/api/alerts', { params: { query: { tenantId: tenantId!, acknowledged: false, limit: 1 } } })),
  });
}

/** Refreshes every alert query of the team (after an alert frame). */
export function useRefreshAlerts(tenantId: string | null) {
  const qc = useQueryClient();
  return useCallback(() => void qc.invalidateQueries({ queryKey: alertKeys.of(tenantId) }), [qc, tenantId]);
}

/** Acknowledging one alert, or all of them; both refresh the lists and the count. */
export function useAcknowledge(tenantId: string | null) {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: alertKeys.of(tenantId) });
  return {
    one: useMutation({
      mutationFn: (id: string) => data(api.POST('/api/alerts/{id}/acknowledge', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
    all: useMutation({
      mutationFn: () => data(api.POST('/api/alerts/acknowledge-all', { body: { tenantId: tenantId! } })),
      onSuccess: refresh,
    }),
  };
}
