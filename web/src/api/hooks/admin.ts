/** Hub administration: people and the audit log. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type AdminUser = Body<'/api/admin/users', 'get'>['users'][number];
export type AuditEntry = Body<'/api/admin/audit-log', 'get'>['entries'][number];

export const adminKeys = {
  users: ['admin-users'] as const,
  usersMatching: (search: string) => ['admin-users', search] as const,
  /** One page of the hub's log, or of one team's activity. */
  audit: (tenantId: string | undefined, offset: number) => ['audit', tenantId ?? 'hub', offset] as const,
};

export function useAdminUsers(search: string) {
  return useQuery({
    queryKey: adminKeys.usersMatching(search),
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/admin/users', { params: { query: search ? { search } : {} } })),
  });
}

/** A page of the audit log: one team's activity with `tenantId`, else the hub's whole log. */
export function useAuditLog(tenantId: string | undefined, limit: number, offset: number) {
  return useQuery({
    queryKey: adminKeys.audit(tenantId, offset),
    placeholderData: keepPreviousData,
    queryFn: () =>
      tenantId
        ? data(api.GET('/api/audit-log', { params: { query: { tenantId, limit, offset } } }))
        : data(api.GET('/api/admin/audit-log', { params: { query: { limit, offset } } })),
  });
}

/** Blocks or unblocks a person; the people list refreshes. */
export function useBlockUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => data(api.POST('/api/admin/users/{id}/block', { params: { path: { id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: adminKeys.users }),
  });
}

/** Resets a person's password; the answer carries a temporary one when no mail could. */
export function useResetUserPassword(onIssued: (u: AdminUser, password: string) => void) {
  return useMutation({
    mutationFn: (u: AdminUser) => data(api.POST('/api/admin/users/{id}/reset-password', { params: { path: { id: u.id } }, body: {} })),
    onSuccess: (r, u) => r.temporaryPassword && onIssued(u, r.temporaryPassword),
  });
}

/** Wipes a person's second factors (lost device). */
export function useResetUserMfa() {
  return useMutation({ mutationFn: (id: string) => data(api.POST('/api/auth/mfa/admin/users/{id}/reset', { params: { path: { id } } })) });
}
