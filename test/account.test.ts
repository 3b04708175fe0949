/**
 * The signed-in person's own account over HTTP (spec §4 "Auth and account": GET /auth/me,
 * preferences, profile, password, self-deletion; §2 User; §6 audit; §7 errors).
 * Keys have no account: they may read /auth/me but every mutating account route answers 403.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { client, cookieFrom, type Credential, assertError, ipSequence } from './helpers/http.ts';
import { checkBrokerLogin } from './helpers/broker-login.ts';
import { sqlOf } from './helpers/sql.ts';

interface AuditRow {
  action: string;
  actor_user_id: string | null;
  actor_email: string | null;
  ip: string | null;
  tenant_id: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
}

const DEFAULT_PREFERENCES = {
  primaryLanguage: 'en',
  secondaryLanguages: [],
  dateFormatPrimary: 'YYYY-MM-DD',
  dateFormatSecondary: 'none',
  timeFormat: '24h',
  startOfWeek: 'monday',
  paperSize: 'a4',
  showVoting: true,
};

const MFA_FIELDS = ['available', 'backupCodesRemaining', 'enabled', 'enrolledAt', 'enrollmentRequired', 'passkeys', 'rememberedDevices'];

describe('account', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  /** Sign-ins go through the per-IP ledger: each one from its own address. */
  const newIp = ipSequence('192.0');

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  const login = (email: string, password: string, ip = newIp(), returnToken = false) =>
    api.call('POST', `/auth/login${returnToken ? '?returnToken=true' : ''}`, {
      body: { email, password },
      headers: { 'x-forwarded-for': ip },
    });

  /** A cookie session opened over HTTP from a known address. */
  async function cookieSession(u: TestUser, ip = newIp()): Promise<Credential> {
    const res = await login(u.email, u.password, ip);
    assert.equal(res.status, 200, res.text);
    return { cookie: cookieFrom(res), headers: { 'x-forwarded-for': ip } };
  }

  const me = (as: Credential) => api.get('/auth/me', as);

  const audit = (where: string, params: unknown[]) =>
    hub.sql.query<AuditRow>(
      `SELECT action, actor_user_id, actor_email, ip, tenant_id, target_id, details FROM audit_log WHERE ${where} ORDER BY id`,
      params,
    );

  async function setHubSettings(values: Record<string, unknown>) {
    const res = await api.put('/settings/platform', values, await f.user({ admin: true }));
    assert.equal(res.status, 200, res.text);
  }

  describe('GET /auth/me', () => {
    test('a person sees their user, their teams with role, preferences (hub defaults) and the MFA object', async () => {
      const u = await f.user({ name: 'Mia Me' });
      const own = await f.team(u, 'Aardvark Team');
      const otherOwner = await f.user();
      const other = await f.team(otherOwner, 'Zebra Team');
      await f.addMember(other, u, 'viewer');

      const res = await me(u);
      assert.equal(res.status, 200, res.text);
      const body = res.body;
      assert.deepEqual(Object.keys(body.user).sort(), ['createdAt', 'email', 'id', 'isAdmin', 'lastLoginAt', 'name', 'status']);
      assert.equal(body.user.id, u.id);
      assert.equal(body.user.email, u.email);
      assert.equal(body.user.name, 'Mia Me');
      assert.equal(body.user.isAdmin, false);
      assert.equal(body.user.status, 'active');
      assert.ok(!Number.isNaN(Date.parse(body.user.createdAt)));

      assert.deepEqual(body.tenants, [
        { id: own.id, name: own.name, slug: own.slug, role: 'owner' },
        { id: other.id, name: other.name, slug: other.slug, role: 'viewer' },
      ]);
      assert.deepEqual(body.preferences, DEFAULT_PREFERENCES);

      // The MFA object carries every field of spec §2; a person who never enrolled has it off.
      assert.deepEqual(Object.keys(body.mfa).sort(), MFA_FIELDS);
      assert.equal(typeof body.mfa.available, 'boolean');
      assert.equal(body.mfa.enabled, false);
      assert.equal(body.mfa.enrolledAt, null);
      assert.equal(body.mfa.backupCodesRemaining, 0);
      assert.deepEqual(body.mfa.passkeys, []);
      assert.deepEqual(body.mfa.rememberedDevices, []);
    });

    test('a hub admin is flagged as one', async () => {
      const admin = await f.user({ admin: true });
      const res = await me(admin);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user.isAdmin, true);
      assert.deepEqual(res.body.tenants, []);
    });

    test('an API key sees what it is: no user, no teams list, no preferences', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const key = await f.apiKey(team, owner, 'viewer');
      const res = await me({ token: key.token });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user, null);
      assert.deepEqual(res.body.tenants, []);
      assert.equal(res.body.preferences, null);
      assert.equal(res.body.mfa.enabled, false);
      assert.equal(res.body.credential.kind, 'api_key');
      assert.equal(res.body.credential.apiKeyId, key.id);
      assert.equal(res.body.credential.tenantId, team.id);
      assert.equal(res.body.credential.role, 'viewer');
    });

    test('nobody signed in answers 401', async () => {
      assertError(await api.get('/auth/me'), 401, 'UNAUTHENTICATED');
      assertError(await me({ token: 'f'.repeat(64) }), 401, 'UNAUTHENTICATED');
    });
  });

  describe('PUT /auth/me/preferences', () => {
    test('values within the options are stored, answered and shown by /auth/me', async () => {
      const u = await f.user();
      const wanted = {
        primaryLanguage: 'de',
        secondaryLanguages: ['fr', 'pt-BR'],
        dateFormatPrimary: 'DD.MM.YYYY',
        dateFormatSecondary: 'YYYY-MM-DD',
        timeFormat: '12h',
        startOfWeek: 'sunday',
        paperSize: 'letter',
        showVoting: false,
      };
      const res = await api.put('/auth/me/preferences', wanted, u);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.preferences, wanted);
      assert.deepEqual((await me(u)).body.preferences, wanted);

      const rows = await hub.sql.query<{ key: string; value: unknown }>(
        `SELECT key, value FROM settings WHERE level = 'account' AND scope_id = $1 ORDER BY key`,
        [u.id],
      );
      assert.deepEqual(Object.fromEntries(rows.map((r) => [r.key, r.value])), wanted);

      const entries = await audit(`action = 'user.preferences_updated' AND actor_user_id = $1`, [u.id]);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].tenant_id, null);
    });

    test('only the fields sent change', async () => {
      const u = await f.user();
      assert.equal((await api.put('/auth/me/preferences', { paperSize: 'letter' }, u)).status, 200);
      const res = await api.put('/auth/me/preferences', { startOfWeek: 'saturday' }, u);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.preferences, { ...DEFAULT_PREFERENCES, paperSize: 'letter', startOfWeek: 'saturday' });
    });

    test('a value outside the options answers 400 VALIDATION_FAILED and stores nothing', async () => {
      const u = await f.user();
      const refused: Array<[Record<string, unknown>, string]> = [
        [{ timeFormat: 'x' }, 'timeFormat'],
        [{ primaryLanguage: 'xx' }, 'primaryLanguage'],
        [{ secondaryLanguages: ['de', 'de'] }, 'secondaryLanguages'],
        [{ secondaryLanguages: ['de', 'fr', 'nl', 'sv'] }, 'secondaryLanguages'],
        [{ secondaryLanguages: ['klingon'] }, 'secondaryLanguages'],
        [{ dateFormatPrimary: 'none' }, 'dateFormatPrimary'],
        [{ startOfWeek: 'friday' }, 'startOfWeek'],
        [{ paperSize: 'a3' }, 'paperSize'],
      ];
      for (const [body, key] of refused) {
        const res = await api.put('/auth/me/preferences', body, u);
        assertError(res, 400, 'VALIDATION_FAILED');
        assert.match(JSON.stringify(res.body.error), new RegExp(key), `${JSON.stringify(body)}: the refusal names the field`);
      }
      // Wrong types are refused by the body schema.
      assertError(await api.put('/auth/me/preferences', { showVoting: 'yes' }, u), 400, 'VALIDATION_FAILED');
      assertError(await api.put('/auth/me/preferences', { timeFormat: 12 }, u), 400, 'VALIDATION_FAILED');

      // All or nothing: a good value beside a bad one is not kept.
      assertError(await api.put('/auth/me/preferences', { paperSize: 'letter', timeFormat: 'x' }, u), 400, 'VALIDATION_FAILED');
      assert.deepEqual((await me(u)).body.preferences, DEFAULT_PREFERENCES);
      const stored = await hub.sql.query(`SELECT key FROM settings WHERE level = 'account' AND scope_id = $1`, [u.id]);
      assert.deepEqual(stored, []);
      assert.equal((await audit(`action = 'user.preferences_updated' AND actor_user_id = $1`, [u.id])).length, 0);
    });

    test('an unknown field answers 400 VALIDATION_FAILED', async () => {
      const u = await f.user();
      const res = await api.put('/auth/me/preferences', { favouriteBird: 'wren' }, u);
      assertError(res, 400, 'VALIDATION_FAILED');
      assert.match(res.body.error.message, /favouriteBird/);
      // A hub-only setting is not a preference either.
      assertError(await api.put('/auth/me/preferences', { allow_self_registration: false }, u), 400, 'VALIDATION_FAILED');
    });

    test('null returns a preference to the hub default', async () => {
      const u = await f.user();
      await setHubSettings({ timeFormat: '12h' });
      try {
        assert.equal((await me(u)).body.preferences.timeFormat, '12h', 'the hub default shows through');
        const own = await api.put('/auth/me/preferences', { timeFormat: '24h' }, u);
        assert.equal(own.status, 200, own.text);
        assert.equal(own.body.preferences.timeFormat, '24h', 'the own value wins');
        assert.equal((await me(u)).body.preferences.timeFormat, '24h');

        const cleared = await api.put('/auth/me/preferences', { timeFormat: null }, u);
        assert.equal(cleared.status, 200, cleared.text);
        assert.equal(cleared.body.preferences.timeFormat, '12h');
        assert.equal((await me(u)).body.preferences.timeFormat, '12h');
      } finally {
        await setHubSettings({ timeFormat: null });
      }
      assert.equal((await me(u)).body.preferences.timeFormat, '24h', 'back to the built-in default');
    });
  });

  describe('PUT /auth/me/profile', () => {
    test('the name changes at once; a new email waits for its confirmation link (test/email-change.test.ts)', async () => {
      const u = await f.user();
      const email = `renamed-${Date.now()}@example.org`;
      const res = await api.put('/auth/me/profile', { name: '  Renamed Person ', email }, u);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user.name, 'Renamed Person');
      assert.equal(res.body.user.email, u.email, 'the answer shows the current address');
      assert.equal(res.body.emailChange.newEmail, email);

      const row = await hub.sql.one<{ name: string; email: string }>('SELECT name, email FROM users WHERE id = $1', [u.id]);
      assert.deepEqual(row, { name: 'Renamed Person', email: u.email });
      assert.equal((await me(u)).body.user.email, u.email);
      assertError(await login(email, u.password), 401, 'INVALID_CREDENTIALS');
      assert.equal((await login(u.email, u.password)).status, 200);

      const entries = await audit(`action = 'user.profile_updated' AND actor_user_id = $1`, [u.id]);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].target_id, u.id);
      assert.equal((await audit(`action = 'user.email_change_requested' AND actor_user_id = $1`, [u.id])).length, 1);
    });

    test('the name alone changes and the email stays', async () => {
      const u = await f.user();
      const res = await api.put('/auth/me/profile', { name: 'Only Name' }, u);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user.email, u.email);
      assert.equal(res.body.user.name, 'Only Name');
    });

    test("another person's email answers 409 EMAIL_TAKEN, whatever its case", async () => {
      const u = await f.user();
      const other = await f.user();
      assertError(await api.put('/auth/me/profile', { email: other.email }, u), 409, 'EMAIL_TAKEN');
      assertError(await api.put('/auth/me/profile', { name: 'Changed', email: other.email.toUpperCase() }, u), 409, 'EMAIL_TAKEN');
      const row = await hub.sql.one<{ name: string; email: string }>('SELECT name, email FROM users WHERE id = $1', [u.id]);
      assert.deepEqual(row, { name: u.name, email: u.email }, 'nothing changed');
      // One's own address in another case is not "taken".
      assert.equal((await api.put('/auth/me/profile', { email: u.email.toUpperCase() }, u)).status, 200);
    });

    test('an empty body, an empty name or a malformed email answers 400', async () => {
      const u = await f.user();
      assertError(await api.put('/auth/me/profile', {}, u), 400, 'VALIDATION_FAILED');
      assertError(await api.put('/auth/me/profile', { name: '' }, u), 400, 'VALIDATION_FAILED');
      assertError(await api.put('/auth/me/profile', { email: 'not-an-email' }, u), 400, 'VALIDATION_FAILED');
      assertError(await api.put('/auth/me/profile', { isAdmin: true }, u), 400, 'VALIDATION_FAILED');
    });
  });

  describe('PUT /auth/me/password', () => {
    const NEW_PASSWORD = 'a-fresh-passphrase-1';

    test('a wrong current password answers 400 WRONG_PASSWORD and changes nothing', async () => {
      const u = await f.user();
      const res = await api.put('/auth/me/password', { currentPassword: 'not-the-password', newPassword: NEW_PASSWORD }, u);
      assertError(res, 400, 'WRONG_PASSWORD');
      assert.equal((await login(u.email, u.password)).status, 200);
      assertError(await login(u.email, NEW_PASSWORD), 401, 'INVALID_CREDENTIALS');
      assert.equal((await me(u)).status, 200, 'the session survives');
    });

    test('a new password under 10 characters answers 400', async () => {
      const u = await f.user();
      assertError(await api.put('/auth/me/password', { currentPassword: u.password, newPassword: 'short' }, u), 400, 'VALIDATION_FAILED');
      assert.equal((await login(u.email, u.password)).status, 200);
    });

    test('success keeps the current session and ends every other one', async () => {
      const u = await f.user();
      const current = await cookieSession(u);
      const otherCookie = await cookieSession(u);
      const otherLogin = await login(u.email, u.password, newIp(), true);
      const otherJwt = { token: otherLogin.body.token as string };

      const res = await api.put('/auth/me/password', { currentPassword: u.password, newPassword: NEW_PASSWORD }, current);
      assert.equal(res.status, 204, res.text);

      assert.equal((await me(current)).status, 200, 'the session that changed it stays');
      for (const cred of [u, otherCookie, otherJwt]) assertError(await me(cred), 401, 'UNAUTHENTICATED');
      assertError(await login(u.email, u.password), 401, 'INVALID_CREDENTIALS');
      assert.equal((await login(u.email, NEW_PASSWORD)).status, 200);

      const open = await hub.sql.query<{ id: string }>(`SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, [u.id]);
      assert.equal(open.length, 2, 'the current session and the new login');
      const entries = await audit(`action = 'user.password_changed' AND actor_user_id = $1`, [u.id]);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].ip, current.headers!['x-forwarded-for']);
    });

    test('changed with a JWT, the JWT stays and the cookie of another login ends', async () => {
      const u = await f.user();
      const other = await cookieSession(u);
      const res = await api.put('/auth/me/password', { currentPassword: u.password, newPassword: NEW_PASSWORD }, u);
      assert.equal(res.status, 204, res.text);
      assert.equal((await me(u)).status, 200);
      assertError(await me(other), 401, 'UNAUTHENTICATED');
    });
  });

  describe('DELETE /auth/me', () => {
    test('the password is required, and a wrong one answers 400 WRONG_PASSWORD', async () => {
      const u = await f.user();
      assertError(await api.del('/auth/me', u), 400, 'VALIDATION_FAILED');
      assertError(await api.del('/auth/me', u, {}), 400, 'VALIDATION_FAILED');
      assertError(await api.del('/auth/me', u, { password: 'not-the-password' }), 400, 'WRONG_PASSWORD');
      assert.ok(await hub.sql.maybeOne('SELECT id FROM users WHERE id = $1', [u.id]), 'still there');
      assert.equal((await me(u)).status, 200);
    });

    test("a team's sole owner answers 409 SOLE_OWNER", async () => {
      const u = await f.user();
      const team = await f.team(u);
      const res = await api.del('/auth/me', u, { password: u.password });
      assertError(res, 409, 'SOLE_OWNER');
      assert.match(res.body.error.message, new RegExp(team.name));
      assert.ok(await hub.sql.maybeOne('SELECT id FROM users WHERE id = $1', [u.id]));
      assert.ok(await hub.sql.maybeOne(`SELECT id FROM memberships WHERE user_id = $1 AND role = 'owner'`, [u.id]));
      assert.equal((await audit(`action = 'user.account_deleted' AND target_id = $1`, [u.id])).length, 0);
    });

    test('a hub admin answers 403', async () => {
      const admin = await f.user({ admin: true });
      const res = await api.del('/auth/me', admin, { password: admin.password });
      assertError(res, 403, 'HUB_ADMIN_NOT_DELETABLE');
      assert.ok(await hub.sql.maybeOne('SELECT id FROM users WHERE id = $1', [admin.id]));
    });

    test('success erases the person and scrubs their email and IP from the audit log', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const u = await f.member(team, 'admin');
      const key = await f.apiKey(team, u, 'member');
      const ip = newIp();
      // Leave traces: a failed and a successful sign-in, a reset request, a preference.
      assertError(await login(u.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');
      const session = await cookieSession(u, ip);
      assert.equal(
        (await api.call('POST', '/auth/forgot-password', { body: { email: u.email }, headers: { 'x-forwarded-for': ip } })).status,
        204,
      );
      assert.equal((await api.put('/auth/me/preferences', { paperSize: 'letter' }, session)).status, 200);
      assert.equal((await hub.sql.query('SELECT id FROM password_reset_tokens WHERE user_id = $1', [u.id])).length, 1);
      const traces = await audit(`actor_user_id = $1`, [u.id]);
      assert.ok(traces.length >= 4, `traces left: ${traces.map((t) => t.action).join(', ')}`);
      assert.ok(traces.some((t) => t.ip === ip && t.actor_email === u.email));

      const res = await api.del('/auth/me', session, { password: u.password });
      assert.equal(res.status, 204, res.text);
      const cleared = res.headers.getSetCookie().find((c) => c.startsWith('chorus_session='));
      assert.ok(cleared, 'the session cookie is cleared');

      const db = hub.infra.db;
      assert.equal(await sqlOf(db).maybeOne('SELECT id FROM users WHERE id = $1', [u.id]), null, 'the user row is gone');
      assert.deepEqual(await sqlOf(db).query('SELECT id FROM memberships WHERE user_id = $1', [u.id]), []);
      assert.deepEqual(await sqlOf(db).query('SELECT id FROM sessions WHERE user_id = $1', [u.id]), []);
      assert.deepEqual(await sqlOf(db).query(`SELECT key FROM settings WHERE level = 'account' AND scope_id = $1`, [u.id]), []);
      assert.deepEqual(await sqlOf(db).query('SELECT id FROM password_reset_tokens WHERE user_id = $1', [u.id]), []);

      // Their entries outlive them, without email or IP.
      const after = await audit(`actor_user_id = $1`, [u.id]);
      assert.equal(after.length, traces.length + 1);
      for (const entry of after) {
        assert.equal(entry.actor_email, null, `${entry.action} keeps no email`);
        assert.equal(entry.ip, null, `${entry.action} keeps no IP`);
      }
      const anywhere = await sqlOf(db).one<{ n: number }>(
        `SELECT count(*)::int AS n FROM audit_log WHERE lower(actor_email) = lower($1) OR ip = $2 OR details::text ILIKE $3`,
        [u.email, ip, `%${u.email}%`],
      );
      assert.equal(anywhere.n, 0, 'the email and the IP appear nowhere in the audit log');
      const ledger = await sqlOf(db).one<{ n: number }>('SELECT count(*)::int AS n FROM login_attempts WHERE lower(email) = lower($1)', [
        u.email,
      ]);
      assert.equal(ledger.n, 0, 'the login ledger forgets the email');

      const deleted = await audit(`action = 'user.account_deleted' AND target_id = $1`, [u.id]);
      assert.equal(deleted.length, 1);
      assert.equal(deleted[0].actor_user_id, u.id);
      assert.equal(deleted[0].actor_email, null);
      assert.equal(deleted[0].ip, null);

      // Every credential of the person is dead, the keys they made included.
      for (const cred of [session, u, { token: key.token }]) assertError(await me(cred), 401, 'UNAUTHENTICATED');
      assertError(await login(u.email, u.password), 401, 'INVALID_CREDENTIALS');
      // The team goes on under its owner.
      const teamView = await me(owner);
      assert.deepEqual(
        teamView.body.tenants.map((t: { id: string }) => t.id),
        [team.id],
      );
      const members = await sqlOf(db).query<{ user_id: string }>('SELECT user_id FROM memberships WHERE tenant_id = $1', [team.id]);
      assert.deepEqual(
        members.map((m) => m.user_id),
        [owner.id],
      );
    });

    test('refused sign-ins that never reached the account (rate limited, typed in another case) lose the email and IP too', async () => {
      const u = await f.user();
      const ip = newIp();
      for (let i = 0; i < 20; i++) assertError(await login(`filler-${i}@example.org`, 'whatever-password', ip), 401, 'INVALID_CREDENTIALS');
      assertError(await login(u.email, 'not-the-password', ip), 429, 'RATE_LIMITED');
      assertError(await login(u.email.toUpperCase(), 'not-the-password', ip), 429, 'RATE_LIMITED');
      const limited = `action = 'user.login_failed' AND details->>'reason' = 'rate_limited' AND ip = $1`;
      const before = await audit(limited, [ip]);
      assert.equal(before.length, 2);
      for (const r of before) {
        assert.equal(r.actor_user_id, null, 'written before the account was looked up');
        assert.equal(r.actor_email?.toLowerCase(), u.email.toLowerCase());
      }
      const ids = (await hub.sql.query<{ id: number }>(`SELECT id FROM audit_log WHERE ${limited}`, [ip])).map((r) => r.id);

      assert.equal((await api.del('/auth/me', u, { password: u.password })).status, 204);

      const rows = await hub.sql.query<AuditRow>('SELECT actor_email, ip FROM audit_log WHERE id = ANY($1::bigint[])', [ids]);
      assert.equal(rows.length, 2, 'the entries stay');
      for (const r of rows) assert.deepEqual({ email: r.actor_email, ip: r.ip }, { email: null, ip: null });
      const anywhere = await hub.sql.one<{ n: number }>(
        'SELECT count(*)::int AS n FROM audit_log WHERE lower(actor_email) = lower($1) OR details::text ILIKE $2',
        [u.email, `%${u.email}%`],
      );
      assert.equal(anywhere.n, 0, 'no entry carries the email');
      // The other addresses' refusals from the same IP are not the person's and stay as they were.
      assert.equal((await audit(`action = 'user.login_failed' AND ip = $1`, [ip])).length, 20);
    });

    test('the satellites the person registered are released and disconnected, and stay with the team', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const u = await f.member(team, 'member');
      const reg = await api.post('/satellites', { tenantId: team.id, name: 'Orchard' }, u);
      assert.equal(reg.status, 201, reg.text);
      const sat = reg.body;
      assert.equal((await api.get(`/satellites/${sat.id}`, owner)).body.registered_by, u.id);
      assert.notEqual(await checkBrokerLogin(hub, sat.id, sat.mqtt.password), null);

      assert.equal((await api.del('/auth/me', u, { password: u.password })).status, 204);

      const after = await api.get(`/satellites/${sat.id}`, owner);
      assert.equal(after.status, 200, 'the device stays with the team');
      assert.equal(after.body.registered_by, null, 'team-owned now');
      assertError(await api.patch(`/satellites/${sat.id}`, { name: 'x' }, { token: sat.apiKey }), 401, 'UNAUTHENTICATED');
      assert.equal(await checkBrokerLogin(hub, sat.id, sat.mqtt.password), null, 'broker login dropped');
      const keys = await hub.sql.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE satellite_id = $1', [sat.id]);
      assert.ok(keys.length >= 1 && keys.every((k) => k.revoked_at), 'every key of the device is revoked');
    });

    test('the email is free again after deletion', async () => {
      const u = await f.user();
      assert.equal((await api.del('/auth/me', u, { password: u.password })).status, 204);
      const res = await api.call('POST', '/auth/register', {
        body: { email: u.email, password: 'a-long-enough-password', name: 'Returning' },
        headers: { 'x-forwarded-for': newIp() },
      });
      assert.equal(res.status, 201, res.text);
      assert.notEqual(res.body.user.id, u.id);
    });
  });

  describe('API keys have no account', () => {
    test('every mutating account route answers 403 to a key, and changes nothing', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const key = { token: (await f.apiKey(team, owner, 'admin')).token };
      const calls: Array<[string, string, unknown]> = [
        ['PUT', '/auth/me/preferences', { timeFormat: '12h' }],
        ['PUT', '/auth/me/profile', { name: 'Key Person' }],
        ['PUT', '/auth/me/password', { currentPassword: owner.password, newPassword: 'a-long-enough-password' }],
        ['DELETE', '/auth/me', { password: owner.password }],
      ];
      for (const [method, path, body] of calls) {
        const res = await api.call(method, path, { body, as: key });
        assertError(res, 403, 'FORBIDDEN');
      }
      assert.equal((await me(key)).status, 200, 'reading is allowed');
      assert.equal((await me(owner)).body.user.name, owner.name);
      assert.equal((await login(owner.email, owner.password)).status, 200);
    });
  });
});
