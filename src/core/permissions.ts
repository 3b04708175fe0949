import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { Actor, NoTeamActor, Role, TeamActor } from './actor.ts';
import type { Action } from './actions.ts';
import type { AuditAction } from './audit-actions.ts';

/**
 * Who may call a route (spec §4 "Access" column).
 * - public: anyone; authenticated: any credential; session: a signed-in person, not a key;
 * - role: that role or higher in the team the action concerns (personOnly refuses API keys);
 * - hubAdmin: hub admins (and the internal key);
 * - device: the device rule (spec §5): hub admin, admin+ of the device's team, or the member
 *   who registered it while the team's device_policy is members; 404 when the device is not
 *   visible, 403 when visible but not manageable.
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'session' }
  | { kind: 'hubAdmin' }
  | { kind: 'role'; min: Role; personOnly?: boolean }
  | { kind: 'device' };

export const access = {
  public: { kind: 'public' } as Access,
  authenticated: { kind: 'authenticated' } as Access,
  session: { kind: 'session' } as Access,
  hubAdmin: { kind: 'hubAdmin' } as Access,
  role: (min: Role, opts: { personOnly?: boolean } = {}): Access => ({ kind: 'role', min, ...opts }),
  device: { kind: 'device' } as Access,
};

/** Everything whose id a route may take its team from; each has a TeamResolver. */
export const RESOURCES = [
  'membership',
  'invite',
  'apiKey',
  'chunk',
  'detection',
  'satellite',
  'alert',
  'alertRule',
  'alertChannel',
  'exportJob',
  'scheduledExport',
  'fieldNote',
  'publishedAudio',
] as const;
export type Resource = (typeof RESOURCES)[number];

/**
 * How the guard finds the team an action concerns.
 * - a team id named in the query, body or path. `outsiders`: the action is about a team the
 *   caller need not belong to (joining it); the service decides what outsiders may see.
 * - a resource id in the path (param) or query whose team a registered resolver looks up.
 */
export type TeamSource = NamedTeam | ResourceTeam;
export interface NamedTeam {
  in: 'query' | 'body' | 'params';
  key: string;
  optional?: boolean;
  outsiders?: boolean;
}
export type ResourceTeam = { resource: Resource; param: string; query?: never } | { resource: Resource; query: string; param?: never };

/** Whether a team source always yields a team (or the guard refuses the request); a source typed only as TeamSource may not. */
type Requires<T> = T extends ResourceTeam ? true : T extends NamedTeam & { optional?: false } ? true : false;

/**
 * The actor a route's handler sees, by what it declares: a team every scope requires gives a
 * TeamActor, no team in any scope a NoTeamActor, anything else the plain Actor.
 */
export type ActorFor<T, V> = [T | VariantTeams<V>] extends [undefined]
  ? NoTeamActor
  : false extends Requires<T> | Requires<VariantTeams<V>>
    ? Actor
    : TeamActor;
type VariantTeams<V> = V extends readonly (infer E)[] ? (E extends { team?: infer U } ? U : undefined) : never;

/** One route, several scopes chosen by the query (e.g. ?satelliteId= or ?level=hub). */
export interface AccessVariant {
  when: { query: string; equals?: string };
  access: Access;
  team?: TeamSource;
}

export interface RouteSchema {
  body?: TSchema;
  querystring?: TSchema;
  params?: TSchema;
  response?: Record<number, TSchema>;
}

type StaticOr<T, D> = T extends TSchema ? Static<T> : D;

export interface RouteContext<S extends RouteSchema, A extends Actor = Actor> {
  body: StaticOr<S['body'], undefined>;
  query: StaticOr<S['querystring'], Record<string, never>>;
  params: StaticOr<S['params'], Record<string, never>>;
  actor: A;
  req: FastifyRequest;
  reply: FastifyReply;
}

export interface RouteDef<S extends RouteSchema = RouteSchema, A extends Actor = Actor> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below /api. */
  url: string;
  /** Dotted action name from ACTIONS, e.g. `teams.invites.create`. */
  action: Action;
  access: Access;
  team?: TeamSource;
  /** Scope variants, tried in order; the first whose query matches replaces access and team. */
  variants?: AccessVariant[];
  /** A satellite's own key may call this route (spec §5: rename, rotate its key, push its config). */
  satelliteKey?: boolean;
  /** Every audit action the route may write (spec 0.72). */
  audit: readonly AuditAction[];
  summary: string;
  tags: string[];
  schema: S;
  bodyLimit?: number;
  handler: (ctx: RouteContext<S, A>) => Promise<unknown>;
}

/** The registry entry: a route's declaration without its handler. */
export type Permission = Omit<RouteDef, 'handler' | 'schema'>;

/** A route whose handler's actor is typed by its team declaration (see ActorFor). */
export function defineRoute<
  S extends RouteSchema,
  const T extends TeamSource | undefined = undefined,
  const V extends readonly AccessVariant[] | undefined = undefined,
>(def: Omit<RouteDef<S, ActorFor<T, V>>, 'team' | 'variants'> & { team?: T; variants?: V }): RouteDef<RouteSchema> {
  return def as unknown as RouteDef<RouteSchema>;
}

/** Resolves a resource id to its team id, or null when no such resource exists. */
export type TeamResolver = (id: string) => Promise<string | null>;

/** What the device rule needs to know about a satellite. */
export interface DeviceFacts {
  tenantId: string;
  registeredBy: string | null;
  devicePolicy: 'members' | 'admins';
}
