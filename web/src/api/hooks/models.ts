/** Detection models (hub admin) and their labels. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, upload, type Body, type RequestBody } from '../client';

export type ModelInfo = Body<'/api/admin/models', 'get'>['models'][number];
export type ModelLabel = Body<'/api/admin/models/{id}/labels/{index}', 'put'>;
export type KnownFamily = Body<'/api/admin/models/known', 'get'>['families'][number];
export type InstallStatus = Body<'/api/admin/models/installs/{id}', 'get'>;
export type InstallInput = RequestBody<'/api/admin/models/install', 'post'>;

/** How often the install page asks how an install is going. */
const INSTALL_POLL_MS = 500;

export const modelKeys = {
  admin: ['admin-models'] as const,
  known: ['known-models'] as const,
  install: (id: string) => ['model-install', id] as const,
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

/** The known model families (issue 31): the catalog ships with the hub, so it never goes stale. */
export function useKnownModels() {
  return useQuery({ queryKey: modelKeys.known, staleTime: Infinity, queryFn: () => data(api.GET('/api/admin/models/known')) });
}

/** Starts an install from a URL; the hub answers at once with the install to poll. */
export function useStartInstall() {
  return useMutation({ mutationFn: (body: InstallInput) => data(api.POST('/api/admin/models/install', { body })) });
}

/** One install's state, asked for every INSTALL_POLL_MS until it is done or failed; done refreshes the model list. */
export function useInstallStatus(id: string | null) {
  const qc = useQueryClient();
  return useQuery({
    queryKey: modelKeys.install(id ?? ''),
    enabled: id !== null,
    queryFn: async () => {
      const s = await data(api.GET('/api/admin/models/installs/{id}', { params: { path: { id: id ?? '' } } }));
      if (s.state === 'done') await qc.invalidateQueries({ queryKey: modelKeys.admin });
      return s;
    },
    refetchInterval: (q) => (q.state.data?.state === 'done' || q.state.data?.state === 'failed' ? false : INSTALL_POLL_MS),
  });
}
