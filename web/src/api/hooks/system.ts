/** Hub status (hub admins): the hub's processes, its infrastructure checks and the data summary. */
import { useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type SystemStatus = Body<'/api/system/status', 'get'>;
export type ServiceEntry = SystemStatus['services'][number];
export type InfraCheck = SystemStatus['infrastructure']['database'];

export const systemKeys = {
  status: ['system-status'] as const,
};

/** Refreshed every 10 s (the processes rewrite their entries as often). */
export function useSystemStatus() {
  return useQuery({
    queryKey: systemKeys.status,
    queryFn: () => data(api.GET('/api/system/status')),
    refetchInterval: 10_000,
  });
}

export type HubInfo = Body<'/api/system/info', 'get'>;

/** Public facts of the hub (registration open, public URL); they change only when a hub admin saves settings. */
export function useHubInfo() {
  return useQuery({
    queryKey: ['system-info'] as const,
    queryFn: () => data(api.GET('/api/system/info')),
    staleTime: 60_000,
  });
}

export type SystemStorage = Body<'/api/system/storage', 'get'>;

/** The hub's stored audio, growth and disk (hub admins); refreshed each minute. */
export function useSystemStorage() {
  return useQuery({
    queryKey: ['system-storage'] as const,
    queryFn: () => data(api.GET('/api/system/storage')),
    refetchInterval: 60_000,
  });
}
