/** Audio retention runs (hub admins): the last runs, and "Run now". */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type RetentionRun = Body<'/api/admin/retention/runs', 'get'>['runs'][number];

export const retentionKeys = {
  runs: ['retention-runs'] as const,
};

/** The last runs, newest first; polled every few seconds while one is running. */
export function useRetentionRuns() {
  return useQuery({
    queryKey: retentionKeys.runs,
    queryFn: () => data(api.GET('/api/admin/retention/runs', { params: { query: {} } })),
    refetchInterval: (q) => (q.state.data?.runs.some((r) => r.status === 'running') ? 3000 : false),
  });
}

/** Starts a run now (or answers the one already going); the runs list refreshes. */
export function useRunRetention() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => data(api.POST('/api/admin/retention/run')),
    onSuccess: () => qc.invalidateQueries({ queryKey: retentionKeys.runs }),
  });
}
