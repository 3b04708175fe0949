/**
 * Teams over HTTP (spec §1 item 8, §3 "Team ownership", §4 "Auth and account" and "Teams",
 * §5 "Authorization guard", §6 audit, §7 errors): creating teams, listing them, invites,
 * the member list, leaving, the role ladder, removal, ownership transfer and team API keys.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, PASSWORD } from './helpers/factories.ts';
import { client, type Credential, assertError } from './helpers/http.ts';

const uniq = () => crypto.randomBytes(4).toString('hex');
const sha256 = (v: string) => crypto.createHash('sha256').update(v).digest('hex');
const DAY_MS = 24 * 3600 * 1000;

interface AuditRow {
  action: string;
  actor_user_id: string | null;
  actor_email: string | null;
  ip: string | null;
  tenant_id: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
}

describe('teams', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  const keyCred = (token: string): Credential => ({ token });

  const audits = (action: string, targetId: string) =>
    hub.sql.query<AuditRow>(
      'SELECT action, actor_user_id, actor_email, ip, tenant_id, target_id, details FROM audit_log WHERE action = $1 AND target_id = $2 ORDER BY id',
      [action, targetId],
    );

  const roleOf = async (membershipId: string) =>
    (await hub.sql.maybeOne<{ role: string }>('SELECT role FROM memberships WHERE id = $1', [membershipId]))?.role ?? null;

  const membershipOf = (tenantId: string, userId: string) =>
    hub.sql.maybeOne<{ id: string; role: string }>('SELECT id, role FROM memberships WHERE tenant_id = $1 AND user_id = $2', [
      tenantId,
      userId,
    ]);

  const owners = (tenantId: string) =>
    hub.sql.query<{ user_id: string }>(`SELECT user_id FROM memberships WHERE tenant_id = $1 AND role = 'owner'`, [tenantId]);

  describe('POST /auth/create-tenant', () => {
    test('a signed-in person creates a team and becomes its owner (201), audited as admin.tenant_created', async () => {
      const person = await f.user();
      const u = uniq();
      const startedAt = hub.clock.now().getTime();
      const res = await api.post('/auth/create-tenant', { name: `Dawn Chorus ${u}`, description: 'Marsh recorders' }, person);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.name, `Dawn Chorus ${u}`);
      assert.equal(res.body.slug, `dawn-chorus-${u}`);
      assert.equal(res.body.description, 'Marsh recorders');
      assert.equal(res.body.role, 'owner');
      const since = Date.parse(res.body.since);
      assert.ok(since >= startedAt && since <= hub.clock.now().getTime(), res.body.since);

      const team = await hub.sql.one<{ name: string; slug: string }>('SELECT name, slug FROM tenants WHERE id = $1', [res.body.id]);
      assert.deepEqual(team, { name: `Dawn Chorus ${u}`, slug: `dawn-chorus-${u}` });
      const m = await membershipOf(res.body.id, person.id);
      assert.equal(m?.role, 'owner');
      assert.equal((await owners(res.body.id)).length, 1);

      const [entry, ...rest] = await audits('admin.tenant_created', res.body.id);
      assert.equal(rest.length, 0);
      assert.equal(entry.actor_user_id, person.id);
      assert.equal(entry.tenant_id, res.body.id);
      assert.deepEqual(entry.details, { name: `Dawn Chorus ${u}`, slug: `dawn-chorus-${u}` });

      const mine = await api.get('/tenants', person);
      assert.deepEqual(
        mine.body.tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
        [[res.body.id, 'owner']],
      );
    });

    test('the slug is generated from the name and made unique', async () => {
      const u = uniq();
      const name = `Héron Cendré & Co ${u}`;
      const slugs: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await api.post('/auth/create-tenant', { name }, await f.user());
        assert.equal(res.status, 201, res.text);
        slugs.push(res.body.slug);
      }
      assert.deepEqual(slugs, [`heron-cendre-co-${u}`, `heron-cendre-co-${u}-2`, `heron-cendre-co-${u}-3`]);
      const rows = await hub.sql.query<{ slug: string }>('SELECT slug FROM tenants WHERE name = $1', [name]);
      assert.equal(new Set(rows.map((r) => r.slug)).size, 3);
    });

    test('an explicit slug is used; a taken one answers 409 SLUG_TAKEN and creates nothing', async () => {
      const slug = `reedbed-${uniq()}`;
      const first = await api.post('/auth/create-tenant', { name: 'Reedbed', slug }, await f.user());
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.slug, slug);

      const second = await f.user();
      const taken = await api.post('/auth/create-tenant', { name: 'Another reedbed', slug }, second);
      assertError(taken, 409, 'SLUG_TAKEN');
      assert.equal((await hub.sql.query('SELECT 1 FROM memberships WHERE user_id = $1', [second.id])).length, 0);
      assert.equal((await hub.sql.query('SELECT 1 FROM tenants WHERE slug = $1', [slug])).length, 1);

      assertError(await api.post('/auth/create-tenant', { name: 'Bad', slug: 'Not A Slug' }, second), 400, 'VALIDATION_FAILED');
      assertError(await api.post('/auth/create-tenant', { name: '' }, second), 400, 'VALIDATION_FAILED');
    });

    test('nobody signed in gets 401; an API key gets 403', async () => {
      const w = await f.world();
      assertError(await api.post('/auth/create-tenant', { name: 'Nope' }, null), 401, 'UNAUTHENTICATED');
      assertError(await api.post('/auth/create-tenant', { name: 'Nope' }, keyCred(w.key.token)), 403, 'FORBIDDEN');
    });

    test('with allow_tenant_creation off people get 403 TENANT_CREATION_DISABLED; a hub admin still creates teams', async () => {
      const hubAdmin = await f.user({ admin: true });
      const person = await f.user();
      const off = await api.put('/settings/platform', { allow_tenant_creation: false }, hubAdmin);
      assert.equal(off.status, 200, off.text);
      try {
        assert.equal(off.body.settings.allow_tenant_creation, false);
        const name = `Closed ${uniq()}`;
        assertError(await api.post('/auth/create-tenant', { name }, person), 403, 'TENANT_CREATION_DISABLED');
        assert.equal((await hub.sql.query('SELECT 1 FROM tenants WHERE name = $1', [name])).length, 0);

        const byAdmin = await api.post('/auth/create-tenant', { name: `Admin made ${uniq()}` }, hubAdmin);
        assert.equal(byAdmin.status, 201, byAdmin.text);
        assert.equal((await membershipOf(byAdmin.body.id, hubAdmin.id))?.role, 'owner');
      } finally {
        const on = await api.put('/settings/platform', { allow_tenant_creation: true }, hubAdmin);
        assert.equal(on.status, 200, on.text);
      }
      const again = await api.post('/auth/create-tenant', { name: `Open again ${uniq()}` }, person);
      assert.equal(again.status, 201, again.text);
    });
  });

  describe('GET /tenants', () => {
    test('a person sees their own teams with their role in each', async () => {
      const w = await f.world();
      await f.addMember(w.otherTeam, w.member, 'viewer');
      const res = await api.get('/tenants', w.member);
      assert.equal(res.status, 200, res.text);
      const got = res.body.tenants.map((t: { id: string; role: string }) => [t.id, t.role]).sort();
      assert.deepEqual(
        got,
        [
          [w.team.id, 'member'],
          [w.otherTeam.id, 'viewer'],
        ].sort(),
      );
      const one = res.body.tenants.find((t: { id: string }) => t.id === w.team.id);
      assert.equal(one.name, w.team.name);
      assert.equal(one.slug, w.team.slug);

      const other = await api.get('/tenants', w.otherOwner);
      assert.deepEqual(
        other.body.tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
        [[w.otherTeam.id, 'owner']],
      );
    });

    test('a hub admin sees every team with ?all=true; others still see only their own', async () => {
      const w = await f.world();
      const own = await api.get('/tenants', w.hubAdmin);
      assert.deepEqual(own.body.tenants, []);

      const all = await api.get('/tenants?all=true', w.hubAdmin);
      assert.equal(all.status, 200, all.text);
      const { n } = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM tenants');
      assert.equal(all.body.tenants.length, n);
      const ids = all.body.tenants.map((t: { id: string }) => t.id);
      assert.ok(ids.includes(w.team.id) && ids.includes(w.otherTeam.id));
      assert.equal(all.body.tenants.find((t: { id: string }) => t.id === w.team.id).role, null);

      const notAdmin = await api.get('/tenants?all=true', w.owner);
      assert.deepEqual(
        notAdmin.body.tenants.map((t: { id: string }) => t.id),
        [w.team.id],
      );
    });

    test('an API key sees its own team with the key role', async () => {
      const w = await f.world();
      const res = await api.get('/tenants', keyCred(w.key.token));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
        [[w.team.id, 'member']],
      );
      assertError(await api.get('/tenants', null), 401, 'UNAUTHENTICATED');
    });
  });

  describe('invites', () => {
    test('an admin creates an invite: 201 {id, token, url, role, expiresAt}, audited admin.invite_created', async () => {
      const w = await f.world();
      const before = hub.clock.now().getTime();
      const res = await api.post('/auth/invites', { tenantId: w.team.id, role: 'member' }, w.admin);
      const afterMs = hub.clock.now().getTime();
      assert.equal(res.status, 201, res.text);
      assert.match(res.body.token, /^[0-9a-f]{64}$/);
      assert.equal(res.body.url, `http://chorus.test/register?invite=${res.body.token}`);
      assert.equal(res.body.role, 'member');
      const expires = Date.parse(res.body.expiresAt);
      assert.ok(expires >= before + 7 * DAY_MS && expires <= afterMs + 7 * DAY_MS, res.body.expiresAt);

      const row = await hub.sql.one<{ tenant_id: string; role: string; token_hash: string; created_by: string }>(
        'SELECT tenant_id, role, token_hash, created_by FROM invites WHERE id = $1',
        [res.body.id],
      );
      assert.deepEqual(row, { tenant_id: w.team.id, role: 'member', token_hash: sha256(res.body.token), created_by: w.admin.id });

      const [entry] = await audits('admin.invite_created', res.body.id);
      assert.equal(entry.actor_user_id, w.admin.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual(entry.details, { role: 'member' });
    });

    test('members, viewers and keys cannot invite; another team answers 404; role owner is refused', async () => {
      const w = await f.world();
      const body = { tenantId: w.team.id, role: 'viewer' };
      assertError(await api.post('/auth/invites', body, w.member), 403, 'FORBIDDEN');
      assertError(await api.post('/auth/invites', body, w.viewer), 403, 'FORBIDDEN');
      assertError(await api.post('/auth/invites', body, keyCred(w.key.token)), 403, 'FORBIDDEN');
      assertError(await api.post('/auth/invites', body, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.post('/auth/invites', { tenantId: w.team.id, role: 'owner' }, w.owner), 400, 'VALIDATION_FAILED');
      assertError(await api.post('/auth/invites', { role: 'member' }, w.owner), 400, 'TENANT_REQUIRED');
      assert.equal((await hub.sql.query('SELECT 1 FROM invites WHERE tenant_id = $1', [w.team.id])).length, 0);
    });

    test('the pending list shows invites but never their tokens', async () => {
      const w = await f.world();
      const a = await api.post('/auth/invites', { tenantId: w.team.id, role: 'member' }, w.admin);
      const b = await api.post('/auth/invites', { tenantId: w.team.id, role: 'viewer', email: 'guest@example.org' }, w.owner);
      await api.post('/auth/invites', { tenantId: w.otherTeam.id, role: 'member' }, w.otherOwner);

      const res = await api.get(`/auth/invites?tenantId=${w.team.id}`, w.admin);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.invites.map((i: { id: string }) => i.id).sort(), [a.body.id, b.body.id].sort());
      for (const i of res.body.invites) {
        assert.ok(!('token' in i) && !('tokenHash' in i), JSON.stringify(i));
        assert.equal(i.tenantId, w.team.id);
      }
      assert.ok(!res.text.includes(a.body.token) && !res.text.includes(b.body.token));
      assert.ok(!res.text.includes(sha256(a.body.token)));
      assert.equal(res.body.invites.find((i: { id: string }) => i.id === b.body.id).role, 'viewer');

      assertError(await api.get('/auth/invites', w.admin), 400, 'TENANT_REQUIRED');
      assertError(await api.get(`/auth/invites?tenantId=${w.team.id}`, w.member), 403, 'FORBIDDEN');
      assertError(await api.get(`/auth/invites?tenantId=${w.team.id}`, w.otherOwner), 404, 'NOT_FOUND');
    });

    test('a revoked invite leaves the list and no longer registers anyone; audited admin.invite_revoked', async () => {
      const w = await f.world();
      const inv = await api.post('/auth/invites', { tenantId: w.team.id, role: 'member' }, w.admin);
      assertError(await api.del(`/auth/invites/${inv.body.id}`, w.member), 403, 'FORBIDDEN');
      assertError(await api.del(`/auth/invites/${inv.body.id}`, w.otherOwner), 404, 'NOT_FOUND');

      const res = await api.del(`/auth/invites/${inv.body.id}`, w.admin);
      assert.equal(res.status, 204, res.text);
      const list = await api.get(`/auth/invites?tenantId=${w.team.id}`, w.admin);
      assert.deepEqual(list.body.invites, []);
      const [entry] = await audits('admin.invite_revoked', inv.body.id);
      assert.equal(entry.actor_user_id, w.admin.id);
      assert.equal(entry.tenant_id, w.team.id);

      const email = `late-${uniq()}@example.org`;
      const reg = await api.post('/auth/register', { email, password: PASSWORD, name: 'Late Comer', inviteToken: inv.body.token });
      assertError(reg, 400, 'INVALID_INVITE');
      assert.equal(await hub.sql.maybeOne('SELECT 1 FROM users WHERE email = $1', [email]), null);

      const signedIn = await f.user();
      assertError(await api.post('/auth/invites/accept', { token: inv.body.token }, signedIn), 400, 'INVALID_INVITE');
      assert.equal(await membershipOf(w.team.id, signedIn.id), null);
      assertError(await api.del(`/auth/invites/${inv.body.id}`, w.admin), 404, 'NOT_FOUND');
    });

    test('a signed-in person accepts an invite and joins with its role, audited member.joined_team; it is single use', async () => {
      const w = await f.world();
      const inv = await api.post('/auth/invites', { tenantId: w.team.id, role: 'viewer' }, w.admin);
      const newcomer = await f.user();
      const res = await api.post('/auth/invites/accept', { token: inv.body.token }, newcomer);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.tenantId, w.team.id);
      assert.equal(res.body.role, 'viewer');
      const m = await membershipOf(w.team.id, newcomer.id);
      assert.deepEqual(m, { id: res.body.membershipId, role: 'viewer' });

      const used = await hub.sql.one<{ used_at: Date | null; used_by: string | null }>(
        'SELECT used_at, used_by FROM invites WHERE id = $1',
        [inv.body.id],
      );
      assert.ok(used.used_at);
      assert.equal(used.used_by, newcomer.id);

      const [entry] = await audits('member.joined_team', res.body.membershipId);
      assert.equal(entry.actor_user_id, newcomer.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual(entry.details, { via: 'invite', inviteId: inv.body.id, role: 'viewer' });

      const mine = await api.get('/tenants', newcomer);
      assert.deepEqual(
        mine.body.tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
        [[w.team.id, 'viewer']],
      );
      assert.deepEqual((await api.get(`/auth/invites?tenantId=${w.team.id}`, w.admin)).body.invites, []);

      const second = await f.user();
      assertError(await api.post('/auth/invites/accept', { token: inv.body.token }, second), 400, 'INVITE_USED');
      assert.equal(await membershipOf(w.team.id, second.id), null);
      assertError(await api.post('/auth/invites/accept', { token: inv.body.token }, keyCred(w.key.token)), 403, 'FORBIDDEN');
    });

    test('accepting while already a member answers 409 ALREADY_MEMBER and leaves the invite unused', async () => {
      const w = await f.world();
      const inv = await api.post('/auth/invites', { tenantId: w.team.id, role: 'admin' }, w.owner);
      assertError(await api.post('/auth/invites/accept', { token: inv.body.token }, w.member), 409, 'ALREADY_MEMBER');
      assert.equal(await roleOf(w.member.membershipId), 'member');
      const row = await hub.sql.one<{ used_at: Date | null }>('SELECT used_at FROM invites WHERE id = $1', [inv.body.id]);
      assert.equal(row.used_at, null);
      const other = await f.user();
      const ok = await api.post('/auth/invites/accept', { token: inv.body.token }, other);
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await membershipOf(w.team.id, other.id))?.role, 'admin');
    });

    test('registering with an invite creates the account inside the team', async () => {
      const w = await f.world();
      const inv = await api.post('/auth/invites', { tenantId: w.team.id, role: 'member' }, w.admin);
      const email = `invited-${uniq()}@example.org`;
      const res = await api.post('/auth/register', { email, password: PASSWORD, name: 'Invited Person', inviteToken: inv.body.token });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body.joined, { tenantId: w.team.id, role: 'member' });
      const m = await membershipOf(w.team.id, res.body.user.id);
      assert.equal(m?.role, 'member');
      const [entry] = await audits('member.joined_team', m!.id);
      assert.equal(entry.actor_user_id, res.body.user.id);
      assert.equal(entry.tenant_id, w.team.id);
    });

    test('an invite expires after 7 days', async () => {
      const w = await f.world();
      const inv = await api.post('/auth/invites', { tenantId: w.team.id, role: 'member' }, w.admin);
      hub.clock.advance(7 * DAY_MS + 1000);
      const late = await f.user();
      assertError(await api.post('/auth/invites/accept', { token: inv.body.token }, late), 400, 'INVITE_EXPIRED');
      assert.equal(await membershipOf(w.team.id, late.id), null);
      const admin2 = await f.member(w.team, 'admin');
      assert.deepEqual((await api.get(`/auth/invites?tenantId=${w.team.id}`, admin2)).body.invites, []);
    });
  });

  describe('GET /auth/members', () => {
    test('admins list the members: membership id, userId, name, email, role', async () => {
      const w = await f.world();
      const res = await api.get(`/auth/members?tenantId=${w.team.id}`, w.admin);
      assert.equal(res.status, 200, res.text);
      const byUser = new Map(res.body.members.map((m: { userId: string }) => [m.userId, m]));
      assert.deepEqual([...byUser.keys()].sort(), [w.owner.id, w.admin.id, w.member.id, w.viewer.id].sort());
      const mel = byUser.get(w.member.id) as Record<string, unknown>;
      assert.equal(mel.id, w.member.membershipId);
      assert.equal(mel.userId, w.member.id);
      assert.equal(mel.name, 'Mel Member');
      assert.equal(mel.email, w.member.email);
      assert.equal(mel.role, 'member');
      assert.equal((byUser.get(w.owner.id) as { id: string }).id, w.owner.membershipId);
      assert.equal((byUser.get(w.owner.id) as { role: string }).role, 'owner');
      assert.equal((byUser.get(w.viewer.id) as { role: string }).role, 'viewer');
    });

    test('hub admins are not listed among the members', async () => {
      const w = await f.world();
      await f.addMember(w.team, w.hubAdmin, 'admin');
      const res = await api.get(`/auth/members?tenantId=${w.team.id}`, w.owner);
      assert.equal(res.status, 200, res.text);
      const ids = res.body.members.map((m: { userId: string }) => m.userId);
      assert.ok(!ids.includes(w.hubAdmin.id), 'hub admin listed');
      assert.equal(ids.length, 4);
    });

    test('without tenantId: 400 TENANT_REQUIRED; another team: 404; below admin: 403', async () => {
      const w = await f.world();
      assertError(await api.get('/auth/members', w.admin), 400, 'TENANT_REQUIRED');
      assertError(await api.get(`/auth/members?tenantId=${w.team.id}`, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.get(`/auth/members?tenantId=${w.otherTeam.id}`, w.owner), 404, 'NOT_FOUND');
      assertError(await api.get(`/auth/members?tenantId=${w.team.id}`, w.member), 403, 'FORBIDDEN');
      assertError(await api.get(`/auth/members?tenantId=${w.team.id}`, w.viewer), 403, 'FORBIDDEN');
      assertError(await api.get(`/auth/members?tenantId=${crypto.randomUUID()}`, w.hubAdmin), 404, 'NOT_FOUND');
    });
  });

  describe('POST /tenants/:id/leave', () => {
    test('the owner gets 400 OWNER_CANNOT_LEAVE and stays', async () => {
      const w = await f.world();
      assertError(await api.post(`/tenants/${w.team.id}/leave`, undefined, w.owner), 400, 'OWNER_CANNOT_LEAVE');
      assert.equal(await roleOf(w.owner.membershipId), 'owner');
    });

    test('a member leaves: membership gone, audited member.left_team', async () => {
      const w = await f.world();
      const res = await api.post(`/tenants/${w.team.id}/leave`, undefined, w.member);
      assert.equal(res.status, 204, res.text);
      assert.equal(await roleOf(w.member.membershipId), null);
      const [entry] = await audits('member.left_team', w.member.membershipId);
      assert.equal(entry.actor_user_id, w.member.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual((await api.get('/tenants', w.member)).body.tenants, []);
      assertError(await api.post(`/tenants/${w.team.id}/leave`, undefined, w.member), 404, 'NOT_FOUND');
    });

    test("a leaver's API keys in that team are revoked; their keys elsewhere keep working", async () => {
      const w = await f.world();
      const key = await f.apiKey(w.team, w.admin, 'member');
      const ownTeam = await f.team(w.admin);
      const elsewhere = await f.apiKey(ownTeam, w.admin, 'member');
      assert.equal((await api.get('/auth/me', keyCred(key.token))).status, 200);

      const res = await api.post(`/tenants/${w.team.id}/leave`, undefined, w.admin);
      assert.equal(res.status, 204, res.text);
      assert.equal(await roleOf(w.admin.membershipId), null);
      assertError(await api.get('/auth/me', keyCred(key.token)), 401, 'UNAUTHENTICATED');
      const row = await hub.sql.one<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
      assert.ok(row.revoked_at);
      assert.equal((await api.get('/auth/me', keyCred(elsewhere.token))).status, 200);
      assert.equal((await api.get('/auth/me', keyCred(w.key.token))).status, 200, "the owner's key is not the leaver's");
      assert.equal((await audits('member.left_team', w.admin.membershipId)).length, 1);
    });

    test('keys cannot leave (403); outsiders get 404', async () => {
      const w = await f.world();
      assertError(await api.post(`/tenants/${w.team.id}/leave`, undefined, keyCred(w.key.token)), 403, 'FORBIDDEN');
      assertError(await api.post(`/tenants/${w.team.id}/leave`, undefined, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.post(`/tenants/${w.team.id}/leave`, undefined, null), 401, 'UNAUTHENTICATED');
    });
  });

  describe('PUT /admin/members/:id/role', () => {
    test('an admin promotes a member to admin, audited admin.member_role_changed; the new role counts at once', async () => {
      const w = await f.world();
      assertError(await api.get(`/auth/members?tenantId=${w.team.id}`, w.member), 403, 'FORBIDDEN');
      const res = await api.put(`/admin/members/${w.member.membershipId}/role`, { role: 'admin' }, w.admin);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.member.id, w.member.membershipId);
      assert.equal(res.body.member.role, 'admin');
      assert.equal(await roleOf(w.member.membershipId), 'admin');

      const [entry] = await audits('admin.member_role_changed', w.member.membershipId);
      assert.equal(entry.actor_user_id, w.admin.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual(entry.details, { userId: w.member.id, from: 'member', to: 'admin' });
      assert.equal((await api.get(`/auth/members?tenantId=${w.team.id}`, w.member)).status, 200);
    });

    test('an admin moves viewers and members up and down the ladder below admin', async () => {
      const w = await f.world();
      assert.equal((await api.put(`/admin/members/${w.viewer.membershipId}/role`, { role: 'member' }, w.admin)).status, 200);
      assert.equal(await roleOf(w.viewer.membershipId), 'member');
      assert.equal((await api.put(`/admin/members/${w.member.membershipId}/role`, { role: 'viewer' }, w.admin)).status, 200);
      assert.equal(await roleOf(w.member.membershipId), 'viewer');
    });

    test("an admin changing an admin's role gets 403 OWNER_ONLY; the owner may", async () => {
      const w = await f.world();
      const second = await f.member(w.team, 'admin');
      assertError(await api.put(`/admin/members/${second.membershipId}/role`, { role: 'member' }, w.admin), 403, 'OWNER_ONLY');
      assert.equal(await roleOf(second.membershipId), 'admin');
      assertError(await api.put(`/admin/members/${w.admin.membershipId}/role`, { role: 'viewer' }, w.admin), 403, 'OWNER_ONLY');
      assert.equal(await roleOf(w.admin.membershipId), 'admin');
      assert.equal((await audits('admin.member_role_changed', second.membershipId)).length, 0);

      const res = await api.put(`/admin/members/${second.membershipId}/role`, { role: 'member' }, w.owner);
      assert.equal(res.status, 200, res.text);
      assert.equal(await roleOf(second.membershipId), 'member');
      const [entry] = await audits('admin.member_role_changed', second.membershipId);
      assert.equal(entry.actor_user_id, w.owner.id);
    });

    test("the owner's role never changes here (400), not even by the owner or a hub admin", async () => {
      const w = await f.world();
      assertError(await api.put(`/admin/members/${w.owner.membershipId}/role`, { role: 'admin' }, w.owner), 400, 'OWNER_ROLE_FIXED');
      assertError(await api.put(`/admin/members/${w.owner.membershipId}/role`, { role: 'member' }, w.hubAdmin), 400, 'OWNER_ROLE_FIXED');
      assertError(await api.put(`/admin/members/${w.owner.membershipId}/role`, { role: 'member' }, w.admin), 400, 'OWNER_ROLE_FIXED');
      assert.equal(await roleOf(w.owner.membershipId), 'owner');
      assert.equal((await owners(w.team.id)).length, 1);
    });

    test("role 'owner' or an unknown role is refused with 400", async () => {
      const w = await f.world();
      assertError(await api.put(`/admin/members/${w.member.membershipId}/role`, { role: 'owner' }, w.owner), 400, 'VALIDATION_FAILED');
      assertError(await api.put(`/admin/members/${w.member.membershipId}/role`, { role: 'superuser' }, w.owner), 400, 'VALIDATION_FAILED');
      assertError(await api.put(`/admin/members/${w.member.membershipId}/role`, {}, w.owner), 400, 'VALIDATION_FAILED');
      assert.equal(await roleOf(w.member.membershipId), 'member');
      assert.equal((await owners(w.team.id)).length, 1);
    });

    test('members, viewers and keys get 403; other teams and unknown ids 404', async () => {
      const w = await f.world();
      const path = `/admin/members/${w.viewer.membershipId}/role`;
      assertError(await api.put(path, { role: 'member' }, w.member), 403, 'FORBIDDEN');
      assertError(await api.put(path, { role: 'member' }, w.viewer), 403, 'FORBIDDEN');
      assertError(await api.put(path, { role: 'member' }, keyCred(w.key.token)), 403, 'FORBIDDEN');
      assertError(await api.put(path, { role: 'member' }, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.put(`/admin/members/${crypto.randomUUID()}/role`, { role: 'member' }, w.owner), 404, 'NOT_FOUND');
      assert.equal(await roleOf(w.viewer.membershipId), 'viewer');
    });
  });

  describe('DELETE /admin/members/:id', () => {
    test('an admin removes a member, audited admin.member_removed', async () => {
      const w = await f.world();
      const res = await api.del(`/admin/members/${w.member.membershipId}`, w.admin);
      assert.equal(res.status, 204, res.text);
      assert.equal(await roleOf(w.member.membershipId), null);
      const [entry] = await audits('admin.member_removed', w.member.membershipId);
      assert.equal(entry.actor_user_id, w.admin.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual(entry.details, { userId: w.member.id, role: 'member' });
      assert.deepEqual((await api.get('/tenants', w.member)).body.tenants, []);
      assertError(await api.del(`/admin/members/${w.member.membershipId}`, w.admin), 404, 'NOT_FOUND');
    });

    test("removing an admin is the owner's: an admin gets 403 OWNER_ONLY, the owner succeeds and the admin's keys stop", async () => {
      const w = await f.world();
      const second = await f.member(w.team, 'admin');
      const key = await f.apiKey(w.team, second, 'viewer');
      assertError(await api.del(`/admin/members/${second.membershipId}`, w.admin), 403, 'OWNER_ONLY');
      assert.equal(await roleOf(second.membershipId), 'admin');
      assert.equal((await api.get('/auth/me', keyCred(key.token))).status, 200);

      const res = await api.del(`/admin/members/${second.membershipId}`, w.owner);
      assert.equal(res.status, 204, res.text);
      assert.equal(await roleOf(second.membershipId), null);
      assertError(await api.get('/auth/me', keyCred(key.token)), 401, 'UNAUTHENTICATED');
    });

    test('the owner is never removable (400)', async () => {
      const w = await f.world();
      for (const who of [w.owner, w.admin, w.hubAdmin]) {
        assertError(await api.del(`/admin/members/${w.owner.membershipId}`, who), 400, 'OWNER_NOT_REMOVABLE');
      }
      assert.equal(await roleOf(w.owner.membershipId), 'owner');
    });

    test('members and keys get 403; another team 404', async () => {
      const w = await f.world();
      assertError(await api.del(`/admin/members/${w.viewer.membershipId}`, w.member), 403, 'FORBIDDEN');
      assertError(await api.del(`/admin/members/${w.viewer.membershipId}`, keyCred(w.key.token)), 403, 'FORBIDDEN');
      assertError(await api.del(`/admin/members/${w.viewer.membershipId}`, w.otherOwner), 404, 'NOT_FOUND');
      assert.equal(await roleOf(w.viewer.membershipId), 'viewer');
    });
  });

  describe('POST /admin/members/:id/transfer-ownership', () => {
    test('the owner hands over: the member becomes owner, the previous owner admin, one owner after', async () => {
      const w = await f.world();
      const res = await api.post(`/admin/members/${w.member.membershipId}/transfer-ownership`, undefined, w.owner);
      assert.equal(res.status, 200, res.text);
      assert.equal(await roleOf(w.member.membershipId), 'owner');
      assert.equal(await roleOf(w.owner.membershipId), 'admin');
      assert.deepEqual(
        (await owners(w.team.id)).map((r) => r.user_id),
        [w.member.id],
      );

      const [entry] = await audits('admin.ownership_transferred', w.member.membershipId);
      assert.equal(entry.actor_user_id, w.owner.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual(entry.details, { from: w.owner.id, to: w.member.id });

      // The previous owner is now an admin: no longer the one to transfer or to leave-proof.
      assertError(await api.post(`/admin/members/${w.viewer.membershipId}/transfer-ownership`, undefined, w.owner), 403, 'FORBIDDEN');
      const back = await api.put(`/admin/members/${w.owner.membershipId}/role`, { role: 'member' }, w.member);
      assert.equal(back.status, 200, back.text);
      assertError(await api.post(`/tenants/${w.team.id}/leave`, undefined, w.member), 400, 'OWNER_CANNOT_LEAVE');
    });

    test('transferring to the member who already owns the team answers 400 ALREADY_OWNER', async () => {
      const w = await f.world();
      assertError(await api.post(`/admin/members/${w.owner.membershipId}/transfer-ownership`, undefined, w.owner), 400, 'ALREADY_OWNER');
      assert.equal(await roleOf(w.owner.membershipId), 'owner');
      assert.equal((await owners(w.team.id)).length, 1);
    });

    test('an admin who is not the owner gets 403; other teams 404', async () => {
      const w = await f.world();
      assertError(await api.post(`/admin/members/${w.member.membershipId}/transfer-ownership`, undefined, w.admin), 403, 'FORBIDDEN');
      assertError(await api.post(`/admin/members/${w.admin.membershipId}/transfer-ownership`, undefined, w.admin), 403, 'FORBIDDEN');
      assertError(await api.post(`/admin/members/${w.member.membershipId}/transfer-ownership`, undefined, w.otherOwner), 404, 'NOT_FOUND');
      assertError(
        await api.post(`/admin/members/${w.member.membershipId}/transfer-ownership`, undefined, keyCred(w.key.token)),
        403,
        'FORBIDDEN',
      );
      assert.deepEqual(
        (await owners(w.team.id)).map((r) => r.user_id),
        [w.owner.id],
      );
    });

    test('a hub admin may transfer ownership', async () => {
      const w = await f.world();
      const res = await api.post(`/admin/members/${w.admin.membershipId}/transfer-ownership`, undefined, w.hubAdmin);
      assert.equal(res.status, 200, res.text);
      assert.equal(await roleOf(w.admin.membershipId), 'owner');
      assert.equal(await roleOf(w.owner.membershipId), 'admin');
      assert.deepEqual(
        (await owners(w.team.id)).map((r) => r.user_id),
        [w.admin.id],
      );
      const [entry] = await audits('admin.ownership_transferred', w.admin.membershipId);
      assert.equal(entry.actor_user_id, w.hubAdmin.id);
      assert.equal(entry.tenant_id, w.team.id);
    });
  });

  describe('keys on person-only team routes', () => {
    test('an admin-role API key is refused (403) on invites, role changes, removal and ownership transfer; nothing changes', async () => {
      const w = await f.world();
      const adminKey = keyCred((await f.apiKey(w.team, w.owner, 'admin')).token);
      const invite = await api.post('/auth/invites', { tenantId: w.team.id, role: 'member' }, w.admin);
      assert.equal(invite.status, 201, invite.text);
      const calls: Array<[string, string, unknown?]> = [
        ['POST', '/auth/invites', { tenantId: w.team.id, role: 'viewer' }],
        ['DELETE', `/auth/invites/${invite.body.id}`],
        ['PUT', `/admin/members/${w.viewer.membershipId}/role`, { role: 'member' }],
        ['DELETE', `/admin/members/${w.viewer.membershipId}`],
        ['POST', `/admin/members/${w.member.membershipId}/transfer-ownership`],
      ];
      for (const [method, path, body] of calls) {
        assertError(await api.call(method, path, { body, as: adminKey }), 403, 'FORBIDDEN');
      }
      // The same key reads what Admin+ may read.
      assert.equal((await api.get(`/auth/members?tenantId=${w.team.id}`, adminKey)).status, 200);
      assert.equal((await api.get(`/auth/invites?tenantId=${w.team.id}`, adminKey)).status, 200);
      assert.equal((await hub.sql.query('SELECT 1 FROM invites WHERE tenant_id = $1', [w.team.id])).length, 1);
      assert.equal(
        (await hub.sql.one<{ revoked_at: Date | null }>('SELECT revoked_at FROM invites WHERE id = $1', [invite.body.id])).revoked_at,
        null,
      );
      assert.equal(await roleOf(w.viewer.membershipId), 'viewer');
      assert.deepEqual(
        (await owners(w.team.id)).map((r) => r.user_id),
        [w.owner.id],
      );
    });
  });

  describe('GET /audit-log (team activity)', () => {
    interface Entry {
      id: number;
      at: string;
      action: string;
      tenantId: string | null;
      targetId: string | null;
      actorUserId: string | null;
      actorEmail: string | null;
      ip: string | null;
    }

    test("a team admin reads the team's own entries only, newest first, paged and filtered like /admin/audit-log, same row shape", async () => {
      const w = await f.world();
      const mine = await api.post(
        '/auth/invites',
        { tenantId: w.team.id, role: 'member' },
        { token: w.admin.token, headers: { 'x-forwarded-for': '203.0.113.9' } },
      );
      assert.equal(mine.status, 201, mine.text);
      hub.clock.advance(60_000);
      assert.equal((await api.put(`/admin/members/${w.viewer.membershipId}/role`, { role: 'member' }, w.owner)).status, 200);
      const theirs = await api.post('/auth/invites', { tenantId: w.otherTeam.id, role: 'member' }, w.otherOwner);
      assert.equal(theirs.status, 201, theirs.text);

      const feed = await api.get(`/audit-log?tenantId=${w.team.id}&limit=200`, w.admin);
      assert.equal(feed.status, 200, feed.text);
      const { n } = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1', [w.team.id]);
      assert.equal(feed.body.total, n);
      assert.ok(n >= 4, `team creation, key, invite, role change; got ${n}`);
      const entries = feed.body.entries as Entry[];
      assert.ok(
        entries.every((e) => e.tenantId === w.team.id),
        "only the team's entries",
      );
      assert.ok(!entries.some((e) => e.targetId === theirs.body.id), "another team's entries stay out");
      assert.equal(entries[0].action, 'admin.member_role_changed', 'newest first');
      const invited = entries.find((e) => e.targetId === mine.body.id)!;
      assert.deepEqual(
        { action: invited.action, actorUserId: invited.actorUserId, actorEmail: invited.actorEmail, ip: invited.ip },
        { action: 'admin.invite_created', actorUserId: w.admin.id, actorEmail: w.admin.email, ip: null },
      );
      assert.ok(
        entries.every((e) => e.ip === null),
        "a team's admins never see client IPs",
      );

      // The hub admin's log of the same team answers the very same rows, with their IPs.
      const hubView = await api.get(`/admin/audit-log?tenantId=${w.team.id}&limit=200`, w.hubAdmin);
      assert.deepEqual(feed.body, { ...hubView.body, entries: hubView.body.entries.map((e: Entry) => ({ ...e, ip: null })) });
      assert.equal(hubView.body.entries.find((e: Entry) => e.targetId === mine.body.id).ip, '203.0.113.9');
      const hubFeed = await api.get(`/audit-log?tenantId=${w.team.id}&limit=200`, w.hubAdmin);
      assert.deepEqual(hubFeed.body, hubView.body, 'a hub admin reading the team feed sees the IPs');

      const page = await api.get(`/audit-log?tenantId=${w.team.id}&limit=1&offset=1`, w.owner);
      assert.deepEqual({ total: page.body.total, limit: page.body.limit, offset: page.body.offset }, { total: n, limit: 1, offset: 1 });
      assert.deepEqual(
        page.body.entries.map((e: Entry) => e.id),
        [entries[1].id],
      );
      const family = await api.get(`/audit-log?tenantId=${w.team.id}&action=admin.*&limit=200`, w.admin);
      assert.ok(family.body.total >= 3 && family.body.entries.every((e: Entry) => e.action.startsWith('admin.')));
      const byAction = await api.get(`/audit-log?tenantId=${w.team.id}&action=admin.invite_created`, w.admin);
      assert.deepEqual(
        byAction.body.entries.map((e: Entry) => e.targetId),
        [mine.body.id],
      );
      const byActor = await api.get(`/audit-log?tenantId=${w.team.id}&actorUserId=${w.otherOwner.id}`, w.admin);
      assert.deepEqual(byActor.body, { entries: [], total: 0, limit: 50, offset: 0 }, "another team's actor has no entries here");
    });

    test('members and viewers 403; another team, an unknown team 404; no team named 400; keys by their role', async () => {
      const w = await f.world();
      const path = `/audit-log?tenantId=${w.team.id}`;
      assertError(await api.get(path, w.member), 403, 'FORBIDDEN');
      assertError(await api.get(path, w.viewer), 403, 'FORBIDDEN');
      assertError(await api.get(path, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.get(`/audit-log?tenantId=${crypto.randomUUID()}`, w.admin), 404, 'NOT_FOUND');
      assertError(await api.get('/audit-log', w.admin), 400, 'TENANT_REQUIRED');
      assertError(await api.get(path), 401, 'UNAUTHENTICATED');
      assertError(await api.get(`${path}&colour=red`, w.admin), 400, 'VALIDATION_FAILED');
      assertError(await api.get(path, keyCred(w.key.token)), 403, 'FORBIDDEN');
      const adminKey = keyCred((await f.apiKey(w.team, w.owner, 'admin')).token);
      const viaKey = await api.get('/audit-log', adminKey);
      assert.equal(viaKey.status, 200, viaKey.text);
      assert.ok(
        viaKey.body.entries.every((e: Entry) => e.tenantId === w.team.id),
        "a key reads its own team's entries",
      );
      assertError(await api.get(`/audit-log?tenantId=${w.otherTeam.id}`, adminKey), 404, 'NOT_FOUND');
    });
  });

  describe('team API keys', () => {
    test('an admin creates a key: shown once, stored hashed, audited admin.api_key_created', async () => {
      const w = await f.world();
      const res = await api.post('/auth/api-keys', { tenantId: w.team.id, name: 'weather station', role: 'viewer' }, w.admin);
      assert.equal(res.status, 201, res.text);
      const { id, key, prefix } = res.body;
      assert.match(key, /^[0-9a-f]{64}$/);
      assert.equal(prefix, key.slice(0, 8));
      assert.equal(res.body.role, 'viewer');
      assert.equal(res.body.tenantId, w.team.id);

      const row = await hub.sql.one<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [id]);
      assert.equal(row.key_hash, sha256(key));
      assert.equal(row.key_prefix, prefix);
      assert.equal(row.created_by, w.admin.id);
      assert.ok(!JSON.stringify(row).includes(key), 'raw key stored');

      const [entry] = await audits('admin.api_key_created', id);
      assert.equal(entry.actor_user_id, w.admin.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual(entry.details, { name: 'weather station', role: 'viewer' });

      const list = await api.get(`/auth/api-keys?tenantId=${w.team.id}`, w.admin);
      assert.equal(list.status, 200, list.text);
      const listed = list.body.apiKeys.find((k: { id: string }) => k.id === id);
      assert.equal(listed.prefix, prefix);
      assert.equal(listed.name, 'weather station');
      for (const k of list.body.apiKeys) assert.ok(!('key' in k) && !('keyHash' in k), JSON.stringify(k));
      assert.ok(!list.text.includes(key) && !list.text.includes(sha256(key)));

      const viaKey = await api.get('/tenants', keyCred(key));
      assert.deepEqual(
        viaKey.body.tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
        [[w.team.id, 'viewer']],
      );
    });

    test('a revoked key answers 401 at once and leaves the list', async () => {
      const w = await f.world();
      const key = await f.apiKey(w.team, w.admin, 'member');
      assert.equal((await api.get('/auth/me', keyCred(key.token))).status, 200);
      assertError(await api.del(`/auth/api-keys/${key.id}`, w.member), 403, 'FORBIDDEN');
      assertError(await api.del(`/auth/api-keys/${key.id}`, w.otherOwner), 404, 'NOT_FOUND');

      const res = await api.del(`/auth/api-keys/${key.id}`, w.owner);
      assert.equal(res.status, 204, res.text);
      assertError(await api.get('/auth/me', keyCred(key.token)), 401, 'UNAUTHENTICATED');
      const list = await api.get(`/auth/api-keys?tenantId=${w.team.id}`, w.owner);
      assert.ok(!list.body.apiKeys.some((k: { id: string }) => k.id === key.id));
      assertError(await api.del(`/auth/api-keys/${key.id}`, w.owner), 404, 'NOT_FOUND');
    });

    test('viewers, members and keys cannot manage keys (403)', async () => {
      const w = await f.world();
      const body = { tenantId: w.team.id, name: 'nope', role: 'viewer' };
      for (const who of [w.viewer, w.member, keyCred(w.key.token)]) {
        assertError(await api.post('/auth/api-keys', body, who), 403, 'FORBIDDEN');
        assertError(await api.get(`/auth/api-keys?tenantId=${w.team.id}`, who), 403, 'FORBIDDEN');
      }
      assertError(await api.post('/auth/api-keys', body, w.otherOwner), 404, 'NOT_FOUND');
      const { n } = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1', [w.team.id]);
      assert.equal(n, 1, 'only the world key exists');
    });

    test('a key never holds more than its creator: no owner keys, and a key acts with its own role only in its team', async () => {
      const w = await f.world();
      assertError(
        await api.post('/auth/api-keys', { tenantId: w.team.id, name: 'boss', role: 'owner' }, w.owner),
        400,
        'VALIDATION_FAILED',
      );

      const adminKey = await f.apiKey(w.team, w.admin, 'admin');
      const memberKey = await f.apiKey(w.team, w.admin, 'member');
      assert.equal((await api.get('/auth/members', keyCred(adminKey.token))).status, 200);
      assertError(await api.get('/auth/members', keyCred(memberKey.token)), 403, 'FORBIDDEN');
      assertError(await api.get(`/auth/members?tenantId=${w.otherTeam.id}`, keyCred(adminKey.token)), 404, 'NOT_FOUND');
      // Keys never act as people, whatever their role.
      assertError(await api.post('/auth/invites', { tenantId: w.team.id, role: 'viewer' }, keyCred(adminKey.token)), 403, 'FORBIDDEN');
    });

    test('expiresAt must lie ahead; the key stops answering once it passes', async () => {
      const w = await f.world();
      const past = new Date(hub.clock.now().getTime() - 60_000).toISOString();
      assertError(
        await api.post('/auth/api-keys', { tenantId: w.team.id, name: 'old', role: 'viewer', expiresAt: past }, w.admin),
        400,
        'VALIDATION_FAILED',
      );

      const soon = new Date(hub.clock.now().getTime() + 3600_000).toISOString();
      const res = await api.post('/auth/api-keys', { tenantId: w.team.id, name: 'brief', role: 'viewer', expiresAt: soon }, w.admin);
      assert.equal(res.status, 201, res.text);
      assert.equal((await api.get('/tenants', keyCred(res.body.key))).status, 200);
      hub.clock.advance(3600_000 + 1000);
      assertError(await api.get('/tenants', keyCred(res.body.key)), 401, 'UNAUTHENTICATED');
    });

    test('a key acts with at most its creator’s current role: demoted with them, stopped when they are blocked or leave', async () => {
      const w = await f.world();
      const key = await f.apiKey(w.team, w.admin, 'admin');
      const channel = (name: string) =>
        api.post(
          '/alert-rules/channels',
          { tenantId: w.team.id, type: 'email', name, config: { addresses: ['a@example.org'] } },
          keyCred(key.token),
        );
      assert.equal((await channel('before')).status, 201);

      assert.equal((await api.put(`/admin/members/${w.admin.membershipId}/role`, { role: 'viewer' }, w.owner)).status, 200);
      assertError(await channel('after demotion'), 403, 'FORBIDDEN');
      assert.equal((await api.get(`/detections?tenantId=${w.team.id}`, keyCred(key.token))).status, 200, 'still reads as a viewer');
      const viaKey = await api.get('/tenants', keyCred(key.token));
      assert.deepEqual(
        viaKey.body.tenants.map((t: { role: string }) => t.role),
        ['viewer'],
      );
      const listed = (await api.get(`/auth/api-keys?tenantId=${w.team.id}`, w.owner)).body.apiKeys.find(
        (k: { id: string }) => k.id === key.id,
      );
      assert.deepEqual([listed.role, listed.effectiveRole], ['admin', 'viewer'], 'the list shows both');

      assert.equal((await api.put(`/admin/members/${w.admin.membershipId}/role`, { role: 'admin' }, w.owner)).status, 200);
      assert.equal((await channel('promoted again')).status, 201, 'the cap follows the creator back up, never above the key');

      assert.equal((await api.post(`/admin/users/${w.admin.id}/block`, undefined, w.hubAdmin)).status, 200);
      assertError(await api.get('/tenants', keyCred(key.token)), 401, 'UNAUTHENTICATED');
      const blocked = (await api.get(`/auth/api-keys?tenantId=${w.team.id}`, w.owner)).body.apiKeys.find(
        (k: { id: string }) => k.id === key.id,
      );
      assert.equal(blocked.effectiveRole, null);
      assert.equal((await api.post(`/admin/users/${w.admin.id}/block`, undefined, w.hubAdmin)).status, 200, 'unblocked');
      assert.equal((await api.get('/tenants', keyCred(key.token))).status, 200);

      assert.equal((await api.del(`/admin/members/${w.admin.membershipId}`, w.owner)).status, 204);
      assertError(await api.get('/tenants', keyCred(key.token)), 401, 'UNAUTHENTICATED');
    });
  });
});
