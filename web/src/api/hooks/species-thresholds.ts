/** Per-species thresholds (issue 35): the team's list, one species' history, and an admin's pin/reset. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type ThresholdList = Body<'/api/species-thresholds', 'get'>;
export type SpeciesThreshold = ThresholdList['thresholds'][number];
export type ThresholdDetail = Body<'/api/species-thresholds/{code}', 'get'>;
export type ThresholdMode = ThresholdDetail['mode'];

export const thresholdKeys = {
  of: (tenantId: string | null) => ['species-thresholds', tenantId] as const,
  list: (tenantId: string | null) => ['species-thresholds', tenantId, 'list'] as const,
  detail: (tenantId: string | null, code: string) => ['species-thresholds', tenantId, 'detail', code] as const,
};

export function useSpeciesThresholds(tenantId: string | null) {
  const q = useQuery({
    queryKey: thresholdKeys.list(tenantId),
    enabled: !!tenantId,
    queryFn: () => data(api.GET('/api/species-thresholds', { params: { query: { tenantId: tenantId! } } })),
  });
  const byCode = new Map((q.data?.thresholds ?? []).map((t) => [t.speciesCode, t]));
  return { ...q, byCode };
}

export function useSpeciesThreshold(tenantId: string | null, code: string, enabled: boolean) {
  return useQuery({
    queryKey: thresholdKeys.detail(tenantId, code),
    enabled: !!tenantId && enabled,
    queryFn: () => data(api.GET('/api/species-thresholds/{code}', { params: { path: { code }, query: { tenantId: tenantId! } } })),
  });
}

/** Pin a value (0–1), reset to none, or follow the votes again; refreshes the list and the species. */
export function useSetSpeciesThreshold(tenantId: string | null, code: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { mode: ThresholdMode; threshold?: number }) =>
      data(api.PUT('/api/species-thresholds/{code}', { params: { path: { code } }, body: { tenantId: tenantId!, ...body } })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: thresholdKeys.of(tenantId) }),
  });
}
