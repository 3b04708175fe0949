/** A team's members. */
import { useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type Member = Body<'/api/auth/members', 'get'>['members'][number];

export const memberKeys = { list: (tenantId: string) => ['members', tenantId] as const };

export function useMembers(tenantId: string, enabled: boolean) {
  return useQuery({
    queryKey: memberKeys.list(tenantId),
    enabled: enabled && !!tenantId,
    queryFn: () => data(api.GET('/api/auth/members', { params: { query: { tenantId } } })),
  });
}
