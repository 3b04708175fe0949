/** A team's open invites. */
import { useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type Invite = Body<'/api/auth/invites', 'get'>['invites'][number];

export const inviteKeys = { list: (tenantId: string) => ['invites', tenantId] as const };

export function useInvites(tenantId: string, enabled: boolean) {
  return useQuery({
    queryKey: inviteKeys.list(tenantId),
    enabled: enabled && !!tenantId,
    queryFn: () => data(api.GET('/api/auth/invites', { params: { query: { tenantId } } })),
  });
}
