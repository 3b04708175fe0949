/** Satellites: the fleet list, one satellite, its config history, logs, telemetry and deletion preview; registration and commands. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type Satellite = Body<'/api/satellites/{id}', 'get'>;
export type Registration = Body<'/api/satellites', 'post'>;
export type DeletionPreview = Body<'/api/satellites/{id}/deletion-preview', 'get'>;
export type ConfigHistoryEntry = Body<'/api/satellites/{id}/config/history', 'get'>['history'][number];
export type SatelliteLogs = NonNullable<Body<'/api/satellites/{id}/logs', 'get'>['logs']>;
export type TelemetrySample = Body<'/api/satellites/{id}/telemetry', 'get'>['telemetry'][number];

export const satelliteKeys = {
  /** Every fleet list, whatever the team or filter. */
  lists: ['satellites'] as const,
  listsOf: (tenantId: string | null) => ['satellites', tenantId] as const,
  list: (tenantId: string | null, archived: boolean) => ['satellites', tenantId, archived] as const,
  one: (id: string) => ['satellite', id] as const,
  history: (id: string) => ['config-history', id] as const,
  deletionPreview: (id: string) => ['deletion-preview', id] as const,
  logs: (id: string) => ['logs', id] as const,
  telemetry: (id: string) => ['telemetry', id] as const,
  recentTelemetry: (id: string) => ['telemetry-recent', id] as const,
};

/** The team's satellites; archived ones too with `archived`. */
export function useSatellites(tenantId: string | null, archived = false, opts: { refetchInterval?: number } = {}) {
  return useQuery({
    queryKey: satelliteKeys.list(tenantId, archived),
    enabled: !!tenantId,
    refetchInterval: opts.refetchInterval,
    queryFn: () =>
      data(
        api.GET('/api/satellites', { params: { query: { tenantId: tenantId!, ...(archived ? { includeArchived: '1' as const } : {}) } } }),
      ),
  });
}

export type SatelliteStorage = Body<'/api/satellites/storage', 'get'>;

/** Stored audio per satellite, the team's total and growth, satellite free space and the hub's disk (refreshed each minute). */
export function useSatelliteStorage(tenantId: string | null) {
  return useQuery({
    queryKey: ['satellites', tenantId, 'storage'] as const,
    enabled: !!tenantId,
    refetchInterval: 60_000,
    queryFn: () => data(api.GET('/api/satellites/storage', { params: { query: { tenantId: tenantId! } } })),
  });
}

export function useSatellite(id: string) {
  return useQuery({ queryKey: satelliteKeys.one(id), queryFn: () => data(api.GET('/api/satellites/{id}', { params: { path: { id } } })) });
}

export function useConfigHistory(id: string) {
  return useQuery({
    queryKey: satelliteKeys.history(id),
    queryFn: () => data(api.GET('/api/satellites/{id}/config/history', { params: { path: { id } } })),
  });
}

export function useDeletionPreview(id: string, enabled: boolean) {
  return useQuery({
    queryKey: satelliteKeys.deletionPreview(id),
    enabled,
    queryFn: () => data(api.GET('/api/satellites/{id}/deletion-preview', { params: { path: { id } } })),
  });
}

/** The latest log answer; polls every 3 s while `waiting` and the satellite has not answered. */
export function useSatelliteLogs(id: string, waiting: boolean) {
  return useQuery({
    queryKey: satelliteKeys.logs(id),
    queryFn: () => data(api.GET('/api/satellites/{id}/logs', { params: { path: { id } } })),
    refetchInterval: (q) => (waiting && !q.state.data?.logs?.receivedAt ? 3000 : false),
  });
}

/** Telemetry samples, refreshed every minute: the detail chart (200) or the fleet cell (`recent`, 24). */
export function useTelemetry(id: string, recent = false) {
  return useQuery({
    queryKey: recent ? satelliteKeys.recentTelemetry(id) : satelliteKeys.telemetry(id),
    refetchInterval: 60_000,
    queryFn: () => data(api.GET('/api/satellites/{id}/telemetry', { params: { path: { id }, query: { limit: recent ? 24 : 200 } } })),
  });
}

/** Renaming, archiving and deleting one satellite: each refreshes it and every fleet list. */
export function useSatelliteMutations(id: string) {
  const qc = useQueryClient();
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: satelliteKeys.one(id) });
    void qc.invalidateQueries({ queryKey: satelliteKeys.lists });
  };
  return {
    rename: useMutation({
      mutationFn: (name: string) => data(api.PATCH('/api/satellites/{id}', { params: { path: { id } }, body: { name } })),
      onSuccess: refresh,
    }),
    /** Both null clears the position. */
    position: useMutation({
      mutationFn: (body: { latitude: number | null; longitude: number | null }) =>
        data(api.PUT('/api/satellites/{id}/position', { params: { path: { id } }, body })),
      onSuccess: refresh,
    }),
    /** Takes the current state: an archived satellite is unarchived. */
    archive: useMutation({
      mutationFn: (archived: boolean) =>
        data(
          archived
            ? api.POST('/api/satellites/{id}/unarchive', { params: { path: { id } } })
            : api.POST('/api/satellites/{id}/archive', { params: { path: { id } } }),
        ),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (confirmName: string) => data(api.DELETE('/api/satellites/{id}', { params: { path: { id } }, body: { confirmName } })),
      onSuccess: () => void qc.invalidateQueries({ queryKey: satelliteKeys.lists }),
    }),
  };
}

/** Refetches the config history (after the satellite's setting overrides are saved). */
export function useRefreshConfigHistory(id: string) {
  const qc = useQueryClient();
  return () => void qc.invalidateQueries({ queryKey: satelliteKeys.history(id) });
}

/** Registers a satellite in the team; `onRegistered` gets its one-time credentials before the fleet lists refresh. */
export function useRegisterSatellite(tenantId: string | null, onRegistered: (reg: Registration, name: string) => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => data(api.POST('/api/satellites', { body: { tenantId: tenantId!, name } })),
    onSuccess: (reg, name) => {
      onRegistered(reg, name);
      void qc.invalidateQueries({ queryKey: satelliteKeys.listsOf(tenantId) });
    },
  });
}

/** Commands to one satellite: push its profile, request an update, rotate its key, ask for its logs. */
export function useSatelliteCommands(id: string, onLogsRequested: () => void) {
  const qc = useQueryClient();
  const path = { params: { path: { id } } };
  return {
    pushProfile: useMutation({ mutationFn: () => data(api.POST('/api/satellites/{id}/profile', path)) }),
    requestUpdate: useMutation({
      mutationFn: () => data(api.POST('/api/satellites/{id}/update', path)),
      onSuccess: () => qc.invalidateQueries({ queryKey: satelliteKeys.one(id) }),
    }),
    rotateKey: useMutation({ mutationFn: () => data(api.POST('/api/satellites/{id}/rotate-api-key', path)) }),
    requestLogs: useMutation({
      mutationFn: () => data(api.POST('/api/satellites/{id}/logs/request', { ...path, body: {} })),
      onSuccess: () => {
        onLogsRequested();
        void qc.invalidateQueries({ queryKey: satelliteKeys.logs(id) });
      },
    }),
  };
}
