/**
 * The tenant-isolation matrix, generated from the permissions registry: every declared route
 * is called as anonymous, viewer, member, admin, owner, a member of another team, a hub admin,
 * a team API key and the internal key, and the status must match the route's declared access.
 * New routes join the matrix by being declared.
 *
 * The routes are dealt into MATRIX_SHARDS shards by their position in the registry, one test file
 * each (test/isolation-matrix-<n>.test.ts), so the matrix runs in parallel; every shard checks
 * that each of its routes was called as every caller, and shard 1 checks the shard files exist,
 * so together they cover every declared route.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startHub, type Hub } from './hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, makeSatelliteKey } from './factories.ts';
import { call, type Credential } from './http.ts';
import { roleAtLeast, type Role } from '../../src/core/actor.ts';
import type { Access, Permission, TeamSource } from '../../src/core/permissions.ts';
import { enforceRegistry } from '../../src/core/http.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import { newId } from '../../src/core/crypto.ts';
import { makeWav } from '../../src/protocol/wav.ts';

type CallerName =
  'anonymous' | 'viewer' | 'member' | 'admin' | 'owner' | 'otherTeam' | 'hubAdmin' | 'teamKey' | 'satelliteKey' | 'internal';
const CALLERS: CallerName[] = [
  'anonymous',
  'viewer',
  'member',
  'admin',
  'owner',
  'otherTeam',
  'hubAdmin',
  'teamKey',
  'satelliteKey',
  'internal',
];
const TEAM_KEY_ROLE: Role = 'member';

type Expect = 'pass' | 401 | 403 | 404;
const GUARD_CODES: Record<number, string> = { 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' };

/** One way of calling a route: the route itself, or one of its scope variants. */
interface Case {
  p: Permission;
  access: Access;
  team?: TeamSource;
  /** Query that selects the variant. */
  select?: { query: string; equals?: string };
}

function casesOf(p: Permission): Case[] {
  return [{ p, access: p.access, team: p.team }, ...(p.variants ?? []).map((v) => ({ p, access: v.access, team: v.team, select: v.when }))];
}

/**
 * What the declaration promises for this caller. The world's satellite was registered by the
 * member under the default members policy, and the satellite key belongs to it.
 */
function expected(c: Case, caller: CallerName): Expect {
  const a = c.access;
  if (a.kind === 'public') return 'pass';
  if (caller === 'anonymous') return 401;
  if (caller === 'satelliteKey' && !c.p.satelliteKey) return 403;
  // A satellite key on a route it may call acts on its own satellite only.
  if (caller === 'satelliteKey' && a.kind === 'device') return 'pass';
  const isKey = caller === 'teamKey' || caller === 'satelliteKey';
  const isInternal = caller === 'internal';
  const isHubAdmin = caller === 'hubAdmin' || isInternal;
  if (a.kind === 'session' && (isKey || isInternal)) return 403;
  if (a.kind === 'hubAdmin') return isHubAdmin ? 'pass' : 403;
  if (a.kind === 'role' && a.personOnly && isKey) return 403;

  const role: Role | null = isHubAdmin ? 'owner' : isKey ? TEAM_KEY_ROLE : caller === 'otherTeam' ? null : (caller as Role);
  const outsiders = c.team !== undefined && 'outsiders' in c.team && c.team.outsiders === true;
  if (c.team && role === null && !outsiders) return 404;
  if (a.kind === 'role' && !roleAtLeast(role, a.min)) return 403;
  if (a.kind === 'device' && !roleAtLeast(role, 'admin') && caller !== 'member') return 403;
  return 'pass';
}

interface FixtureContext {
  hub: Hub;
  f: ReturnType<typeof factories>;
  w: Awaited<ReturnType<ReturnType<typeof factories>['world']>>;
  /** The credential making the call (null for anonymous). */
  caller: Credential | null;
  /** Set by a fixture that makes a satellite: that satellite's own key, used when the caller is the satellite key. */
  satelliteKey?: string;
  /** Set by the share-link :id fixture, so the :token fixture signs a link to that detection. */
  sharedDetectionId?: string;
  /** Set by the detection fixture, for parameters that live under that detection (:commentId). */
  detectionId?: string;
}

/**
 * Path parameter fixtures. A route whose team comes from a resource gets a fresh resource of
 * the world's team; other parameters are matched by name and path. A new route with a new
 * kind of parameter adds its fixture here.
 */
