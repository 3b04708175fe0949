/** The signed-in person (GET /auth/me): the session's one query. */
import { useQuery } from '@tanstack/react-query';
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
