import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import type { MembershipRef } from '../../core/actor.ts';
import type { ApiKeyPrincipal, SessionPrincipal } from './resolver.ts';

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

const API_KEY_SQL = `SELECT k.id, k.tenant_id AS "tenantId", k.satellite_id AS "satelliteId", k.role, k.last_used_at AS "lastUsedAt"
  FROM api_keys k LEFT JOIN users u ON u.id = k.created_by
  WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2)
    AND (k.created_by IS NULL OR u.status = 'active')`;
const ApiKeyRow = shape({
  id: col.text(),
  tenantId: col.text(),
  satelliteId: col.nullable(col.text()),
  // api_keys.role: a key is never an owner.
  role: col.oneOf(['viewer', 'member', 'admin'] as const),
  lastUsedAt: col.nullable(col.date()),
});

function toPrincipal(row: SessionRow | null): SessionPrincipal | null {
  if (!row) return null;
  const { profile, ...rest } = row;
  return { ...rest, ...profile, mfaEnrolledAt: profile.mfaEnrolledAt ? new Date(profile.mfaEnrolledAt) : null };
}

export function createCredentialsRepo(db: Db) {
  return {
    findSessionByTokenHash: (tokenHash: string, now: Date) =>
      db.maybeOne(SessionRow, SESSION_SQL + 's.token_hash = $1', [tokenHash, now]).then(toPrincipal),

    findSessionById: (sessionId: string, userId: string, now: Date) =>
      db.maybeOne(SessionRow, SESSION_SQL + 's.id = $1 AND u.id = $3', [sessionId, now, userId]).then(toPrincipal),

    /** Keys stop working at once when their creator is blocked or deleted. */
    findApiKeyByHash: (keyHash: string, now: Date): Promise<ApiKeyPrincipal | null> => db.maybeOne(ApiKeyRow, API_KEY_SQL, [keyHash, now]),

    touchApiKey: (id: string, now: Date) => db.run('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, now]),
  };
}

export type CredentialsRepo = ReturnType<typeof createCredentialsRepo>;