const RESOURCE_FIXTURES: Record<string, (c: FixtureContext) => Promise<string>> = {
  membership: async ({ f, w }) => (await f.member(w.team, 'member')).membershipId,
  invite: async ({ hub, w }) =>
    (await call(hub.url, 'POST', '/auth/invites', { body: { tenantId: w.team.id, role: 'member' }, as: w.admin })).body.id,
  apiKey: async ({ f, w }) => (await f.apiKey(w.team, w.owner)).id,
  // A fresh satellite registered by the world's member (the registrant under the members policy).
  satellite: async (c) => {
    const sat = await makeSatellite(c.hub, c.w.team, c.w.member);
    c.satelliteKey = await makeSatelliteKey(c.hub, sat);
    return sat.id;
  },
  // A stored chunk (row and object) of a satellite of the world's team.
  chunk: async ({ hub, w }) => (await makeChunk(hub, { team: w.team, durationMs: 100, audio: makeWav(4800) })).id,
  // A detection of a satellite of the world's team (its chunk need not exist).
  detection: async (c) => (c.detectionId = await makeDetection(c.hub, { team: c.w.team })),
  // Alerting: an email channel (no outbound URL to allow), a rule, and an alert row of the world's team.
  alertChannel: async ({ hub, w }) =>
    (
      await call(hub.url, 'POST', '/alert-rules/channels', {
        body: { tenantId: w.team.id, type: 'email', name: 'matrix', config: { addresses: ['matrix@example.org'] } },
        as: w.admin,
      })
    ).body.id,
  alertRule: async ({ hub, w }) =>
    (await call(hub.url, 'POST', '/alert-rules/rules', { body: { tenantId: w.team.id, name: 'matrix', type: 'detection' }, as: w.admin }))
      .body.id,
  // A finished background export of the world's team, and a scheduled export through its email channel.
  exportJob: async ({ hub, w }) => {
    const id = newId();
    const now = hub.clock.now();
    await hub.sql.query(
      `INSERT INTO export_jobs (id, tenant_id, format, status, created_at, expires_at) VALUES ($1, $2, 'csv', 'failed', $3, $4)`,
      [id, w.team.id, now, new Date(now.getTime() + 3_600_000)],
    );
    return id;
  },
  scheduledExport: async (c) => {
    const channelId = await RESOURCE_FIXTURES.alertChannel(c);
    return (
      await call(c.hub.url, 'POST', '/exports/scheduled', {
        body: { tenantId: c.w.team.id, name: 'matrix', format: 'csv', schedule: '0 6 * * *', channelId },
        as: c.w.admin,
      })
    ).body.id;
  },
  // A field note of the world's team, written by the caller when a person (authors edit their own), else by the member.
  fieldNote: async ({ hub, w, caller }) => {
    const id = newId();
    const author = (caller as { id?: string } | null)?.id ?? w.member.id;
    const now = hub.clock.now();
    await hub.sql.query(
      `INSERT INTO field_notes (id, tenant_id, author_id, author_name, text, at, created_at, updated_at) VALUES ($1, $2, $3, 'matrix', 'matrix note', $4, $4, $4)`,
      [id, w.team.id, author, now],
    );
    return id;
  },
  // A published recording (issue 34): a stored chunk of the world's team and its publication row.
  publishedAudio: async ({ hub, w }) => {
    const chunk = await makeChunk(hub, { team: w.team, durationMs: 100, audio: makeWav(4800) });
    const id = newId();
    await hub.sql.query('INSERT INTO published_audio (id, tenant_id, chunk_id, published_at) VALUES ($1, $2, $3, $4)', [
      id,
      w.team.id,
      chunk.id,
      hub.clock.now(),
    ]);
    return id;
  },
  alert: async ({ hub, w }) => {
    const id = newId();
    await hub.sql.query(
      `INSERT INTO alerts (id, tenant_id, rule_name, event, message, dedup_key, cooldown_key, created_at)
       VALUES ($1, $2, 'matrix', 'custom_rule', 'matrix alert', $3, 'x', $4)`,
      [id, w.team.id, `matrix:${id}`, hub.clock.now()],
    );
    return id;
  },
};

