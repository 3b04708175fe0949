import type { FastifyRequest } from 'fastify';
import { type Actor, type ApiKeyAuth, type Auth, type Role, actorOf, anonymousAuth, isPerson, roleAtLeast, roleIn } from './actor.ts';
import { canManageDevice } from './device-rule.ts';
import { badRequest, forbidden, notFound, unauthenticated } from './errors.ts';
import {
  type Access,
  type DeviceFacts,
  type Permission,
  RESOURCES,
  type Resource,
  type TeamResolver,
  type TeamSource,
} from './permissions.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

export interface GuardDeps {
  /** Looks up the team of a resource id, by resource name. */
  teamResolvers: Record<Resource, TeamResolver>;
  teamExists: (tenantId: string) => Promise<boolean>;
  /** Facts for the device rule; null when no such satellite exists. */
  deviceFacts: (satelliteId: string) => Promise<DeviceFacts | null>;
  /** Refuses a signed-in caller before any other rule (a hub admin who must enrol a second factor first). */
  callerGate?: (auth: Auth, perm: Permission) => Promise<void>;
}

export const TEAM_OUT_OF_REACH = 'Team or item not found';

const isSatelliteKey = (auth: Auth): auth is ApiKeyAuth & { satelliteId: string } => auth.kind === 'api_key' && auth.satelliteId !== null;

function pick(req: FastifyRequest, where: 'query' | 'body' | 'params', key: string): unknown {
  const source = (where === 'query' ? req.query : where === 'body' ? req.body : req.params) as Record<string, unknown> | undefined | null;
  return source && typeof source === 'object' ? source[key] : undefined;
}

/** The access and team source that apply to this request (a matching variant, else the route's own). */
export function effectiveRule(perm: Permission, query: unknown): { access: Access; team?: TeamSource } {
  const q = (query ?? {}) as Record<string, unknown>;
  for (const v of perm.variants ?? []) {
    const value = q[v.when.query];
    if (value === undefined || value === '') continue;
    if (v.when.equals !== undefined && value !== v.when.equals) continue;
    return { access: v.access, team: v.team };
  }
  return { access: perm.access, team: perm.team };
}

/**
 * The one guard (spec §5 "Authorization guard"): 401 nobody signed in, 403 role or kind of
 * caller not allowed, 404 team or item out of reach, 400 a team must be named and is not.
 * The role that counts is the caller's role in the team the action concerns.
 */
export function createGuard(deps: GuardDeps) {
  const missing = RESOURCES.filter((r) => typeof deps.teamResolvers[r] !== 'function');
  if (missing.length > 0) throw new Error(`The guard has no team resolver for: ${missing.join(', ')}`);

  async function findTeam(
    req: FastifyRequest,
    src: TeamSource | undefined,
    auth: Auth,
  ): Promise<{ team: string | null; resourceId?: string } | 'none'> {
    if (!src) return 'none';
    if ('resource' in src) {
      const id = src.param !== undefined ? pick(req, 'params', src.param) : pick(req, 'query', src.query);
      if (!isUuid(id)) throw notFound(TEAM_OUT_OF_REACH);
      const tenantId = await deps.teamResolvers[src.resource](id);
      if (!tenantId) throw notFound(TEAM_OUT_OF_REACH);
      return { team: tenantId, resourceId: id };
    }
    const raw = pick(req, src.in, src.key);
    if (raw === undefined || raw === null || raw === '') {
      // A team key implies its team; people must name one.
      if (auth.kind === 'api_key' && auth.tenantId) return { team: auth.tenantId };
      if (src.optional) return { team: null };
      throw badRequest(`Name the team: ${src.key} is required`, 'TENANT_REQUIRED');
    }
    if (!isUuid(raw)) throw notFound(TEAM_OUT_OF_REACH);
    return { team: raw };
  }

  async function deviceRule(auth: Auth, satelliteId: string, role: Role, perm: Permission): Promise<void> {
    const facts = await deps.deviceFacts(satelliteId);
    if (!facts) throw notFound(TEAM_OUT_OF_REACH);
    if (canManageDevice(auth, role, { id: satelliteId, ...facts }, { satelliteKeyRoute: perm.satelliteKey === true })) return;
    throw forbidden(
      isSatelliteKey(auth)
        ? 'A satellite key may only manage its own satellite in a few ways'
        : 'Only team admins and the person who registered this device may manage it',
    );
  }

  // One set per declaration, made on its first request rather than on every one.
  const auditSets = new WeakMap<Permission, ReadonlySet<string>>();
  const declared = (perm: Permission) => {
    let set = auditSets.get(perm);
    if (!set) auditSets.set(perm, (set = new Set(perm.audit)));
    return set;
  };

  return async function guard(req: FastifyRequest, perm: Permission, auth: Auth | null): Promise<Actor> {
    const base = (a: Auth, teamId: string | null, teamRole: Actor['teamRole']): Actor =>
      actorOf(a, { ip: req.ip, teamId, teamRole, declaredAudit: declared(perm) });

    const { access, team: source } = effectiveRule(perm, req.query);
    if (access.kind === 'public') {
      return base(auth ?? anonymousAuth(), null, null);
    }
    if (!auth) throw unauthenticated();
    if (deps.callerGate) await deps.callerGate(auth, perm);
    // Spec §5: a satellite key outside its declared routes is refused.
    if (isSatelliteKey(auth) && !perm.satelliteKey) {
      throw forbidden('A satellite key may not do this');
    }
    if (access.kind === 'session' && !isPerson(auth)) {
      throw forbidden('This action needs a signed-in person, not a key');
    }
    if (access.kind === 'hubAdmin' && !auth.isPlatformAdmin) {
      throw forbidden('Only hub admins may do this');
    }
    if (access.kind === 'role' && access.personOnly && !isPerson(auth) && auth.kind !== 'internal') {
      throw forbidden('This action needs a signed-in person, not a key');
    }

    const found = await findTeam(req, source, auth);
    if (found === 'none') return base(auth, null, null);
    const team = found.team;

    if (team === null) {
      // Optional team left out: the action spans the caller's own teams.
      if (access.kind === 'role' && !auth.isPlatformAdmin) {
        const best = auth.kind === 'api_key' ? [auth.role] : auth.memberships.map((m) => m.role);
        if (!best.some((r) => roleAtLeast(r, access.min))) throw forbidden('Your role does not allow this');
      }
      return base(auth, null, null);
    }

    let role = roleIn(auth, team);
    if (auth.isPlatformAdmin) {
      // Hub admins act with full rights in every team that exists.
      if (!role && !(await deps.teamExists(team))) throw notFound(TEAM_OUT_OF_REACH);
      role = 'owner';
    }
    if (!role) {
      if (source && 'outsiders' in source && source.outsiders) {
        if (!(await deps.teamExists(team))) throw notFound(TEAM_OUT_OF_REACH);
        return base(auth, team, null);
      }
      throw notFound(TEAM_OUT_OF_REACH);
    }
    if (access.kind === 'role' && !roleAtLeast(role, access.min)) {
      throw forbidden(`This needs the ${access.min} role or higher in the team`);
    }
    if (access.kind === 'device') await deviceRule(auth, found.resourceId!, role, perm);
    return base(auth, team, role);
  };
}
