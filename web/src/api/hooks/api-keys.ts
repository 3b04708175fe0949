/** A team's API keys: the list, creating and revoking one. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';
import type { Role } from './account';

export type ApiKey = Body<'/api/auth/api-keys', 'get'>['apiKeys'][number];

export const apiKeyKeys = { list: (tenantId: string) => ['api-keys', tenantId] as const };

export function useApiKeys(tenantId: string, enabled: boolean) {
  return useQuery({
    queryKey: apiKeyKeys.list(tenantId),
    enabled: enabled && !!tenantId,
    queryFn: () => data(api.GET('/api/auth/api-keys', { params: { query: { tenantId } } })),
  });
}

/** Creates an API key; `onCreated` gets its one-time secret before the list refreshes. */
export function useCreateApiKey(tenantId: string, onCreated: (created: Body<'/api/auth/api-keys', 'post'>) => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ name, role }: { name: string; role: Role }) =>
      data(api.POST('/api/auth/api-keys', { body: { tenantId, name, role: role as 'viewer' } })),
    onSuccess: (r) => {
      onCreated(r);
      void qc.invalidateQueries({ queryKey: apiKeyKeys.list(tenantId) });
    },
  });
}

export function useRevokeApiKey(tenantId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => data(api.DELETE('/api/auth/api-keys/{id}', { params: { path: { id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: apiKeyKeys.list(tenantId) }),
  });
}
