/** A team's open invites: the list, creating and revoking one. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';
import type { Role } from './account';

export type Invite = Body<'/api/auth/invites', 'get'>['invites'][number];

export const inviteKeys = { list: (tenantId: string) => ['invites', tenantId] as const };

export function useInvites(tenantId: string, enabled: boolean) {
  return useQuery({
    queryKey: inviteKeys.list(tenantId),
    enabled: enabled && !!tenantId,
    queryFn: () => data(api.GET('/api/auth/invites', { params: { query: { tenantId } } })),
  });
}

/** Creates an invite link for `role`; `onCreated` gets it before the list refreshes. */
export function useCreateInvite(tenantId: string, onCreated: (invite: Body<'/api/auth/invites', 'post'>) => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (role: Role) => data(api.POST('/api/auth/invites', { body: { tenantId, role: role as 'viewer' } })),
    onSuccess: (r) => {
      onCreated(r);
      void qc.invalidateQueries({ queryKey: inviteKeys.list(tenantId) });
    },
  });
}

export function useRevokeInvite(tenantId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => data(api.DELETE('/api/auth/invites/{id}', { params: { path: { id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: inviteKeys.list(tenantId) }),
  });
}

export type InviteSummary = Body<'/api/auth/invites/summary/{token}', 'get'>;

/** What an invite link offers (team, inviter, role), readable before signing in; 404 when no longer valid. */
export function useInviteSummary(token: string | undefined) {
  return useQuery({
    queryKey: ['invite-summary', token ?? ''],
    enabled: !!token,
    retry: false,
    queryFn: () => data(api.GET('/api/auth/invites/summary/{token}', { params: { path: { token: token ?? '' } } })),
  });
}
