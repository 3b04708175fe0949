/** A team's API keys. */
import { useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type ApiKey = Body<'/api/auth/api-keys', 'get'>['apiKeys'][number];

export const apiKeyKeys = { list: (tenantId: string) => ['api-keys', tenantId] as const };

export function useApiKeys(tenantId: string, enabled: boolean) {
  return useQuery({
    queryKey: apiKeyKeys.list(tenantId),
    enabled: enabled && !!tenantId,
    queryFn: () => data(api.GET('/api/auth/api-keys', { params: { query: { tenantId } } })),
  });
}