const PARAM_FIXTURES: Array<{ match: (url: string, name: string) => boolean; make: (c: FixtureContext) => Promise<string> }> = [
  { match: (_u, n) => n === 'tid', make: async ({ w }) => w.team.id },
  { match: (u, n) => n === 'id' && u.startsWith('/admin/users'), make: async ({ f, w }) => (await f.member(w.team, 'member')).id },
  {
    match: (_u, n) => n === 'rid',
    make: async ({ hub, f, w }) =>
      (await call(hub.url, 'POST', `/tenants/${w.team.id}/join`, { body: {}, as: await f.user() })).body.requestId,
  },
  {
    match: (_u, n) => n === 'userId',
    make: async ({ hub, f, w }) => {
      const u = await f.user();
      await hub.sql.query('INSERT INTO team_blocks (tenant_id, user_id, blocked_at) VALUES ($1, $2, $3)', [
        w.team.id,
        u.id,
        hub.clock.now(),
      ]);
      return u.id;
    },
  },
  // A comment on the route's detection, written by the caller when a person (own comments may be deleted), else by the member.
  {
    match: (_u, n) => n === 'commentId',
    make: async ({ hub, w, caller, detectionId }) => {
      const id = newId();
      const author = (caller as { id?: string } | null)?.id ?? w.member.id;
      await hub.sql.query(
        'INSERT INTO detection_comments (id, detection_id, tenant_id, author_id, text, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [id, detectionId, w.team.id, author, 'matrix comment', hub.clock.now()],
      );
      return id;
    },
  },
  // Public share links: a detection of the world's team and a valid link token for it.
  {
    match: (u, n) => n === 'id' && u.startsWith('/share/'),
    make: async (c) => (c.sharedDetectionId = await RESOURCE_FIXTURES.detection(c)),
  },
  {
    match: (u, n) => n === 'token' && u.startsWith('/share/'),
    make: async ({ hub, sharedDetectionId }) => hub.services.share.tokenFor(sharedDetectionId!),
  },
  // An invite link's summary (issue 23): the token of a fresh invite of the world's team (public).
  {
    match: (u, n) => n === 'token' && u.startsWith('/auth/invites/summary/'),
    make: async ({ hub, w }) =>
      (await call(hub.url, 'POST', '/auth/invites', { body: { tenantId: w.team.id, role: 'member' }, as: w.admin })).body.token,
  },
  // Classifier models are hub-wide: the built-in one (its delete answers 409, its default is already set).
  { match: (u, n) => n === 'id' && u.startsWith('/admin/models'), make: async () => 'builtin' },
  { match: (u, n) => n === 'index' && u.startsWith('/admin/models'), make: async () => '0' },
  // Mobile releases are hub-wide: a fresh release with its package in storage.
  {
    match: (u, n) => n === 'id' && u.startsWith('/mobile/'),
    make: async ({ hub }) => {
      const id = newId();
      const key = `mobile/${id}.apk`;
      const bytes = Buffer.from('PK\x03\x04matrix package');
      await hub.infra.storage.put(key, bytes);
      await hub.sql.query(
        `INSERT INTO mobile_releases (id, version, version_key, extension, storage_key, file_size, sha256, created_at)
         VALUES ($1, $2, $2, 'apk', $3, $4, $5, $6)`,
        [id, `0.0.0-matrix.${id}`, key, bytes.length, 'matrix', hub.clock.now()],
      );
      return id;
    },
  },
  // Items that belong to the caller and not to a team: an unknown id answers the handler's 404.
  { match: (u) => u.startsWith('/auth/mfa/'), make: async () => '00000000-0000-4000-8000-000000000000' },
  // A published recording's public link (issue 34): public, so every caller gets the WAV.
  {
    match: (u, n) => n === 'token' && u.startsWith('/public/audio/'),
    make: async (c) => c.hub.services.publishedAudio.tokenFor(await RESOURCE_FIXTURES.publishedAudio(c)),
  },
  // Public team pages (issue 20): the world's team by its slug (public: every caller passes; the page answers 404 while off).
  { match: (u, n) => n === 'slug' && u.startsWith('/public/teams/'), make: async ({ w }) => w.team.slug },
  // Statistics (issue 19): a species of the bundled catalog.
  { match: (u, n) => n === 'code' && u.startsWith('/stats/species/'), make: async () => 'eurrob1' },
  // Per-species thresholds (issue 35): a species of the bundled catalog.
  { match: (u, n) => n === 'code' && u.startsWith('/species-thresholds/'), make: async () => 'eurrob1' },
];

