import { type Auth, type MembershipRef, type Role, internalAuth } from '../../core/actor.ts';
import type { Clock } from '../../core/clock.ts';
import type { JwtService } from '../../core/jwt.ts';
import type { AuthResolver } from '../../core/http.ts';
import { safeEqual, sha256Hex } from '../../core/crypto.ts';
import { SESSION_COOKIE } from '../../core/cookies.ts';

export interface SessionPrincipal {
  sessionId: string;
  userId: string;
  email: string;
  name: string;
  isAdmin: boolean;
  createdAt: Date;
  lastLoginAt: Date | null;
  memberships: MembershipRef[];
  preferences: Record<string, unknown>;
  mfaEnrolledAt: Date | null;
}

export interface ApiKeyPrincipal {
  id: string;
  tenantId: string;
  satelliteId: string | null;
  role: Role;
  lastUsedAt: Date | null;
}

/** Where credentials are looked up (the auth module's service fills it). */
export interface CredentialStore {
  findSessionByTokenHash(tokenHash: string, now: Date): Promise<SessionPrincipal | null>;
  findSessionById(sessionId: string, userId: string, now: Date): Promise<SessionPrincipal | null>;
  findApiKeyByHash(keyHash: string, now: Date): Promise<ApiKeyPrincipal | null>;
  touchApiKey(id: string, now: Date): Promise<unknown>;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const API_KEY_SHAPE = /^[0-9a-f]{32,128}$/;
const TOUCH_EVERY_MS = 60_000;

function fromSession(kind: 'session' | 'jwt', p: SessionPrincipal): Auth {
  return {
    kind,
    userId: p.userId,
    apiKeyId: null,
    satelliteId: null,
    tenantId: null,
    role: null,
    isPlatformAdmin: p.isAdmin,
    sessionId: p.sessionId,
    email: p.email,
    memberships: p.memberships,
    person: {
      name: p.name,
      status: 'active',
      createdAt: p.createdAt,
      lastLoginAt: p.lastLoginAt,
      preferences: p.preferences,
      mfaEnrolledAt: p.mfaEnrolledAt,
    },
  };
}

/**
 * Spec §5: internal key, then session cookie, then bearer JWT, then API key; the first
 * credential that matches decides. A stale cookie is skipped; an invalid bearer leaves the
 * caller anonymous (protected routes answer 401).
 */
export function createAuthResolver(deps: {
  internalKey: string | null;
  jwt: JwtService;
  credentials: CredentialStore;
  clock: Clock;
}): AuthResolver {
  const { internalKey, jwt, credentials, clock } = deps;
  return {
    async resolve(req) {
      const header = req.headers.authorization;
      const bearer = header && header.startsWith('Bearer ') ? header.slice(7).trim() : null;

      if (bearer && internalKey && safeEqual(bearer, internalKey)) {
        return internalAuth();
      }

      const now = clock.now();
      const cookie = req.cookies?.[SESSION_COOKIE];
      if (cookie) {
        const p = await credentials.findSessionByTokenHash(sha256Hex(cookie), now);
        if (p) return fromSession('session', p);
      }

      if (!bearer) return null;
      if (JWT_SHAPE.test(bearer)) {
        const claims = jwt.verify(bearer);
        if (!claims) return null;
        const p = await credentials.findSessionById(claims.sid, claims.sub, now);
        return p ? fromSession('jwt', p) : null;
      }
      if (API_KEY_SHAPE.test(bearer)) {
        const k = await credentials.findApiKeyByHash(sha256Hex(bearer), now);
        if (!k) return null;
        if (!k.lastUsedAt || now.getTime() - new Date(k.lastUsedAt).getTime() > TOUCH_EVERY_MS) {
          // Recorded at most once a minute, off the request path: a usage hint, not a ledger.
          credentials.touchApiKey(k.id, now).catch(() => {});
        }
        return {
          kind: 'api_key',
          userId: null,
          apiKeyId: k.id,
          satelliteId: k.satelliteId,
          tenantId: k.tenantId,
          role: k.role,
          isPlatformAdmin: false,
          sessionId: null,
          email: null,
          memberships: [],
          person: null,
        };
      }
      return null;
    },
  };
}
