/** Detection models (hub admin) and their labels. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, upload, type Body } from '../client';

export type ModelInfo = Body<'/api/admin/models', 'get'>['models'][number];
export type ModelLabel = Body<'/api/admin/models/{id}/labels/{index}', 'put'>;

export const modelKeys = {
  admin: ['admin-models'] as const,
  /** Every page of one model's labels. */
  labelsOf: (id: string) => ['model-labels', id] as const,
  labels: (id: string, search: string, own: boolean, offset: number) => ['model-labels', id, search, own, offset] as const,
};

export function useAdminModels() {
  return useQuery({ queryKey: modelKeys.admin, queryFn: () => data(api.GET('/api/admin/models')) });
}

export function useModelLabels(id: string, filter: { search: string; own: boolean; limit: number; offset: number }, enabled: boolean) {
  const { search, own, limit, offset } = filter;
  return useQuery({
    queryKey: modelKeys.labels(id, search, own, offset),
    enabled,
    placeholderData: keepPreviousData,
    queryFn: () =>
      data(
        api.GET('/api/admin/models/{id}/labels', {
          params: { path: { id }, query: { ...(search ? { search } : {}), ...(own ? { own: true } : {}), limit, offset } },
        }),
      ),
  });
}

/** The admin model list's mutations; each refreshes the list. */
export function useModelMutations() {
  const qc = useQueryClient();
  const refresh = () => qc.invalidateQueries({ queryKey: modelKeys.admin });
  return {
    setDefault: useMutation({
      mutationFn: (id: string) => data(api.POST('/api/admin/models/{id}/default', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
    toggle: useMutation({
      mutationFn: (m: ModelInfo) =>
        data(api.PUT('/api/admin/models/{id}', { params: { path: { id: m.id } }, body: { enabled: !m.enabled } })),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/admin/models/{id}', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
    add: useMutation({ mutationFn: (form: FormData) => upload<ModelInfo>('/api/admin/models', form), onSuccess: refresh }),
  };
}

/** Maps one output of a model to a species code; the model's label pages refresh. */
export function useRemapLabel(modelId: string, index: number, onSuccess: () => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (speciesCode: string) =>
      data(api.PUT('/api/admin/models/{id}/labels/{index}', { params: { path: { id: modelId, index } }, body: { speciesCode } })),
    onSuccess: () => (onSuccess(), qc.invalidateQueries({ queryKey: modelKeys.labelsOf(modelId) })),
  });
}
