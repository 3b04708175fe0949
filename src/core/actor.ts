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

/** A caller that is not a person: no user, no session, no teams of their own. */
interface NoPerson {
  userId: null;
  sessionId: null;
  email: null;
  memberships: readonly [];
  person: null;
}

/** A caller that is not an API key: no key, no satellite, no team or role of the key's. */
interface NoKey {
  apiKeyId: null;
  satelliteId: null;
  /** The key's own team; only API keys have one. */
  tenantId: null;
  /** The key's role; only API keys have one (people have a role per membership). */
  role: null;
}

export interface AnonymousAuth extends NoPerson, NoKey {
  kind: 'anonymous';
  isPlatformAdmin: false;
}

/** A signed-in person, by session cookie or by bearer JWT. */
export interface PersonAuth extends NoKey {
  kind: 'session' | 'jwt';
  userId: string;
  sessionId: string;
  email: string;
  memberships: MembershipRef[];
  person: PersonSnapshot;
  /** Read from the store on every request, never from a token. */
  isPlatformAdmin: boolean;
}

/** A team API key; a satellite's own key also names its satellite. */
export interface ApiKeyAuth extends NoPerson {
  kind: 'api_key';
  apiKeyId: string;
  satelliteId: string | null;
  tenantId: string;
  role: Role;
  isPlatformAdmin: false;
}

/** The hub's internal key: full rights everywhere, nobody in particular. */
export interface InternalAuth extends NoPerson, NoKey {
  kind: 'internal';
  isPlatformAdmin: true;
}

/**
 * The hub acting on a satellite's own broker messages: no key and no person, but that
 * satellite's team with the role its key carries, so it cannot do what only admins may.
 */
export interface DeviceAuth extends NoPerson {
  kind: 'internal';
  isPlatformAdmin: false;
  apiKeyId: null;
  satelliteId: string;
  tenantId: string;
  role: Role;
}

/** What the resolver learned about the caller (spec §5 request.auth), by kind of credential. */
export type Auth = AnonymousAuth | PersonAuth | ApiKeyAuth | InternalAuth | DeviceAuth;

/** What the guard adds to the caller for one request. */
export interface ActorContext {
  ip: string;
  /** The team the action concerns, when the route names one. */
  teamId: string | null;
  /** The caller's role in that team; hub admins and the internal key count as owner. */
  teamRole: Role | null;
  /** Audit actions the current route declared; the audit writer refuses others. */
  declaredAudit: ReadonlySet<string> | null;
}

/**
 * The one identity that flows from the guard into services: who acts, through which
 * credential, from where, and in which team with which role for this action.
 */
export type Actor = Auth & ActorContext;

/**
 * The actor of a route that declares a required team: the guard found the team (or refused
 * the request), so teamId is always there. teamRole is null only for outsiders (joining).
 */
/**
 * A request's actor: its credential with the request's context. The fields are copied by name
 * because V8 builds `{ ...auth, ip, … }` as a slow dictionary object, measured at ~15 µs a
 * request, a tenth of a small answer (issue 20); `satisfies` keeps the list complete.
 */
export function actorOf(a: Auth, ctx: ActorContext): Actor {
  const actor = {
    kind: a.kind,
    userId: a.userId,
    apiKeyId: a.apiKeyId,
    satelliteId: a.satelliteId,
    tenantId: a.tenantId,
    role: a.role,
    isPlatformAdmin: a.isPlatformAdmin,
    sessionId: a.sessionId,
    email: a.email,
    memberships: a.memberships,
    person: a.person,
    ip: ctx.ip,
    teamId: ctx.teamId,
    teamRole: ctx.teamRole,
    declaredAudit: ctx.declaredAudit,
  } satisfies Record<keyof Auth | keyof ActorContext, unknown>;
  return actor as Actor;
}

export type TeamActor = Actor & { teamId: string };

/** The actor of a route that names no team. */
export type NoTeamActor = Actor & { teamId: null };

export const isPerson = <A extends Auth>(a: A): a is Extract<A, PersonAuth> => a.kind === 'session' || a.kind === 'jwt';

export function roleIn(auth: Auth, tenantId: string): Role | null {
  if (auth.kind === 'api_key') return auth.tenantId === tenantId ? auth.role : null;
  return auth.memberships.find((m) => m.tenantId === tenantId)?.role ?? null;
}

/**
 * The teams a caller may read when a list names none (no ?tenantId=): the route's team, else
 * the key's or device's own team, else every team for hub admins and the internal key (null),
 * else the person's memberships. The one rule for every cross-team list (detections,
 * sessions, satellites, statistics).
 */
export function readableTeams(actor: Actor): string[] | null {
  if (actor.teamId) return [actor.teamId];
  if (actor.tenantId) return [actor.tenantId];
  if (actor.isPlatformAdmin) return null;
  return actor.memberships.map((m) => m.tenantId);
}

/** The actor for work nobody asked for over HTTP (start-up, CLI, broker). */
export function systemActor(declaredAudit: string[] | null = null): InternalAuth & ActorContext {
  return {
    ...internalAuth(),
    ip: '',
    teamId: null,
    teamRole: 'owner',
    declaredAudit: declaredAudit ? new Set(declaredAudit) : null,
  };
}

export function internalAuth(): InternalAuth {
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
  };
}

export function anonymousAuth(): AnonymousAuth {
  return {
    kind: 'anonymous',
    userId: null,
    apiKeyId: null,
    satelliteId: null,
    tenantId: null,
    role: null,
    isPlatformAdmin: false,
    sessionId: null,
    email: null,
    memberships: [],
    person: null,
  };
}
