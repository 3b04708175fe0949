export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 1, member: 2, admin: 3, owner: 4 };

export const roleAtLeast = (role: Role | null | undefined, min: Role): boolean => role != null && RANK[role] >= RANK[min];

export interface MembershipRef {
  membershipId: string;
  tenantId: string;
  role: Role;
  /** Team name and slug, read with the membership so /auth/me needs no second query. */
  name?: string;
  slug?: string;
}

/** The signed-in person as read with their credential. */
export interface PersonSnapshot {
  name: string;
  status: 'active' | 'blocked';
  createdAt: Date;
  lastLoginAt: Date | null;
  /** Own account-level preference values (not merged with hub defaults). */
  preferences: Record<string, unknown>;
  /** When TOTP enrollment was confirmed; null while the person has no second factor. */
  mfaEnrolledAt: Date | null;
}

export type CredentialKind = 'anonymous' | 'session' | 'jwt' | 'api_key' | 'internal';

/** What the resolver learned about the caller: spec §5 request.auth. */
export interface Auth {
  kind: CredentialKind;
  userId: string | null;
  apiKeyId: string | null;
  satelliteId: string | null;
  /** The key's own team for API keys; null for people (their teams are in memberships). */
  tenantId: string | null;
  /** The key's role for API keys; null for people. */
  role: Role | null;
  /** Read from the store on every request, never from a token. */
  isPlatformAdmin: boolean;
  sessionId: string | null;
  email: string | null;
  memberships: MembershipRef[];
  person: PersonSnapshot | null;
}

/**
 * The one identity that flows from the guard into services: who acts, through which
 * credential, from where, and in which team with which role for this action.
 */
export interface Actor extends Auth {
  ip: string;
  /** The team the action concerns, when the route names one. */
  teamId: string | null;
  /** The caller's role in that team; hub admins and the internal key count as owner. */
  teamRole: Role | null;
  /** Audit actions the current route declared; the audit writer refuses others. */
  declaredAudit: ReadonlySet<string> | null;
}

export const isPerson = (a: Auth): boolean => a.kind === 'session' || a.kind === 'jwt';

export function roleIn(auth: Auth, tenantId: string): Role | null {
  if (auth.kind === 'api_key') return auth.tenantId === tenantId ? auth.role : null;
  return auth.memberships.find((m) => m.tenantId === tenantId)?.role ?? null;
}

/** The actor for work nobody asked for over HTTP (start-up, CLI, broker). */
export function systemActor(declaredAudit: string[] | null = null): Actor {
  return {
    kind: 'internal',
    userId: null,
    apiKeyId: null,
    satelliteId: null,
    tenantId: null,
    role: null,
    isPlatformAdmin: true,
    sessionId: null,
    email: null,
    memberships: [],
    person: null,
    ip: '',
    teamId: null,
    teamRole: 'owner',
    declaredAudit: declaredAudit ? new Set(declaredAudit) : null,
  };
}
