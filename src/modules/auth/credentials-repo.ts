import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import type { MembershipRef } from '../../core/actor.ts';
import type { SessionPrincipal } from './resolver.ts';

// One round trip by primary key per request: the session and its user (admin flag and status
// read fresh, never from a token), with the user's teams, own preferences and MFA state from
// the profile the database keeps current by trigger (migration 0010), so the guard and
// /auth/me need nothing more.
const SESSION_SQL = `
  SELECT s.id AS "sessionId", u.id AS "userId", u.email, u.name, u.is_admin AS "isAdmin",
    u.created_at AS "createdAt", u.last_login_at AS "lastLoginAt", u.profile
  FROM sessions s JOIN users u ON u.id = s.user_id
  WHERE s.revoked_at IS NULL AND s.expires_at > $2 AND u.status = 'active' AND `;

const SessionRow = shape({
  sessionId: col.text(),
  userId: col.text(),
  email: col.text(),
  name: col.text(),
  isAdmin: col.bool(),
  createdAt: col.date(),
  lastLoginAt: col.nullable(col.date()),
  // jsonb: the timestamp inside is text.
  profile: col.json<{ memberships: MembershipRef[]; preferences: Record<string, unknown>; mfaEnrolledAt: string | null }>(),
});
type SessionRow = RowOf<typeof SessionRow>;

function toPrincipal(row: SessionRow | null): SessionPrincipal | null {
  if (!row) return null;
  const { profile, ...rest } = row;
  return { ...rest, ...profile, mfaEnrolledAt: profile.mfaEnrolledAt ? new Date(profile.mfaEnrolledAt) : null };
}

/** The session lookups of each request; API keys are the api-keys module's (its service's `credential`). */
export function createCredentialsRepo(db: Db) {
  return {
    findSessionByTokenHash: (tokenHash: string, now: Date) =>
      db.maybeOne(SessionRow, SESSION_SQL + 's.token_hash = $1', [tokenHash, now]).then(toPrincipal),

    findSessionById: (sessionId: string, userId: string, now: Date) =>
      db.maybeOne(SessionRow, SESSION_SQL + 's.id = $1 AND u.id = $3', [sessionId, now, userId]).then(toPrincipal),
  };
}

export type CredentialsRepo = ReturnType<typeof createCredentialsRepo>;