async function fixtureFor(p: Permission, name: string, c: FixtureContext): Promise<string> {
  if (p.team && 'resource' in p.team && p.team.param === name) {
    const make = RESOURCE_FIXTURES[p.team.resource];
    if (!make) throw new Error(`matrix has no fixture for resource ${p.team.resource}`);
    return make(c);
  }
  if (p.team && 'in' in p.team && p.team.in === 'params' && p.team.key === name) return c.w.team.id;
  const byParam = PARAM_FIXTURES.find((x) => x.match(p.url, name));
  if (!byParam) throw new Error(`matrix has no fixture for :${name} in ${p.url}`);
  return byParam.make(c);
}

const routeKey = (p: { method: string; url: string }) => `${p.method} ${p.url}`;

/** Declarations that cover every route under their path (Swagger's UI and its files). */
const PREFIX_DECLARATIONS = ['GET /docs'];

/**
 * The routes Fastify serves, as registry keys (API paths without /api, HEAD left out: Fastify
 * adds it to every GET). Read from the router's printed tree, where each line extends its
 * parent's path by the segment it shows.
 */
function servedRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const paths: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    paths.length = depth;
    // Top-level lines drop the root's slash before a wildcard ("*" is "/*").
    const full = (paths[depth - 1] ?? (m[2].startsWith('/') ? '' : '/')) + m[2];
    paths.push(full);
    const url = full === '/api' || full.startsWith('/api/') ? full.slice(4) : full;
    for (const method of m[3]?.split(', ') ?? []) if (method !== 'HEAD') routes.push(`${method} ${url}`);
  }
  return routes;
}

/** A GET outside /api/ (the WebSocket path), read like call() reads its answers. */
async function callRoot(href: string, as: Credential | null) {
  const headers: Record<string, string> = {};
  if (as?.token) headers.authorization = `Bearer ${as.token}`;
  if (as?.cookie) headers.cookie = as.cookie;
  const res = await fetch(href, { headers });
  const text = await res.text();
  return {
    status: res.status,
    body: (res.headers.get('content-type') ?? '').includes('application/json') && text ? JSON.parse(text) : text,
  };
}

export const MATRIX_SHARDS = 4;

/** Runs shard `shard` (1 … MATRIX_SHARDS) of the matrix. */
export function isolationMatrixShard(shard: number): void {
  describe(`isolation matrix, shard ${shard} of ${MATRIX_SHARDS}`, () => matrix(shard));
}

