/** Joining teams: the directory, and a team's join requests and blocked people. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';
import { accountKeys } from './account';
import { memberKeys } from './members';

export type DirectoryTeam = Body<'/api/tenants/directory', 'get'>['teams'][number];
export type JoinRequest = Body<'/api/tenants/{id}/join-requests', 'get'>['requests'][number];
export type Block = Body<'/api/tenants/{id}/blocks', 'get'>['blocks'][number];

export const joiningKeys = {
  directories: ['directory'] as const,
  directory: (search: string) => ['directory', search] as const,
  requests: (tenantId: string) => ['join-requests', tenantId] as const,
  blocks: (tenantId: string) => ['blocks', tenantId] as const,
};

export function useDirectory(search: string) {
  return useQuery({
    queryKey: joiningKeys.directory(search),
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/tenants/directory', { params: { query: search ? { search } : {} } })),
  });
}

export function useJoinRequests(tenantId: string) {
  return useQuery({
    queryKey: joiningKeys.requests(tenantId),
    queryFn: () => data(api.GET('/api/tenants/{id}/join-requests', { params: { path: { id: tenantId } } })),
  });
}

export function useBlocks(tenantId: string) {
  return useQuery({
    queryKey: joiningKeys.blocks(tenantId),
    queryFn: () => data(api.GET('/api/tenants/{id}/blocks', { params: { path: { id: tenantId } } })),
  });
}

/** Approving, denying and unblocking: each refreshes the requests, the blocks and the members. */
export function useJoinRequestMutations(id: string) {
  const qc = useQueryClient();
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: joiningKeys.requests(id) });
    void qc.invalidateQueries({ queryKey: joiningKeys.blocks(id) });
    void qc.invalidateQueries({ queryKey: memberKeys.list(id) });
  };
  return {
    approve: useMutation({
      mutationFn: ({ rid, role }: { rid: string; role: 'viewer' | 'member' }) =>
        data(api.POST('/api/tenants/{id}/join-requests/{rid}/approve', { params: { path: { id, rid } }, body: { role } })),
      onSuccess: refresh,
    }),
    deny: useMutation({
      mutationFn: ({ rid, block }: { rid: string; block: boolean }) =>
        data(api.POST('/api/tenants/{id}/join-requests/{rid}/deny', { params: { path: { id, rid } }, body: { block } })),
      onSuccess: refresh,
    }),
    unblock: useMutation({
      mutationFn: (userId: string) => data(api.DELETE('/api/tenants/{id}/blocks/{userId}', { params: { path: { id, userId } } })),
      onSuccess: refresh,
    }),
  };
}

/** Joining a team from the directory (or asking to, with a message), and withdrawing the request. */
export function useDirectoryMembership(tenantId: string) {
  const qc = useQueryClient();
  return {
    join: useMutation({
      mutationFn: (message: string) =>
        data(api.POST('/api/tenants/{id}/join', { params: { path: { id: tenantId } }, body: message ? { message } : {} })),
      onSuccess: () => {
        void qc.invalidateQueries({ queryKey: joiningKeys.directories });
        void qc.invalidateQueries({ queryKey: accountKeys.me });
      },
    }),
    withdraw: useMutation({
      mutationFn: () => data(api.DELETE('/api/tenants/{id}/join', { params: { path: { id: tenantId } } })),
      onSuccess: () => qc.invalidateQueries({ queryKey: joiningKeys.directories }),
    }),
  };
}
