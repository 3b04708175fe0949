/**
 * Hub admin endpoints over HTTP (spec §4 "Hub admin endpoints", §3 account block, §5 guard,
 * §6 audit events, §7 errors): the user list and detail, edits, blocking, password resets,
 * erasure, team membership by a hub admin, and the audit log.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, PASSWORD } from './helpers/factories.ts';
import { client, type Credential, type Res, assertError } from './helpers/http.ts';
import { checkBrokerLogin } from './helpers/broker-login.ts';

const uniq = () => crypto.randomBytes(4).toString('hex');

interface AuditRow {
  action: string;
  actor_user_id: string | null;
  actor_email: string | null;
  ip: string | null;
  tenant_id: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
}

interface UserEntry {
  id: string;
  email: string;
  name: string;
  status: string;
  tenants: { id: string; role: string }[];
}

let ipCounter = 0;
/** Login is limited per IP: every sign-in over HTTP comes from its own forwarded address. */
const freshIp = () => `198.51.${Math.floor(++ipCounter / 250)}.${(ipCounter % 250) + 1}`;

describe('hub admin endpoints', () => {
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

  const userRow = (id: string) =>
    hub.sql.maybeOne<{
      name: string;
      email: string;
      is_admin: boolean;
      status: string;
      failed_login_attempts: number;
      locked_until: Date | null;
    }>('SELECT name, email, is_admin, status, failed_login_attempts, locked_until FROM users WHERE id = $1', [id]);

  const membershipOf = (tenantId: string, userId: string) =>
    hub.sql.maybeOne<{ id: string; role: string }>('SELECT id, role FROM memberships WHERE tenant_id = $1 AND user_id = $2', [
      tenantId,
      userId,
    ]);

  const login = (email: string, password: string, ip: string) =>
    api.call('POST', '/auth/login?returnToken=true', { body: { email, password }, headers: { 'x-forwarded-for': ip } });

  const ids = (res: Res) => res.body.users.map((u: UserEntry) => u.id).sort();

  describe('GET /admin/users', () => {
    test('?search matches name or email, case-insensitively, with % taken literally', async () => {
      const hubAdmin = await f.user({ admin: true });
      const u = uniq();
      const kestrel = await f.user({ name: `Kestrel ${u}`, email: `k-${u}@example.org` });
      const kite = await f.user({ name: `Plain ${u}`, email: `KITE-${u}@Example.org` });
      await f.user({ name: 'Robin', email: `robin-${uniq()}@example.org` });

      const byName = await api.get(`/admin/users?search=${encodeURIComponent(`kESTREL ${u}`)}`, hubAdmin);
      assert.equal(byName.status, 200, byName.text);
      assert.deepEqual(ids(byName), [kestrel.id]);
      assert.equal(byName.body.total, 1);

      const byEmail = await api.get(`/admin/users?search=${encodeURIComponent(`kite-${u}@EXAMPLE`)}`, hubAdmin);
      assert.deepEqual(ids(byEmail), [kite.id]);

      const both = await api.get(`/admin/users?search=${u}`, hubAdmin);
      assert.deepEqual(ids(both), [kestrel.id, kite.id].sort());
      assert.equal(both.body.total, 2);

      const pct = await f.user({ name: `pct-${u}%x` });
      await f.user({ name: `pct-${u}zx` });
      const literal = await api.get(`/admin/users?search=${encodeURIComponent(`pct-${u}%`)}`, hubAdmin);
      assert.deepEqual(ids(literal), [pct.id]);

      const none = await api.get(`/admin/users?search=nobody-${uniq()}`, hubAdmin);
      assert.deepEqual(none.body.users, []);
      assert.equal(none.body.total, 0);
    });

    test('?tenantId lists the team members with their teams; ?status=blocked only blocked accounts', async () => {
      const w = await f.world();
      const team = await api.get(`/admin/users?tenantId=${w.team.id}`, w.hubAdmin);
      assert.equal(team.status, 200, team.text);
      assert.deepEqual(ids(team), [w.owner.id, w.admin.id, w.member.id, w.viewer.id].sort());
      const mel = team.body.users.find((u: UserEntry) => u.id === w.member.id);
      assert.equal(mel.email, w.member.email);
      assert.equal(mel.status, 'active');
      assert.deepEqual(
        mel.tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
        [[w.team.id, 'member']],
      );

      assert.equal((await api.post(`/admin/users/${w.member.id}/block`, undefined, w.hubAdmin)).status, 200);
      const blocked = await api.get(`/admin/users?status=blocked&tenantId=${w.team.id}`, w.hubAdmin);
      assert.deepEqual(ids(blocked), [w.member.id]);
      assert.equal(blocked.body.users[0].status, 'blocked');
      const active = await api.get(`/admin/users?status=active&tenantId=${w.team.id}`, w.hubAdmin);
      assert.deepEqual(ids(active), [w.owner.id, w.admin.id, w.viewer.id].sort());

      const everyBlocked = await api.get('/admin/users?status=blocked', w.hubAdmin);
      assert.ok(everyBlocked.body.users.every((u: UserEntry) => u.status === 'blocked'));
      const { n } = await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE status = 'blocked'`);
      assert.equal(everyBlocked.body.total, n);

      assertError(await api.get('/admin/users?status=gone', w.hubAdmin), 400, 'VALIDATION_FAILED');
    });

    test('limit and offset page through the list; total counts every match', async () => {
      const w = await f.world();
      const q = `/admin/users?tenantId=${w.team.id}`;
      const p1 = await api.get(`${q}&limit=2&offset=0`, w.hubAdmin);
      const p2 = await api.get(`${q}&limit=2&offset=2`, w.hubAdmin);
      const p3 = await api.get(`${q}&limit=2&offset=4`, w.hubAdmin);
      assert.equal(p1.status, 200, p1.text);
      assert.equal(p1.body.users.length, 2);
      assert.equal(p2.body.users.length, 2);
      assert.deepEqual(p3.body.users, []);
      for (const p of [p1, p2, p3]) assert.equal(p.body.total, 4);
      assert.equal(p2.body.limit, 2);
      assert.equal(p2.body.offset, 2);
      const seen = [...ids(p1), ...ids(p2)].sort();
      assert.deepEqual(seen, [w.owner.id, w.admin.id, w.member.id, w.viewer.id].sort());

      const all = await api.get('/admin/users?limit=200', w.hubAdmin);
      const { n } = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM users');
      assert.equal(all.body.total, n);

      assertError(await api.get('/admin/users?limit=0', w.hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.get('/admin/users?limit=201', w.hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.get('/admin/users?offset=-1', w.hubAdmin), 400, 'VALIDATION_FAILED');
    });
  });

  describe('GET /admin/users/:id', () => {
    test('returns one user with teams and lock state; unknown ids answer 404', async () => {
      const w = await f.world();
      const res = await api.get(`/admin/users/${w.member.id}`, w.hubAdmin);
      assert.equal(res.status, 200, res.text);
      const u = res.body.user;
      assert.equal(u.id, w.member.id);
      assert.equal(u.email, w.member.email);
      assert.equal(u.name, 'Mel Member');
      assert.equal(u.isAdmin, false);
      assert.equal(u.status, 'active');
      assert.equal(u.failedLoginAttempts, 0);
      assert.equal(u.lockedUntil, null);
      assert.deepEqual(u.tenants, [{ id: w.team.id, name: w.team.name, slug: w.team.slug, role: 'member' }]);
      assert.ok(!('passwordHash' in u) && !res.text.includes('argon2'), 'no password hash');

      assertError(await api.get(`/admin/users/${crypto.randomUUID()}`, w.hubAdmin), 404, 'NOT_FOUND');
      assertError(await api.get('/admin/users/not-a-uuid', w.hubAdmin), 400, 'VALIDATION_FAILED');
    });
  });

  describe('PUT /admin/users/:id', () => {
    test('edits name and email, audited admin.user_edited', async () => {
      const hubAdmin = await f.user({ admin: true });
      const person = await f.user();
      const email = `renamed-${uniq()}@example.org`;
      const res = await api.put(`/admin/users/${person.id}`, { name: 'Renamed Person', email }, hubAdmin);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user.name, 'Renamed Person');
      assert.equal(res.body.user.email, email);
      const row = await userRow(person.id);
      assert.equal(row?.name, 'Renamed Person');
      assert.equal(row?.email, email);

      const [entry] = await audits('admin.user_edited', person.id);
      assert.equal(entry.actor_user_id, hubAdmin.id);
      assert.equal(entry.tenant_id, null);
      assert.deepEqual((entry.details.fields as string[]).sort(), ['email', 'name']);
    });

    test('an email another account holds answers 409 EMAIL_TAKEN; unknown fields and empty bodies 400', async () => {
      const hubAdmin = await f.user({ admin: true });
      const person = await f.user();
      const other = await f.user();
      assertError(await api.put(`/admin/users/${person.id}`, { email: other.email.toUpperCase() }, hubAdmin), 409, 'EMAIL_TAKEN');
      assertError(await api.put(`/admin/users/${person.id}`, { name: 'X', nickname: 'x' }, hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.put(`/admin/users/${person.id}`, { status: 'blocked' }, hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.put(`/admin/users/${person.id}`, {}, hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.put(`/admin/users/${person.id}`, { email: 'not an email' }, hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.put(`/admin/users/${person.id}`, { isAdmin: 'yes' }, hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.put(`/admin/users/${crypto.randomUUID()}`, { name: 'Ghost' }, hubAdmin), 404, 'NOT_FOUND');
      const row = await userRow(person.id);
      assert.equal(row?.email, person.email);
      assert.equal(row?.name, person.name);
      assert.equal(row?.is_admin, false);
      assert.equal((await audits('admin.user_edited', person.id)).length, 0);
    });

    test('the admin flag takes effect on the next request, whatever the token says', async () => {
      const hubAdmin = await f.user({ admin: true });
      const person = await f.user();
      assertError(await api.get('/admin/users', person), 403, 'FORBIDDEN');

      const grant = await api.put(`/admin/users/${person.id}`, { isAdmin: true }, hubAdmin);
      assert.equal(grant.status, 200, grant.text);
      assert.equal(grant.body.user.isAdmin, true);
      assert.equal((await api.get('/admin/users', person)).status, 200);
      const [entry] = await audits('admin.user_edited', person.id);
      assert.equal(entry.details.isAdmin, true);

      assert.equal((await api.put(`/admin/users/${person.id}`, { isAdmin: false }, hubAdmin)).status, 200);
      assertError(await api.get('/admin/users', person), 403, 'FORBIDDEN');
      assert.equal((await userRow(person.id))?.is_admin, false);
    });
  });

  describe('POST /admin/users/:id/block', () => {
    test('blocks and unblocks in turn, audited admin.user_blocked and admin.user_unblocked', async () => {
      const w = await f.world();
      const key = await f.apiKey(w.team, w.admin, 'viewer');
      const ip = freshIp();

      const blocked = await api.post(`/admin/users/${w.admin.id}/block`, undefined, w.hubAdmin);
      assert.equal(blocked.status, 200, blocked.text);
      assert.deepEqual(blocked.body, { id: w.admin.id, status: 'blocked' });
      assert.equal((await userRow(w.admin.id))?.status, 'blocked');
      const [b] = await audits('admin.user_blocked', w.admin.id);
      assert.equal(b.actor_user_id, w.hubAdmin.id);
      assertError(await api.get('/auth/me', w.admin), 401, 'UNAUTHENTICATED');
      assertError(await api.get('/auth/me', keyCred(key.token)), 401, 'UNAUTHENTICATED');
      assertError(await login(w.admin.email, PASSWORD, ip), 403, 'ACCOUNT_BLOCKED');

      const unblocked = await api.post(`/admin/users/${w.admin.id}/block`, undefined, w.hubAdmin);
      assert.equal(unblocked.status, 200, unblocked.text);
      assert.deepEqual(unblocked.body, { id: w.admin.id, status: 'active' });
      assert.equal((await userRow(w.admin.id))?.status, 'active');
      const [ub] = await audits('admin.user_unblocked', w.admin.id);
      assert.equal(ub.actor_user_id, w.hubAdmin.id);
      // Blocking ended the old sessions for good; signing in again works.
      assertError(await api.get('/auth/me', w.admin), 401, 'UNAUTHENTICATED');
      const again = await login(w.admin.email, PASSWORD, ip);
      assert.equal(again.status, 200, again.text);
      assert.equal((await api.get('/auth/me', { token: again.body.token })).status, 200);
    });

    test('a hub admin cannot be blocked (403), nor can one block oneself', async () => {
      const hubAdmin = await f.user({ admin: true });
      const other = await f.user({ admin: true });
      assertError(await api.post(`/admin/users/${other.id}/block`, undefined, hubAdmin), 403, 'HUB_ADMIN_NOT_BLOCKABLE');
      assert.equal((await userRow(other.id))?.status, 'active');
      const self = await api.post(`/admin/users/${hubAdmin.id}/block`, undefined, hubAdmin);
      assert.equal(self.status, 400, self.text);
      assert.equal((await userRow(hubAdmin.id))?.status, 'active');
      assertError(await api.post(`/admin/users/${crypto.randomUUID()}/block`, undefined, hubAdmin), 404, 'NOT_FOUND');
      assert.equal((await audits('admin.user_blocked', other.id)).length, 0);
    });
  });

  describe('POST /admin/users/:id/reset-password', () => {
    test('with a password: sets it, ends sessions, audited admin.password_reset without the password', async () => {
      const hubAdmin = await f.user({ admin: true });
      const person = await f.user();
      const chosen = `chosen-${uniq()}-password`;
      const res = await api.post(`/admin/users/${person.id}/reset-password`, { password: chosen }, hubAdmin);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { id: person.id });

      assertError(await api.get('/auth/me', person), 401, 'UNAUTHENTICATED');
      const ip = freshIp();
      assertError(await login(person.email, PASSWORD, ip), 401, 'INVALID_CREDENTIALS');
      assert.equal((await login(person.email, chosen, ip)).status, 200);

      const [entry] = await audits('admin.password_reset', person.id);
      assert.equal(entry.actor_user_id, hubAdmin.id);
      assert.ok(!JSON.stringify(entry).includes(chosen));

      assertError(await api.post(`/admin/users/${person.id}/reset-password`, { password: 'short' }, hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(
        await api.post(`/admin/users/${person.id}/reset-password`, { password: chosen, extra: 1 }, hubAdmin),
        400,
        'VALIDATION_FAILED',
      );
      assertError(await api.post(`/admin/users/${crypto.randomUUID()}/reset-password`, undefined, hubAdmin), 404, 'NOT_FOUND');
    });

    test('without a password: a temporary one is returned once; it signs in and the lock is cleared', async () => {
      const hubAdmin = await f.user({ admin: true });
      const person = await f.user();
      const ip = freshIp();
      for (let i = 0; i < 5; i++) assertError(await login(person.email, 'wrong-password-here', ip), 401, 'INVALID_CREDENTIALS');
      assertError(await login(person.email, PASSWORD, ip), 423, 'ACCOUNT_LOCKED');
      assert.ok((await userRow(person.id))?.locked_until);

      const res = await api.post(`/admin/users/${person.id}/reset-password`, undefined, hubAdmin);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.id, person.id);
      const temporary: string = res.body.temporaryPassword;
      assert.equal(typeof temporary, 'string');
      assert.ok(temporary.length >= 10, temporary);

      const row = await userRow(person.id);
      assert.equal(row?.locked_until, null);
      assert.equal(row?.failed_login_attempts, 0);
      assertError(await api.get('/auth/me', person), 401, 'UNAUTHENTICATED');
      assert.ok(!JSON.stringify(await audits('admin.password_reset', person.id)).includes(temporary));

      const signedIn = await login(person.email, temporary, ip);
      assert.equal(signedIn.status, 200, signedIn.text);
      assert.equal((await api.get('/auth/me', { token: signedIn.body.token })).body.user.id, person.id);

      const second = await api.post(`/admin/users/${person.id}/reset-password`, {}, hubAdmin);
      assert.equal(second.status, 200, second.text);
      assert.notEqual(second.body.temporaryPassword, temporary);
      assertError(await login(person.email, temporary, ip), 401, 'INVALID_CREDENTIALS');
    });
  });

  describe('DELETE /admin/users/:id', () => {
    test("a team's sole owner answers 409 SOLE_OWNER; a hub admin 403; nothing is erased", async () => {
      const w = await f.world();
      assertError(await api.del(`/admin/users/${w.owner.id}`, w.hubAdmin), 409, 'SOLE_OWNER');
      assert.ok(await userRow(w.owner.id));
      assert.equal((await membershipOf(w.team.id, w.owner.id))?.role, 'owner');

      const otherAdmin = await f.user({ admin: true });
      const res = await api.del(`/admin/users/${otherAdmin.id}`, w.hubAdmin);
      assert.equal(res.status, 403, res.text);
      assert.ok(await userRow(otherAdmin.id));
      assertError(await api.del(`/admin/users/${crypto.randomUUID()}`, w.hubAdmin), 404, 'NOT_FOUND');
      assert.equal((await audits('admin.user_deleted', w.owner.id)).length, 0);
    });

    test('erases the person: row and memberships gone, their keys stop, the audit log forgets their email and IP', async () => {
      const w = await f.world();
      const target = w.admin;
      const key = await f.apiKey(w.team, target, 'viewer');
      const ip = freshIp();
      const signedIn = await login(target.email, PASSWORD, ip);
      assert.equal(signedIn.status, 200, signedIn.text);
      const before = await hub.sql.query<AuditRow>('SELECT actor_email, ip FROM audit_log WHERE actor_user_id = $1', [target.id]);
      assert.ok(
        before.some((r) => r.actor_email === target.email && r.ip === ip),
        'the login was audited with email and IP',
      );

      const res = await api.del(`/admin/users/${target.id}`, w.hubAdmin);
      assert.equal(res.status, 204, res.text);
      assert.equal(await userRow(target.id), null);
      assert.equal((await hub.sql.query('SELECT 1 FROM memberships WHERE user_id = $1', [target.id])).length, 0);

      const after = await hub.sql.query<AuditRow>('SELECT actor_email, ip FROM audit_log WHERE actor_user_id = $1', [target.id]);
      assert.equal(after.length, before.length);
      assert.ok(after.length >= 2);
      for (const r of after) {
        assert.equal(r.actor_email, null);
        assert.equal(r.ip, null);
      }
      const leftovers = await hub.sql.query('SELECT 1 FROM login_attempts WHERE lower(email) = lower($1)', [target.email]);
      assert.equal(leftovers.length, 0);

      const [entry] = await audits('admin.user_deleted', target.id);
      assert.equal(entry.actor_user_id, w.hubAdmin.id);
      assert.equal(entry.tenant_id, null);

      assertError(await api.get('/auth/me', keyCred(key.token)), 401, 'UNAUTHENTICATED');
      assertError(await api.get('/auth/me', { token: signedIn.body.token }), 401, 'UNAUTHENTICATED');
      assertError(await api.get(`/admin/users/${target.id}`, w.hubAdmin), 404, 'NOT_FOUND');
      assertError(await login(target.email, PASSWORD, ip), 401, 'INVALID_CREDENTIALS');
    });

    test('erasure also reaches rate-limited sign-ins typed with their email, and releases and disconnects their satellites', async () => {
      const w = await f.world();
      const target = w.member;
      const reg = await api.post('/satellites', { tenantId: w.team.id, name: 'Hedge' }, target);
      assert.equal(reg.status, 201, reg.text);
      const sat = reg.body;
      assert.equal((await api.get(`/satellites/${sat.id}`, w.admin)).body.registered_by, target.id);

      const ip = freshIp();
      for (let i = 0; i < 20; i++) assertError(await login(`filler-${i}@example.org`, 'whatever-password', ip), 401, 'INVALID_CREDENTIALS');
      assertError(await login(target.email, 'not-the-password', ip), 429, 'RATE_LIMITED');
      const limited = await hub.sql.query<AuditRow & { id: number }>(
        `SELECT id, actor_user_id, actor_email, ip FROM audit_log WHERE action = 'user.login_failed' AND details->>'reason' = 'rate_limited' AND ip = $1`,
        [ip],
      );
      assert.equal(limited.length, 1);
      assert.equal(limited[0].actor_user_id, null);
      assert.equal(limited[0].actor_email, target.email);

      assert.equal((await api.del(`/admin/users/${target.id}`, w.hubAdmin)).status, 204);

      const [scrubbed] = await hub.sql.query<AuditRow>('SELECT actor_email, ip FROM audit_log WHERE id = $1', [limited[0].id]);
      assert.deepEqual({ email: scrubbed.actor_email, ip: scrubbed.ip }, { email: null, ip: null });
      const anywhere = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE lower(actor_email) = lower($1)', [
        target.email,
      ]);
      assert.equal(anywhere.n, 0);

      const after = await api.get(`/satellites/${sat.id}`, w.admin);
      assert.equal(after.status, 200, after.text);
      assert.equal(after.body.registered_by, null);
      assertError(await api.patch(`/satellites/${sat.id}`, { name: 'x' }, { token: sat.apiKey }), 401, 'UNAUTHENTICATED');
      assert.equal(await checkBrokerLogin(hub, sat.id, sat.mqtt.password), null);
    });
  });

  describe('POST /admin/users/:id/tenants', () => {
    test('adds a person to a team (201), audited admin.user_added_to_tenant; a second time 409 ALREADY_MEMBER', async () => {
      const w = await f.world();
      const person = await f.user();
      const res = await api.post(`/admin/users/${person.id}/tenants`, { tenantId: w.team.id, role: 'member' }, w.hubAdmin);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.membership.tenantId, w.team.id);
      assert.equal(res.body.membership.userId, person.id);
      assert.equal(res.body.membership.role, 'member');
      assert.deepEqual(await membershipOf(w.team.id, person.id), { id: res.body.membership.id, role: 'member' });

      const [entry] = await audits('admin.user_added_to_tenant', person.id);
      assert.equal(entry.actor_user_id, w.hubAdmin.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.deepEqual(entry.details, { role: 'member' });

      assertError(
        await api.post(`/admin/users/${person.id}/tenants`, { tenantId: w.team.id, role: 'admin' }, w.hubAdmin),
        409,
        'ALREADY_MEMBER',
      );
      assert.equal((await membershipOf(w.team.id, person.id))?.role, 'member');
      assertError(
        await api.post(`/admin/users/${person.id}/tenants`, { tenantId: crypto.randomUUID(), role: 'member' }, w.hubAdmin),
        404,
        'NOT_FOUND',
      );
      assertError(
        await api.post(`/admin/users/${crypto.randomUUID()}/tenants`, { tenantId: w.team.id, role: 'member' }, w.hubAdmin),
        404,
        'NOT_FOUND',
      );
      assertError(
        await api.post(`/admin/users/${person.id}/tenants`, { tenantId: w.otherTeam.id, role: 'boss' }, w.hubAdmin),
        400,
        'VALIDATION_FAILED',
      );
    });

    test('owner only for a team without one: 409 TEAM_HAS_OWNER otherwise', async () => {
      const w = await f.world();
      const person = await f.user();
      assertError(
        await api.post(`/admin/users/${person.id}/tenants`, { tenantId: w.team.id, role: 'owner' }, w.hubAdmin),
        409,
        'TEAM_HAS_OWNER',
      );
      assert.equal(await membershipOf(w.team.id, person.id), null);

      await hub.sql.query('DELETE FROM memberships WHERE id = $1', [w.owner.membershipId]);
      const res = await api.post(`/admin/users/${person.id}/tenants`, { tenantId: w.team.id, role: 'owner' }, w.hubAdmin);
      assert.equal(res.status, 201, res.text);
      const owners = await hub.sql.query<{ user_id: string }>(`SELECT user_id FROM memberships WHERE tenant_id = $1 AND role = 'owner'`, [
        w.team.id,
      ]);
      assert.deepEqual(
        owners.map((o) => o.user_id),
        [person.id],
      );
    });
  });

  describe('DELETE /admin/users/:id/tenants/:tid', () => {
    test('removes a person from a team; devices default to disconnect, ?devices=keep keeps them', async () => {
      const w = await f.world();
      const key = await f.apiKey(w.team, w.admin, 'viewer');

      const res = await api.del(`/admin/users/${w.admin.id}/tenants/${w.team.id}`, w.hubAdmin);
      assert.equal(res.status, 204, res.text);
      assert.equal(await membershipOf(w.team.id, w.admin.id), null);
      const [entry] = await audits('admin.user_removed_from_tenant', w.admin.id);
      assert.equal(entry.actor_user_id, w.hubAdmin.id);
      assert.equal(entry.tenant_id, w.team.id);
      assert.equal(entry.details.devices, 'disconnect');
      assertError(await api.get('/auth/me', keyCred(key.token)), 401, 'UNAUTHENTICATED');

      const keep = await api.del(`/admin/users/${w.viewer.id}/tenants/${w.team.id}?devices=keep`, w.hubAdmin);
      assert.equal(keep.status, 204, keep.text);
      assert.equal(await membershipOf(w.team.id, w.viewer.id), null);
      const [kept] = await audits('admin.user_removed_from_tenant', w.viewer.id);
      assert.equal(kept.details.devices, 'keep');

      assertError(await api.del(`/admin/users/${w.admin.id}/tenants/${w.team.id}`, w.hubAdmin), 404, 'NOT_A_MEMBER');
      assertError(await api.del(`/admin/users/${w.member.id}/tenants/${w.team.id}?devices=later`, w.hubAdmin), 400, 'VALIDATION_FAILED');
      assert.equal((await membershipOf(w.team.id, w.member.id))?.role, 'member');
    });

    test('the owner cannot be removed (400 OWNER_NOT_REMOVABLE)', async () => {
      const w = await f.world();
      assertError(await api.del(`/admin/users/${w.owner.id}/tenants/${w.team.id}`, w.hubAdmin), 400, 'OWNER_NOT_REMOVABLE');
      assert.equal((await membershipOf(w.team.id, w.owner.id))?.role, 'owner');
      assert.equal((await audits('admin.user_removed_from_tenant', w.owner.id)).length, 0);
    });
  });

  test('people who are not hub admins get 403 on every hub admin endpoint, keys too; nobody signed in 401', async () => {
    const w = await f.world();
    const t = w.member.id;
    const calls: [string, string, unknown?][] = [
      ['GET', '/admin/users'],
      ['GET', `/admin/users/${t}`],
      ['PUT', `/admin/users/${t}`, { name: 'Hijacked' }],
      ['POST', `/admin/users/${t}/block`],
      ['POST', `/admin/users/${t}/reset-password`, { password: 'hijacked-password' }],
      ['DELETE', `/admin/users/${t}`],
      ['POST', `/admin/users/${t}/tenants`, { tenantId: w.otherTeam.id, role: 'member' }],
      ['DELETE', `/admin/users/${t}/tenants/${w.team.id}`],
      ['GET', '/admin/audit-log'],
    ];
    const adminKey = await f.apiKey(w.team, w.owner, 'admin');
    for (const [method, path, body] of calls) {
      for (const who of [w.owner, w.admin, w.member, w.otherOwner, keyCred(adminKey.token)]) {
        const res = await api.call(method, path, { body, as: who });
        assert.equal(res.status, 403, `${method} ${path}: ${res.status} ${res.text}`);
        assert.equal(res.body.error.code, 'FORBIDDEN');
      }
      const anon = await api.call(method, path, { body });
      assert.equal(anon.status, 401, `${method} ${path} anonymous: ${anon.status}`);
    }
    const row = await userRow(t);
    assert.equal(row?.name, 'Mel Member');
    assert.equal(row?.status, 'active');
    assert.equal((await membershipOf(w.team.id, t))?.role, 'member');
    assert.equal(await membershipOf(w.otherTeam.id, t), null);
    assert.equal((await api.get('/auth/me', w.member)).status, 200, 'no reset ended the session');
  });

  describe('GET /admin/audit-log', () => {
    test('newest first, paginated with total, filtered by team, action, actor and time; entries carry actor, IP and team', async () => {
      const w = await f.world();
      const viaProxy: Credential = { token: w.admin.token, headers: { 'x-forwarded-for': '203.0.113.77' } };

      const a = await api.post('/auth/invites', { tenantId: w.team.id, role: 'member' }, viaProxy);
      assert.equal(a.status, 201, a.text);
      hub.clock.advance(60_000);
      const t1 = hub.clock.now();
      assert.equal((await api.put(`/admin/members/${w.viewer.membershipId}/role`, { role: 'member' }, w.owner)).status, 200);
      hub.clock.advance(60_000);
      const t2 = hub.clock.now();
      const c = await api.post('/auth/invites', { tenantId: w.team.id, role: 'viewer' }, w.owner);
      assert.equal(c.status, 201, c.text);

      const log = (q: string) => api.get(`/admin/audit-log?tenantId=${w.team.id}${q}`, w.hubAdmin);
      const full = await log('&limit=200');
      assert.equal(full.status, 200, full.text);
      const { n } = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1', [w.team.id]);
      assert.equal(full.body.total, n);
      assert.equal(full.body.entries.length, n);
      assert.ok(n >= 5, `world and three actions, got ${n}`);
      const times = full.body.entries.map((e: { at: string }) => Date.parse(e.at));
      assert.deepEqual(
        times,
        [...times].sort((x, y) => y - x),
        'newest first',
      );
      assert.equal(full.body.entries[0].targetId, c.body.id);
      assert.ok(full.body.entries.every((e: { tenantId: string }) => e.tenantId === w.team.id));

      const entryA = full.body.entries.find((e: { targetId: string }) => e.targetId === a.body.id);
      assert.equal(entryA.action, 'admin.invite_created');
      assert.equal(entryA.actorUserId, w.admin.id);
      assert.equal(entryA.actorEmail, w.admin.email);
      assert.equal(entryA.ip, '203.0.113.77');
      assert.equal(entryA.tenantId, w.team.id);
      assert.deepEqual(entryA.details, { role: 'member' });
      assert.ok(!Number.isNaN(Date.parse(entryA.at)));

      const p1 = await log('&limit=2&offset=0');
      const p2 = await log('&limit=2&offset=2');
      assert.equal(p1.body.total, n);
      assert.equal(p2.body.total, n);
      assert.equal(p2.body.limit, 2);
      assert.equal(p2.body.offset, 2);
      assert.deepEqual(
        p1.body.entries.map((e: { id: number }) => e.id),
        full.body.entries.slice(0, 2).map((e: { id: number }) => e.id),
      );
      assert.deepEqual(
        p2.body.entries.map((e: { id: number }) => e.id),
        full.body.entries.slice(2, 4).map((e: { id: number }) => e.id),
      );
      assert.deepEqual((await log(`&offset=${n}`)).body.entries, []);

      const invites = await log('&action=admin.invite_created');
      assert.deepEqual(
        invites.body.entries.map((e: { targetId: string }) => e.targetId),
        [c.body.id, a.body.id],
      );
      assert.equal(invites.body.total, 2);

      const byAdmin = await log(`&actorUserId=${w.admin.id}`);
      assert.deepEqual(
        byAdmin.body.entries.map((e: { targetId: string }) => e.targetId),
        [a.body.id],
      );

      const window = await log(`&from=${encodeURIComponent(t1.toISOString())}&to=${encodeURIComponent(t2.toISOString())}`);
      assert.deepEqual(
        window.body.entries.map((e: { action: string }) => e.action),
        ['admin.member_role_changed'],
      );
      const since = await log(`&from=${encodeURIComponent(t2.toISOString())}`);
      assert.deepEqual(
        since.body.entries.map((e: { targetId: string }) => e.targetId),
        [c.body.id],
      );
      const until = await log(`&to=${encodeURIComponent(t1.toISOString())}`);
      assert.equal(until.body.total, n - 2);
      assert.ok(until.body.entries.some((e: { targetId: string }) => e.targetId === a.body.id));
    });

    test('?action=user.* matches the whole user family', async () => {
      const hubAdmin = await f.user({ admin: true });
      const person = await f.user();
      const ip = freshIp();
      assertError(await login(person.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');
      assert.equal((await login(person.email, PASSWORD, ip)).status, 200);
      assert.equal((await api.post(`/admin/users/${person.id}/block`, undefined, hubAdmin)).status, 200);

      const mine = await api.get(`/admin/audit-log?action=user.*&actorUserId=${person.id}`, hubAdmin);
      assert.equal(mine.status, 200, mine.text);
      assert.deepEqual(
        mine.body.entries.map((e: { action: string }) => e.action),
        ['user.login', 'user.login_failed'],
      );
      assert.ok(mine.body.entries.every((e: { ip: string }) => e.ip === ip));

      const family = await api.get('/admin/audit-log?action=user.*&limit=200', hubAdmin);
      const { n } = await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE action LIKE 'user.%'`);
      assert.equal(family.body.total, n);
      assert.ok(family.body.entries.every((e: { action: string }) => e.action.startsWith('user.')));

      const exact = await api.get(`/admin/audit-log?action=user.login&actorUserId=${person.id}`, hubAdmin);
      assert.deepEqual(
        exact.body.entries.map((e: { action: string }) => e.action),
        ['user.login'],
      );
      const blocks = await api.get(`/admin/audit-log?action=admin.*&targetId=${person.id}`, hubAdmin);
      assert.deepEqual(
        blocks.body.entries.map((e: { action: string }) => e.action),
        ['admin.user_blocked'],
      );
    });

    test('bad filters answer 400', async () => {
      const hubAdmin = await f.user({ admin: true });
      assertError(await api.get('/admin/audit-log?from=yesterday', hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.get('/admin/audit-log?limit=500', hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.get('/admin/audit-log?tenantId=nope', hubAdmin), 400, 'VALIDATION_FAILED');
      assertError(await api.get('/admin/audit-log?colour=red', hubAdmin), 400, 'VALIDATION_FAILED');
    });
  });
});

describe('the last hub admin', () => {
  let hub: Hub;
  before(async () => {
    hub = await startHub();
  });
  after(() => hub.close());

  test("removing the last hub admin's flag answers 409 LAST_HUB_ADMIN", async () => {
    const api = client(hub.url);
    const f = factories(hub);
    const first = await f.user({ admin: true });
    const second = await f.user({ admin: true });
    const count = async () => (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE is_admin')).n;
    assert.equal(await count(), 2);

    const demote = await api.put(`/admin/users/${second.id}`, { isAdmin: false }, first);
    assert.equal(demote.status, 200, demote.text);
    assert.equal(await count(), 1);

    assertError(await api.put(`/admin/users/${first.id}`, { isAdmin: false }, first), 409, 'LAST_HUB_ADMIN');
    assertError(await api.put(`/admin/users/${first.id}`, { isAdmin: false, name: 'Still Admin' }, f.internal), 409, 'LAST_HUB_ADMIN');
    assert.equal(await count(), 1);
    const row = await hub.sql.one<{ is_admin: boolean; name: string }>('SELECT is_admin, name FROM users WHERE id = $1', [first.id]);
    assert.deepEqual(row, { is_admin: true, name: first.name });
    assert.equal((await api.get('/admin/users', first)).status, 200);
    assert.equal(
      (await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'admin.user_edited' AND target_id = $1`, [first.id])).length,
      0,
    );

    // Keeping the flag (or editing other fields) stays allowed.
    assert.equal((await api.put(`/admin/users/${first.id}`, { isAdmin: true, name: 'Last Admin' }, first)).status, 200);
  });
});
