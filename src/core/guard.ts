import type { FastifyRequest } from 'fastify';
import { type Actor, type Auth, isPerson, roleAtLeast, roleIn } from './actor.ts';
import { badRequest, forbidden, notFound, unauthenticated } from './errors.ts';
import type { Permission, TeamResolver } from './permissions.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

export interface GuardDeps {
  /** Looks up the team of a resource id, by resource name. */
  teamResolvers: Record<string, TeamResolver>;
  teamExists: (tenantId: string) => Promise<boolean>;
}

export const TEAM_OUT_OF_REACH = 'Team or item not found';

function pick(req: FastifyRequest, where: 'query' | 'body' | 'params', key: string): unknown {
  const source = (where === 'query' ? req.query : where === 'body' ? req.body : req.params) as
    | Record<string, unknown>
    | undefined
    | null;
  return source && typeof source === 'object' ? source[key] : undefined;
}

/**
 * The one guard (spec §5 "Authorization guard"): 401 nobody signed in, 403 role or kind of
 * caller not allowed, 404 team or item out of reach, 400 a team must be named and is not.
 * The role that counts is the caller's role in the team the action concerns.
 */
export function createGuard(deps: GuardDeps) {
  async function findTeam(req: FastifyRequest, perm: Permission, auth: Auth): Promise<string | null | 'none'> {
    const src = perm.team;
    if (!src) return 'none';
    if ('resource' in src) {
      const id = pick(req, 'params', src.param);
      if (!isUuid(id)) throw notFound(TEAM_OUT_OF_REACH);
      const tenantId = await deps.teamResolvers[src.resource](id);
      if (!tenantId) throw notFound(TEAM_OUT_OF_REACH);
      return tenantId;
    }
    const raw = pick(req, src.in, src.key);
    if (raw === undefined || raw === null || raw === '') {
      // A team key implies its team; people must name one.
      if (auth.kind === 'api_key' && auth.tenantId) return auth.tenantId;
      if (src.optional) return null;
      throw badRequest(`Name the team: ${src.key} is required`, 'TENANT_REQUIRED');
    }
    if (!isUuid(raw)) throw notFound(TEAM_OUT_OF_REACH);
    return raw;
  }

  return async function guard(req: FastifyRequest, perm: Permission, auth: Auth | null): Promise<Actor> {
    const base = (a: Auth, teamId: string | null, teamRole: Actor['teamRole']): Actor => ({
      ...a,
      ip: req.ip,
      teamId,
      teamRole,
      declaredAudit: new Set(perm.audit),
    });

    if (perm.access.kind === 'public') {
      return base(auth ?? anonymous(), null, null);
    }
    if (!auth) throw unauthenticated();
    const access = perm.access;
    if (access.kind === 'session' && !isPerson(auth)) {
      throw forbidden('This action needs a signed-in person, not a key');
    }
    if (access.kind === 'hubAdmin' && !auth.isPlatformAdmin) {
      throw forbidden('Only hub admins may do this');
    }
    if (access.kind === 'role' && access.personOnly && !isPerson(auth) && auth.kind !== 'internal') {
      throw forbidden('This action needs a signed-in person, not a key');
    }

    const team = await findTeam(req, perm, auth);
    if (team === 'none') return base(auth, null, null);

    if (team === null) {
      // Optional team left out: the action spans the caller's own teams.
      if (access.kind === 'role' && !auth.isPlatformAdmin) {
        const best = auth.kind === 'api_key' ? [auth.role] : auth.memberships.map((m) => m.role);
        if (!best.some((r) => roleAtLeast(r, access.min))) throw forbidden('Your role does not allow this');
      }
      return base(auth, null, null);
    }

    let role = roleIn(auth, team);
    if (!role && auth.isPlatformAdmin) {
      if (!(await deps.teamExists(team))) throw notFound(TEAM_OUT_OF_REACH);
      role = 'owner';
    } else if (role && auth.isPlatformAdmin) {
      // Hub admins act with full rights in every team, their own included.
      role = 'owner';
    }
    if (!role) throw notFound(TEAM_OUT_OF_REACH);
    if (access.kind === 'role' && !roleAtLeast(role, access.min)) {
      throw forbidden(`This needs the ${access.min} role or higher in the team`);
    }
    return base(auth, team, role);
  };
}

export function anonymous(): Auth {
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