function matrix(shard: number) {
  let hub: Hub;
  const mine = (p: Permission) => hub.registry.indexOf(p) % MATRIX_SHARDS === shard - 1;
  before(async () => {
    hub = await startHub();
    // Teams in the matrix accept join requests, so the joining routes answer their callers.
    await hub.sql.query(
      `INSERT INTO settings (level, scope_id, key, value, updated_at) VALUES ('hub', '', 'allow_public_teams', 'true', now())`,
    );
  });
  after(() => hub.close());

  if (shard === 1)
    test('every shard of the matrix has its test file', () => {
      const files = fs.readdirSync(path.resolve(import.meta.dirname, '..')).filter((f) => /^isolation-matrix-\d+\.test\.ts$/.test(f));
      assert.deepEqual(files.sort(), Array.from({ length: MATRIX_SHARDS }, (_, i) => `isolation-matrix-${i + 1}.test.ts`).sort());
    });

  if (shard === 1)
    test('the registry names exactly the routes the hub serves, each once', () => {
      const keys = hub.registry.map(routeKey);
      assert.equal(new Set(keys).size, keys.length, 'routes are declared once');
      assert.ok(keys.includes('GET /ws/events'), 'the WebSocket is declared (its upgrade passes the guard; test/live.test.ts)');
      const served = servedRoutes(hub.app);
      const declarationOf = (route: string) =>
        keys.find((k) => k === route || (PREFIX_DECLARATIONS.includes(k) && route.startsWith(`${k}/`)));
      const undeclared = served.filter((r) => !declarationOf(r));
      assert.deepEqual(undeclared, [], `served routes without a declaration: ${undeclared.join(', ')}`);
      const unserved = keys.filter((k) => !served.some((r) => declarationOf(r) === k));
      assert.deepEqual(unserved, [], `declared routes the hub does not serve: ${unserved.join(', ')}`);
    });

  if (shard === 1)
    test('a route missing from the registry stops the hub from starting', async () => {
      const app = Fastify();
      enforceRegistry(app, []);
      assert.throws(() => app.get('/api/undeclared', async () => 'x'), /not declared in the permissions registry/);
      await app.close();
    });

  test(`declared access holds for every caller on every route of shard ${shard}`, async () => {
    const f = factories(hub);
    const failures: string[] = [];
    let calls = 0;
    /** Route key → the callers that called it (once per case). */
    const exercised = new Map<string, Set<CallerName>>();
    const routes = hub.registry.filter(mine);
    assert.ok(routes.length > 0, 'the shard has routes');
    for (const c of routes.flatMap(casesOf)) {
      const p = c.p;
      const w = await f.world();
      // Team-owned, so a member leaving (one of the calls) does not disconnect it.
      const satellite = await makeSatellite(hub, w.team, null);
      await hub.sql.query(
        `INSERT INTO settings (level, scope_id, key, value, updated_at) VALUES ('team', $1, 'join_policy', '"request"', now())`,
        [w.team.id],
      );
      const creds: Record<CallerName, Credential | null> = {
        anonymous: null,
        viewer: w.viewer,
        member: w.member,
        admin: w.admin,
        owner: w.owner,
        otherTeam: w.otherOwner,
        hubAdmin: w.hubAdmin,
        teamKey: { token: w.key.token },
        satelliteKey: { token: await makeSatelliteKey(hub, satellite) },
        internal: f.internal,
      };
      for (const caller of CALLERS) {
        // Fresh targets per call, so one caller's success cannot change the next caller's answer.
        const params: Record<string, string> = {};
        const ctx: FixtureContext = { hub, f, w, caller: creds[caller] };
        for (const name of [...p.url.matchAll(/:(\w+)/g)].map((m) => m[1])) {
          params[name] = await fixtureFor(p, name, ctx);
        }
        let url = p.url.replace(/:(\w+)/g, (_, n) => params[n]);
        if (p.url === '/docs') url = '/docs/openapi.json';
        const query = new URLSearchParams();
        let body: unknown;
        if (c.select) {
          let value = c.select.equals ?? w.team.id;
          if (c.select.query === 'satelliteId' || c.select.query === 'listenSatelliteId') value = await RESOURCE_FIXTURES.satellite(ctx);
          query.set(c.select.query, value);
        }
        if (c.team && 'in' in c.team && c.team.in === 'query') query.set(c.team.key, w.team.id);
        if (c.team && 'in' in c.team && c.team.in === 'body') body = { [c.team.key]: w.team.id };
        else if (p.method !== 'GET' && p.method !== 'DELETE') body = {};
        if ([...query].length) url += `?${query}`;

        const as = caller === 'satelliteKey' && ctx.satelliteKey ? { token: ctx.satelliteKey } : creds[caller];
        // The WebSocket lives outside /api/: a plain GET passes the same guard as the upgrade and answers 426.
        // So does /metrics (beside /api, where scrapers look).
        const outsideApi = p.url.startsWith('/ws/') || p.url === '/metrics';
        const res = outsideApi ? await callRoot(hub.url + url, as) : await call(hub.url, p.method, url, { body, as });
        calls++;
        exercised.set(routeKey(p), (exercised.get(routeKey(p)) ?? new Set()).add(caller));
        const want = expected(c, caller);
        const code = res.body?.error?.code;
        // A 404 is the guard's only where the case names a team; elsewhere it is the handler's
        // answer about the caller's own items (e.g. a passkey the caller does not have).
        const guardDenied =
          (res.status === 401 || res.status === 403 || (res.status === 404 && c.team !== undefined)) && code === GUARD_CODES[res.status];
        const ok = want === 'pass' ? !guardDenied && res.status < 500 : res.status === want && code === GUARD_CODES[want];
        const label = c.select
          ? `${p.method} ${p.url}?${c.select.query}${c.select.equals ? '=' + c.select.equals : ''}`
          : `${p.method} ${p.url}`;
        if (!ok) failures.push(`${label} as ${caller}: expected ${want}, got ${res.status} ${code ?? ''}`);
      }
    }
    assert.deepEqual(failures, [], `${failures.length} of ${calls} calls broke their declaration`);
    const registered = routes.map(routeKey);
    const missing = registered.flatMap((k) => {
      const absent = CALLERS.filter((c) => !exercised.get(k)?.has(c));
      return absent.length === 0 ? [] : [absent.length === CALLERS.length ? k : `${k} (as ${absent.join(', ')})`];
    });
    assert.deepEqual(missing, [], `routes missing from the matrix: ${missing.join('; ')}`);
    assert.deepEqual([...exercised.keys()].sort(), [...registered].sort(), 'the matrix calls exactly the registered routes');
    assert.equal(calls, routes.flatMap(casesOf).length * CALLERS.length);
  });
}
