/**
 * The guard on its own (spec §5 "Authorization guard"), without a hub: its injected inputs are
 * plain functions answering from a fixed world of two teams, one satellite per team policy, a
 * chunk and a membership. Each case is one rule: who is refused, with which status, and which
 * team and role the actor carries when let through. The isolation matrix covers the same rules
 * over HTTP for every declared route.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { createGuard } from '../src/core/guard.ts';
import {
  anonymousAuth,
  internalAuth,
  type ApiKeyAuth,
  type Auth,
  type MembershipRef,
  type PersonAuth,
  type Role,
} from '../src/core/actor.ts';
import {
  access,
  RESOURCES,
  type Access,
  type DeviceFacts,
  type Permission,
  type Resource,
  type TeamResolver,
  type TeamSource,
} from '../src/core/permissions.ts';
import { canManageDevice } from '../src/core/device-rule.ts';
import { AppError } from '../src/core/errors.ts';

const TEAM = '00000000-0000-4000-8000-00000000000a';
const OTHER_TEAM = '00000000-0000-4000-8000-00000000000b';
const MISSING_TEAM = '00000000-0000-4000-8000-00000000000c';
const CHUNK = '00000000-0000-4000-8000-000000000c01';
const MEMBERSHIP = '00000000-0000-4000-8000-000000000e01';
const SAT_MEMBERS = '00000000-0000-4000-8000-000000000501';
const SAT_ADMINS = '00000000-0000-4000-8000-000000000502';
const SAT_UNOWNED = '00000000-0000-4000-8000-000000000503';
const UNKNOWN = '00000000-0000-4000-8000-0000000000ff';
const REGISTRANT = '00000000-0000-4000-8000-000000000101';
const OTHER_MEMBER = '00000000-0000-4000-8000-000000000102';

const SATELLITES: Record<string, DeviceFacts> = {
  [SAT_MEMBERS]: { tenantId: TEAM, registeredBy: REGISTRANT, devicePolicy: 'members' },
  [SAT_ADMINS]: { tenantId: TEAM, registeredBy: REGISTRANT, devicePolicy: 'admins' },
  [SAT_UNOWNED]: { tenantId: TEAM, registeredBy: null, devicePolicy: 'members' },
};

const fixed =
  (teams: Record<string, string>): TeamResolver =>
  async (id) =>
    teams[id] ?? null;

function resolvers(): Record<Resource, TeamResolver> {
  return {
    membership: fixed({ [MEMBERSHIP]: TEAM }),
    invite: fixed({}),
    apiKey: fixed({}),
    chunk: fixed({ [CHUNK]: TEAM }),
    detection: fixed({}),
    satellite: async (id) => SATELLITES[id]?.tenantId ?? null,
    alert: fixed({}),
    alertRule: fixed({}),
    alertChannel: fixed({}),
    exportJob: fixed({}),
    scheduledExport: fixed({}),
    fieldNote: fixed({}),
    publishedAudio: fixed({}),
  };
}

const guard = createGuard({
  teamResolvers: resolvers(),
  teamExists: async (id) => id === TEAM || id === OTHER_TEAM,
  deviceFacts: async (id) => SATELLITES[id] ?? null,
});

function person(memberships: Array<[string, Role]>, opts: { userId?: string; hubAdmin?: boolean } = {}): PersonAuth {
  const refs: MembershipRef[] = memberships.map(([tenantId, role], i) => ({ membershipId: `m${i}`, tenantId, role }));
  return {
    kind: 'session',
    userId: opts.userId ?? OTHER_MEMBER,
    sessionId: 'session-1',
    email: 'someone@example.org',
    memberships: refs,
    person: { name: 'Someone', status: 'active', createdAt: new Date(0), lastLoginAt: null, preferences: {}, mfaEnrolledAt: null },
    isPlatformAdmin: opts.hubAdmin ?? false,
    apiKeyId: null,
    satelliteId: null,
    tenantId: null,
    role: null,
  };
}

function apiKey(role: Role, satelliteId: string | null = null, tenantId = TEAM): ApiKeyAuth {
  return {
    kind: 'api_key',
    apiKeyId: 'key-1',
    satelliteId,
    tenantId,
    role,
    isPlatformAdmin: false,
    userId: null,
    sessionId: null,
    email: null,
    memberships: [],
    person: null,
  };
}

const teamInQuery: TeamSource = { in: 'query', key: 'tenantId' };

function route(a: Access, team?: TeamSource, extra: Partial<Permission> = {}): Permission {
  return { method: 'GET', url: '/x', action: 'teams.list', access: a, team, audit: [], summary: '', tags: [], ...extra };
}

function request(parts: { query?: Record<string, unknown>; params?: Record<string, unknown>; body?: unknown } = {}): FastifyRequest {
  return { query: parts.query ?? {}, params: parts.params ?? {}, body: parts.body, ip: '192.0.2.1' } as unknown as FastifyRequest;
}

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    return { status: err.status, code: err.code };
  }
  assert.fail('expected the guard to refuse');
}

describe('guard: who is signed in', () => {
  test('a public route lets anybody through as anonymous, with no team', async () => {
    const actor = await guard(request(), route(access.public), null);
    assert.equal(actor.kind, 'anonymous');
    assert.equal(actor.teamId, null);
    assert.equal(actor.ip, '192.0.2.1');
  });

  test('a protected route answers 401 to nobody signed in', async () => {
    for (const a of [access.authenticated, access.session, access.hubAdmin, access.role('viewer')]) {
      assert.deepEqual(await refusal(guard(request({ query: { tenantId: TEAM } }), route(a, teamInQuery), null)), {
        status: 401,
        code: 'UNAUTHENTICATED',
      });
    }
  });

  test('session routes refuse keys and the internal key with 403', async () => {
    for (const auth of [apiKey('admin'), internalAuth()]) {
      assert.equal((await refusal(guard(request(), route(access.session), auth))).status, 403);
    }
    assert.equal((await guard(request(), route(access.session), person([]))).kind, 'session');
  });

  test('hub admin routes let only hub admins and the internal key through', async () => {
    assert.equal((await refusal(guard(request(), route(access.hubAdmin), person([[TEAM, 'owner']])))).status, 403);
    assert.equal((await guard(request(), route(access.hubAdmin), person([], { hubAdmin: true }))).isPlatformAdmin, true);
    assert.equal((await guard(request(), route(access.hubAdmin), internalAuth())).kind, 'internal');
  });
});

describe('guard: the role in the team the action concerns', () => {
  test('a role below the minimum is 403', async () => {
    const err = await refusal(
      guard(request({ query: { tenantId: TEAM } }), route(access.role('admin'), teamInQuery), person([[TEAM, 'member']])),
    );
    assert.deepEqual(err, { status: 403, code: 'FORBIDDEN' });
  });

  test('the role that counts is the one in the named team, not the best one', async () => {
    const caller = person([
      [TEAM, 'viewer'],
      [OTHER_TEAM, 'owner'],
    ]);
    assert.equal(
      (await refusal(guard(request({ query: { tenantId: TEAM } }), route(access.role('member'), teamInQuery), caller))).status,
      403,
    );
    const actor = await guard(request({ query: { tenantId: OTHER_TEAM } }), route(access.role('member'), teamInQuery), caller);
    assert.deepEqual([actor.teamId, actor.teamRole], [OTHER_TEAM, 'owner']);
  });

  test('a team the caller is not in, or that does not exist, is 404 alike', async () => {
    const caller = person([[TEAM, 'owner']]);
    for (const tenantId of [OTHER_TEAM, MISSING_TEAM, 'not-a-uuid']) {
      assert.deepEqual(await refusal(guard(request({ query: { tenantId } }), route(access.role('viewer'), teamInQuery), caller)), {
        status: 404,
        code: 'NOT_FOUND',
      });
    }
  });

  test('a resource whose team is unknown, or an id that is no uuid, is 404', async () => {
    const byChunk = route(access.role('viewer'), { resource: 'chunk', param: 'chunkId' });
    const caller = person([[TEAM, 'owner']]);
    for (const chunkId of [UNKNOWN, 'nope']) {
      assert.equal((await refusal(guard(request({ params: { chunkId } }), byChunk, caller))).status, 404);
    }
    const actor = await guard(request({ params: { chunkId: CHUNK } }), byChunk, person([[TEAM, 'viewer']]));
    assert.deepEqual([actor.teamId, actor.teamRole], [TEAM, 'viewer']);
  });

  test('a person who names no team gets 400 TENANT_REQUIRED', async () => {
    assert.deepEqual(await refusal(guard(request(), route(access.role('viewer'), teamInQuery), person([[TEAM, 'owner']]))), {
      status: 400,
      code: 'TENANT_REQUIRED',
    });
  });

  test('an optional team left out spans the caller’s teams: 403 unless one of them allows the role', async () => {
    const optional: TeamSource = { in: 'query', key: 'tenantId', optional: true };
    const low = person([[TEAM, 'viewer']]);
    assert.equal((await refusal(guard(request(), route(access.role('admin'), optional), low))).status, 403);
    const high = person([
      [TEAM, 'viewer'],
      [OTHER_TEAM, 'admin'],
    ]);
    const actor = await guard(request(), route(access.role('admin'), optional), high);
    assert.deepEqual([actor.teamId, actor.teamRole], [null, null]);
  });

  test('a hub admin acts as owner in every existing team, and gets 404 for one that does not exist', async () => {
    const admin = person([], { hubAdmin: true });
    const actor = await guard(request({ query: { tenantId: OTHER_TEAM } }), route(access.role('owner'), teamInQuery), admin);
    assert.deepEqual([actor.teamId, actor.teamRole], [OTHER_TEAM, 'owner']);
    assert.equal(
      (await refusal(guard(request({ query: { tenantId: MISSING_TEAM } }), route(access.role('viewer'), teamInQuery), admin))).status,
      404,
    );
    const internal = await guard(request({ query: { tenantId: TEAM } }), route(access.role('owner'), teamInQuery), internalAuth());
    assert.deepEqual([internal.teamId, internal.teamRole], [TEAM, 'owner']);
  });

  test('outsider routes let a non-member through to an existing team, without a role', async () => {
    const outsiders: TeamSource = { in: 'params', key: 'id', outsiders: true };
    const actor = await guard(request({ params: { id: OTHER_TEAM } }), route(access.session, outsiders), person([[TEAM, 'owner']]));
    assert.deepEqual([actor.teamId, actor.teamRole], [OTHER_TEAM, null]);
    assert.equal(
      (await refusal(guard(request({ params: { id: MISSING_TEAM } }), route(access.session, outsiders), person([])))).status,
      404,
    );
  });
});

describe('guard: API keys', () => {
  test('a team key implies its own team when none is named, with its own role', async () => {
    const actor = await guard(request(), route(access.role('member'), teamInQuery), apiKey('member'));
    assert.deepEqual([actor.teamId, actor.teamRole], [TEAM, 'member']);
    assert.equal((await refusal(guard(request(), route(access.role('admin'), teamInQuery), apiKey('member')))).status, 403);
  });

  test('a team key naming another team gets 404', async () => {
    assert.equal(
      (await refusal(guard(request({ query: { tenantId: OTHER_TEAM } }), route(access.role('viewer'), teamInQuery), apiKey('owner'))))
        .status,
      404,
    );
  });

  test('personOnly refuses keys with 403 but lets the internal key through', async () => {
    const personOnly = route(access.role('viewer', { personOnly: true }), teamInQuery);
    assert.equal((await refusal(guard(request({ query: { tenantId: TEAM } }), personOnly, apiKey('owner')))).status, 403);
    assert.equal((await guard(request({ query: { tenantId: TEAM } }), personOnly, internalAuth())).teamRole, 'owner');
    assert.equal((await guard(request({ query: { tenantId: TEAM } }), personOnly, person([[TEAM, 'viewer']]))).teamRole, 'viewer');
  });

  test('a satellite key is refused with 403 on protected routes not declared for satellite keys', async () => {
    const key = apiKey('member', SAT_MEMBERS);
    assert.equal((await refusal(guard(request(), route(access.authenticated), key))).status, 403);
    assert.equal((await guard(request(), route(access.authenticated, undefined, { satelliteKey: true }), key)).satelliteId, SAT_MEMBERS);
  });
});

describe('guard: the device rule', () => {
  const device: TeamSource = { resource: 'satellite', param: 'id' };
  const manage = (id: string, auth: Auth, satelliteKey = false) =>
    guard(request({ params: { id } }), route(access.device, device, { satelliteKey }), auth);

  test('team admins manage every device of their team; hub admins every device', async () => {
    for (const id of [SAT_MEMBERS, SAT_ADMINS, SAT_UNOWNED]) {
      assert.equal((await manage(id, person([[TEAM, 'admin']]))).teamRole, 'admin');
      assert.equal((await manage(id, person([], { hubAdmin: true }))).teamRole, 'owner');
    }
  });

  test('the registrant manages their device while the policy is members', async () => {
    const registrant = person([[TEAM, 'member']], { userId: REGISTRANT });
    assert.equal((await manage(SAT_MEMBERS, registrant)).teamId, TEAM);
  });

  test('the registrant may not under the admins policy, nor a viewer registrant under any', async () => {
    assert.equal((await refusal(manage(SAT_ADMINS, person([[TEAM, 'member']], { userId: REGISTRANT })))).status, 403);
    assert.equal((await refusal(manage(SAT_MEMBERS, person([[TEAM, 'viewer']], { userId: REGISTRANT })))).status, 403);
  });

  test('another member, or a team key below admin, may not', async () => {
    assert.equal((await refusal(manage(SAT_MEMBERS, person([[TEAM, 'member']])))).status, 403);
    assert.equal((await refusal(manage(SAT_UNOWNED, person([[TEAM, 'member']])))).status, 403);
    assert.equal((await refusal(manage(SAT_MEMBERS, apiKey('member')))).status, 403);
    assert.equal((await manage(SAT_MEMBERS, apiKey('admin'))).teamRole, 'admin');
  });

  test('an unknown device, or one of a team the caller is not in, is 404', async () => {
    assert.equal((await refusal(manage(UNKNOWN, person([[TEAM, 'admin']])))).status, 404);
    assert.equal((await refusal(manage(SAT_MEMBERS, person([[OTHER_TEAM, 'owner']])))).status, 404);
  });

  test('a satellite key manages its own satellite on satellite-key routes only', async () => {
    const key = apiKey('member', SAT_MEMBERS);
    assert.equal((await manage(SAT_MEMBERS, key, true)).satelliteId, SAT_MEMBERS);
    assert.equal((await refusal(manage(SAT_ADMINS, key, true))).status, 403);
    assert.equal((await refusal(manage(SAT_MEMBERS, key, false))).status, 403);
  });

  test('the can_manage flag comes from the same rule: a satellite key never reads as manager in responses', () => {
    const facts = { id: SAT_MEMBERS, registeredBy: REGISTRANT, devicePolicy: 'members' };
    assert.equal(canManageDevice(apiKey('member', SAT_MEMBERS), 'member', facts, { satelliteKeyRoute: false }), false);
    assert.equal(canManageDevice(person([[TEAM, 'member']], { userId: REGISTRANT }), 'member', facts, { satelliteKeyRoute: false }), true);
    assert.equal(canManageDevice(anonymousAuth(), null, facts, { satelliteKeyRoute: false }), false);
  });
});

describe('guard: scope variants', () => {
  const scoped = route(access.authenticated, undefined, {
    variants: [
      { when: { query: 'level', equals: 'hub' }, access: access.hubAdmin },
      { when: { query: 'satelliteId' }, access: access.role('viewer'), team: { resource: 'satellite', query: 'satelliteId' } },
      { when: { query: 'tenantId' }, access: access.role('admin'), team: teamInQuery },
    ],
  });

  test('no selector: the route’s own access, no team', async () => {
    const actor = await guard(request(), scoped, person([]));
    assert.equal(actor.teamId, null);
  });

  test('the first matching variant decides access and team', async () => {
    const member = person([[TEAM, 'member']]);
    assert.equal((await refusal(guard(request({ query: { level: 'hub' } }), scoped, member))).status, 403);
    assert.equal((await guard(request({ query: { satelliteId: SAT_MEMBERS } }), scoped, member)).teamId, TEAM);
    assert.equal((await refusal(guard(request({ query: { tenantId: TEAM } }), scoped, member))).status, 403);
    assert.equal((await guard(request({ query: { tenantId: TEAM } }), scoped, person([[TEAM, 'admin']]))).teamRole, 'admin');
  });

  test('an equals selector with another value, or an empty one, falls through', async () => {
    const actor = await guard(request({ query: { level: 'account', satelliteId: '' } }), scoped, person([]));
    assert.equal(actor.teamId, null);
  });
});

test('the guard refuses to start without a resolver for every resource', () => {
  const partial: Partial<Record<Resource, TeamResolver>> = resolvers();
  delete partial.invite;
  assert.throws(
    () =>
      createGuard({
        teamResolvers: partial as Record<Resource, TeamResolver>,
        teamExists: async () => true,
        deviceFacts: async () => null,
      }),
    /no team resolver for: invite/,
  );
  assert.ok(RESOURCES.includes('invite'));
});
