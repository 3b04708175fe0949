/**
 * Route declarations are checked when the app starts, not at the first request: a typo in an
 * action, a resource without a resolver or a team key the schema does not carry stops the
 * start with a message naming the route, instead of a 500 later.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { registerRoutes } from '../src/core/http.ts';
import { checkDeclarations } from '../src/core/declarations.ts';
import { createGuard } from '../src/core/guard.ts';
import type { Action } from '../src/core/actions.ts';
import { access, defineRoute, type Resource, type RouteDef, type TeamResolver } from '../src/core/permissions.ts';
import { IdParams, Uuid } from '../src/core/schemas.ts';

const none: TeamResolver = async () => null;
const guard = createGuard({
  teamResolvers: {
    membership: none,
    invite: none,
    apiKey: none,
    chunk: none,
    detection: none,
    satellite: none,
    alert: none,
    alertRule: none,
    alertChannel: none,
    exportJob: none,
    scheduledExport: none,
    fieldNote: none,
    publishedAudio: none,
  },
  teamExists: async () => false,
  deviceFacts: async () => null,
});
const resolver = { resolve: async () => null };

const listMembers = defineRoute({
  method: 'GET',
  url: '/members',
  action: 'teams.members.list',
  access: access.role('admin'),
  team: { in: 'query', key: 'tenantId' },
  audit: [],
  summary: 'Members',
  tags: ['teams'],
  schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }) },
  handler: async ({ actor }) => ({ team: actor.teamId }),
});

/** Registers the routes on a fresh app, as buildApp does at start. */
function start(routes: RouteDef[]): void {
  registerRoutes(Fastify(), routes, guard, resolver);
}

function refusedWith(routes: RouteDef[], message: RegExp): void {
  assert.throws(
    () => start(routes),
    (err: Error) => {
      assert.match(err.message, /^Bad route declarations:/);
      assert.match(err.message, message);
      return true;
    },
  );
}

describe('route declarations at start', () => {
  test('well-formed declarations start', () => {
    start([listMembers]);
  });

  test('an action that is not in ACTIONS is refused', () => {
    refusedWith(
      [{ ...listMembers, action: 'teams.members.lsit' as Action }],
      /GET \/members: its action "teams.members.lsit" is not in ACTIONS/,
    );
  });

  test('two routes with one action are refused, naming both', () => {
    refusedWith(
      [listMembers, { ...listMembers, method: 'POST' }],
      /POST \/members: its action "teams.members.list" is already declared by GET \/members/,
    );
  });

  test('a team resource that is not in RESOURCES is refused', () => {
    const route = { ...listMembers, team: { resource: 'membershp' as Resource, param: 'id' }, schema: { params: IdParams } };
    refusedWith([route], /resource "membershp", which is not in RESOURCES/);
  });

  test('a team key the route schema does not declare is refused', () => {
    refusedWith(
      [{ ...listMembers, team: { in: 'query', key: 'teamId' } }],
      /its team source reads query\.teamId, which the route's query schema does not declare/,
    );
    const byParam = { ...listMembers, team: { resource: 'membership' as const, param: 'membershipId' }, schema: { params: IdParams } };
    refusedWith([byParam], /reads params\.membershipId/);
  });

  test('a variant selector the query schema does not declare is refused', () => {
    const route = { ...listMembers, variants: [{ when: { query: 'level' }, access: access.hubAdmin }] };
    refusedWith([route], /a variant reads query\.level/);
  });

  test('a role-based route without a team source is refused', () => {
    refusedWith([{ ...listMembers, team: undefined }], /a role-based route must declare how its team is found/);
  });

  test('a public route that names a team is refused (the guard would never look it up)', () => {
    refusedWith([{ ...listMembers, access: access.public }], /GET \/members: a public route cannot name a team/);
  });

  test('routes outside the module lists (no schema) are held to unique, declared actions too', () => {
    const socket = {
      method: 'GET' as const,
      url: '/ws/events',
      action: 'teams.members.list' as const,
      access: access.public,
      audit: [],
      summary: '',
      tags: [],
    };
    assert.throws(
      () => checkDeclarations([listMembers, socket]),
      /GET \/ws\/events: its action "teams.members.list" is already declared by GET \/members/,
    );
  });
});
