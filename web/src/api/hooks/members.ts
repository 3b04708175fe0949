/** A team's members: the list, role changes, removal and ownership transfer. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';
import { accountKeys, type Role } from './account';

export type Member = Body<'/api/auth/members', 'get'>['members'][number];

export const memberKeys = { list: (tenantId: string) => ['members', tenantId] as const };

export function useMembers(tenantId: string, enabled: boolean) {
  return useQuery({
    queryKey: memberKeys.list(tenantId),
    enabled: enabled && !!tenantId,
    queryFn: () => data(api.GET('/api/auth/members', { params: { query: { tenantId } } })),
  });
}

/** Changing one member's role, removing them, handing them the ownership; `onDone` runs after a removal or transfer. */
export function useMemberMutations(tenantId: string, memberId: string, onDone: () => void) {
  const qc = useQueryClient();
  const path = { params: { path: { id: memberId } } };
  return {
    changeRole: useMutation({
      mutationFn: (role: Role) => data(api.PUT('/api/admin/members/{id}/role', { ...path, body: { role: role as 'viewer' } })),
      onSettled: () => qc.invalidateQueries({ queryKey: memberKeys.list(tenantId) }),
    }),
    remove: useMutation({
      mutationFn: () => data(api.DELETE('/api/admin/members/{id}', path)),
      onSuccess: () => {
        onDone();
        void qc.invalidateQueries({ queryKey: memberKeys.list(tenantId) });
      },
    }),
    transferOwnership: useMutation({
      mutationFn: () => data(api.POST('/api/admin/members/{id}/transfer-ownership', path)),
      onSuccess: () => {
        onDone();
        void qc.invalidateQueries({ queryKey: memberKeys.list(tenantId) });
        // The caller's own role changed (owner → admin): the switcher and menus follow.
        void qc.invalidateQueries({ queryKey: accountKeys.me });
      },
    }),
  };
}
