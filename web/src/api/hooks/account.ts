/** The signed-in person (GET /auth/me): the session's one query, and the changes that refresh it. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, data, type Body } from '../client';

type MeBody = Body<'/api/auth/me', 'get'>;
/** /auth/me as a person sees it (a key has no user and no preferences; the dashboard signs people in). */
export type Me = MeBody & { user: NonNullable<MeBody['user']>; preferences: NonNullable<MeBody['preferences']> };
export type User = Me['user'];
export type TeamRef = Me['tenants'][number];
export type Role = TeamRef['role'];
export type Preferences = Me['preferences'];

/** Sign-in: the person, or the second factor still due. */
export type LoginReply = Body<'/api/auth/login', 'post'>;
export type MfaChallenge = Extract<LoginReply, { mfaRequired: boolean }>;

export const accountKeys = { me: ['me'] as const };

export function useMe() {
  return useQuery({
    queryKey: accountKeys.me,
    queryFn: async () => {
      try {
        return (await data(api.GET('/api/auth/me'))) as Me;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return null;
        throw err;
      }
    },
    staleTime: 60_000,
    retry: false,
  });
}

/** Refetches the person (after signing in or registering, which the session cookie carries, not a mutation here). */
export function useRefreshMe() {
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: accountKeys.me });
}

/** Accepts an invite link; `onJoined` runs once the person (and their teams) has been refetched. */
export function useAcceptInvite(token: string, onJoined: (joined: { tenantId: string; role: string }) => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => data<{ tenantId: string; role: string }>(api.POST('/api/auth/invites/accept', { body: { token } })),
    onSuccess: async (r) => {
      await qc.invalidateQueries({ queryKey: accountKeys.me });
      onJoined(r);
    },
  });
}

/** Creates a team owned by the person; `onCreated` runs once the person (and their teams) has been refetched. */
export function useCreateTeam(onCreated: (team: { id: string; name: string; zoneError: unknown }) => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ name, description, timeZone }: { name: string; description: string; timeZone?: string }) => {
      const team = await data<{ id: string; name: string }>(
        api.POST('/api/auth/create-tenant', {
          body: { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
        }),
      );
      // The team's zone is a team setting: set right after creation (the creator owns the team now).
      // Its refusal must not fail the creation: the team exists, and a retry would make a second one.
      let zoneError: unknown = null;
      if (timeZone && timeZone !== 'UTC')
        await data(api.PUT('/api/settings/tenant', { params: { query: { tenantId: team.id } }, body: { time_zone: timeZone } })).catch(
          (err: unknown) => void (zoneError = err),
        );
      return { ...team, zoneError };
    },
    onSuccess: async (team) => {
      await qc.invalidateQueries({ queryKey: accountKeys.me });
      onCreated(team);
    },
  });
}

/** Saves the person's name at once and asks for a new email (which waits for its link); settles once the person has been refetched. */
export function useSaveProfile() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (profile: { name: string; email: string }) => data(api.PUT('/api/auth/me/profile', { body: profile })),
    onSuccess: () => qc.invalidateQueries({ queryKey: accountKeys.me }),
  });
}

/** Withdraws the address change waiting for its confirmation link; settles once the person has been refetched. */
export function useCancelEmailChange() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => data(api.DELETE('/api/auth/me/email-change')),
    onSuccess: () => qc.invalidateQueries({ queryKey: accountKeys.me }),
  });
}

/** Saves account-level preferences; settles once the person (whose preferences they are) has been refetched. */
export function useSavePreferences() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (values: Record<string, unknown>) =>
      data(api.PATCH('/api/settings/effective', { params: { query: { level: 'account' } }, body: { values } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: accountKeys.me }),
  });
}

export function useChangePassword(onChanged: () => void) {
  return useMutation({
    mutationFn: (body: { currentPassword: string; newPassword: string }) => data(api.PUT('/api/auth/me/password', { body })),
    onSuccess: onChanged,
  });
}
