/**
 * Sign-in, sign-out, registration and password reset over HTTP (spec §4 "Auth and account",
 * §5 "Login security", §3 "Account lock" and "Password-reset token", §6 audit actions,
 * §7 errors, §8 limits). Every time rule moves hub.clock; nothing sleeps.
 *
 * The client IP is taken from X-Forwarded-For (proxy trusted), and the per-IP login ledger
 * is shared by the whole hub, so every test signs in from its own address.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { INTERNAL_KEY, startHub, type Hub } from './helpers/hub.ts';
import { factories, PASSWORD, type TestUser } from './helpers/factories.ts';
import { client, cookieFrom, type Credential, assertError, ipSequence } from './helpers/http.ts';

interface AuditRow {
  action: string;
  actor_user_id: string | null;
  actor_email: string | null;
  ip: string | null;
  tenant_id: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
}

const NEW_PASSWORD = 'a-brand-new-passphrase';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describe('auth', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  /** A fresh client address per use, so one test's attempts never count against another's. */
  const newIp = ipSequence('198.51');

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  const login = (email: string, password: string, ip: string, opts: { returnToken?: boolean } = {}) =>
    api.call('POST', `/auth/login${opts.returnToken ? '?returnToken=true' : ''}`, {
      body: { email, password },
      headers: { 'x-forwarded-for': ip },
    });

  const post = (path: string, body: unknown, ip: string, as?: Credential) =>
    api.call('POST', path, { body, headers: { 'x-forwarded-for': ip }, as });

  const audit = (where: string, params: unknown[]) =>
    hub.sql.query<AuditRow>(
      `SELECT action, actor_user_id, actor_email, ip, tenant_id, target_id, details FROM audit_log WHERE ${where} ORDER BY id`,
      params,
    );

  const userRow = (id: string) =>
    hub.sql.one<{
      failed_login_attempts: number;
      locked_until: Date | null;
      last_login_at: Date | null;
      last_login_ip: string | null;
      password_hash: string;
      status: string;
    }>('SELECT failed_login_attempts, locked_until, last_login_at, last_login_ip, password_hash, status FROM users WHERE id = $1', [id]);

  const me = (as: Credential) => api.get('/auth/me', as);

  /** A hub admin made now, so its token outlives whatever clock moves came before. */
  const hubAdmin = () => f.user({ admin: true });

  async function setHubSettings(values: Record<string, unknown>) {
    const res = await api.put('/settings/platform', values, await hubAdmin());
    assert.equal(res.status, 200, res.text);
  }

  describe('login', () => {
    test('behind an HTTPS proxy (X-Forwarded-Proto: https) the session cookie is Secure', async () => {
      const u = await f.user();
      const res = await api.call('POST', '/auth/login', {
        body: { email: u.email, password: u.password },
        headers: { 'x-forwarded-for': newIp(), 'x-forwarded-proto': 'https' },
      });
      assert.equal(res.status, 200, res.text);
      const set = res.headers.getSetCookie().find((c) => c.startsWith('chorus_session='))!;
      assert.ok(
        set
          .split(';')
          .map((a) => a.trim().toLowerCase())
          .includes('secure'),
        set,
      );
    });

    test('a right password sets an HttpOnly, SameSite=Lax session cookie that signs the person in', async () => {
      const u = await f.user();
      const ip = newIp();
      const res = await login(u.email, u.password, ip);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user.id, u.id);
      assert.equal(res.body.user.email, u.email);
      assert.equal(res.body.token, undefined, 'no token unless asked for');
      assert.equal(res.body.user.passwordHash, undefined);

      const set = res.headers.getSetCookie().find((c) => c.startsWith('chorus_session='));
      assert.ok(set, 'session cookie set');
      const attrs = set.split(';').map((a) => a.trim().toLowerCase());
      assert.ok(attrs.includes('httponly'), set);
      assert.ok(attrs.includes('samesite=lax'), set);
      assert.ok(attrs.includes('path=/'), set);
      assert.ok(!attrs.includes('secure'), 'plain HTTP gets no Secure flag (the browser would drop the cookie)');

      const cookie = cookieFrom(res);
      const who = await me({ cookie });
      assert.equal(who.status, 200, who.text);
      assert.equal(who.body.user.id, u.id);

      // The cookie is the credential: without it, nobody.
      assertError(await api.get('/auth/me'), 401, 'UNAUTHENTICATED');
      assertError(await me({ cookie: 'chorus_session=' + 'ab'.repeat(32) }), 401, 'UNAUTHENTICATED');
    });

    test('?returnToken=true also returns a JWT that works as a Bearer credential', async () => {
      const u = await f.user();
      const res = await login(u.email, u.password, newIp(), { returnToken: true });
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.ok(cookieFrom(res), 'the cookie is set as well');

      const who = await me({ token: res.body.token });
      assert.equal(who.status, 200, who.text);
      assert.equal(who.body.user.id, u.id);

      // A tampered token is nobody.
      const forged = res.body.token.slice(0, -4) + (res.body.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      assertError(await me({ token: forged }), 401, 'UNAUTHENTICATED');
    });

    test('a wrong password answers 401 INVALID_CREDENTIALS and counts a failure', async () => {
      const u = await f.user();
      const ip = newIp();
      const res = await login(u.email, 'not-the-password', ip);
      assertError(res, 401, 'INVALID_CREDENTIALS');
      assert.equal(
        res.headers.getSetCookie().some((c) => c.startsWith('chorus_session=')),
        false,
        'no cookie on failure',
      );
      assert.equal((await userRow(u.id)).failed_login_attempts, 1);

      const rows = await audit(`action = 'user.login_failed' AND ip = $1`, [ip]);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].actor_user_id, u.id);
      assert.equal(rows[0].target_id, u.id);
      assert.deepEqual(rows[0].details, { reason: 'invalid_credentials' });
    });

    test('an unknown email answers the same 401 INVALID_CREDENTIALS', async () => {
      const ip = newIp();
      const email = `nobody-${ip.replaceAll('.', '-')}@example.org`;
      const res = await login(email, PASSWORD, ip);
      assertError(res, 401, 'INVALID_CREDENTIALS');
      const u = await f.user();
      const wrong = await login(u.email, 'not-the-password', ip);
      assert.deepEqual(res.body.error, wrong.body.error, 'unknown email and wrong password look alike');

      const rows = await audit(`action = 'user.login_failed' AND ip = $1 AND actor_email = $2`, [ip, email]);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].actor_user_id, null);
      assert.deepEqual(rows[0].details, { reason: 'invalid_credentials' });
    });

    test('the email is matched without regard to case', async () => {
      const u = await f.user();
      const res = await login(u.email.toUpperCase(), u.password, newIp());
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user.id, u.id);
    });

    test('a successful login records time and the forwarded client IP, in the user row and the audit log', async () => {
      const u = await f.user();
      const ip = newIp();
      const before = hub.clock.now().getTime();
      const res = await login(u.email, u.password, ip);
      assert.equal(res.status, 200, res.text);
      const afterTs = hub.clock.now().getTime();

      const row = await userRow(u.id);
      assert.equal(row.last_login_ip, ip);
      assert.ok(row.last_login_at, 'last_login_at set');
      const at = new Date(row.last_login_at).getTime();
      assert.ok(at >= before && at <= afterTs, 'recorded at the hub clock time');
      assert.equal(new Date(res.body.user.lastLoginAt).getTime(), at);

      const rows = await audit(`action = 'user.login' AND actor_user_id = $1`, [u.id]);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].ip, ip);
      assert.equal(rows[0].actor_email, u.email);
      assert.equal(rows[0].target_id, u.id);

      // The session row remembers where it was opened.
      const session = await hub.sql.one<{ ip: string }>(
        `SELECT ip FROM sessions WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1`,
        [u.id],
      );
      assert.equal(session.ip, ip);
    });

    test('a successful login clears earlier failures', async () => {
      const u = await f.user();
      const ip = newIp();
      for (let i = 0; i < 3; i++) assertError(await login(u.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');
      assert.equal((await userRow(u.id)).failed_login_attempts, 3);
      assert.equal((await login(u.email, u.password, ip)).status, 200);
      assert.equal((await userRow(u.id)).failed_login_attempts, 0);
      // So four more failures do not lock.
      for (let i = 0; i < 4; i++) assertError(await login(u.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');
      assert.equal((await login(u.email, u.password, ip)).status, 200);
    });

    test('a malformed body answers 400 VALIDATION_FAILED', async () => {
      assertError(await post('/auth/login', { email: 'a@example.org' }, newIp()), 400, 'VALIDATION_FAILED');
      assertError(await post('/auth/login', { email: 'a@example.org', password: 'x', extra: 1 }, newIp()), 400, 'VALIDATION_FAILED');
    });
  });

  describe('login security', () => {
    test('5 failures lock the account for 15 minutes: 423 ACCOUNT_LOCKED even with the right password', async () => {
      const u = await f.user();
      const ip = newIp();
      for (let i = 0; i < 5; i++) assertError(await login(u.email, `wrong-${i}-password`, ip), 401, 'INVALID_CREDENTIALS');
      const row = await userRow(u.id);
      assert.ok(row.locked_until, 'locked_until set');
      const lockMs = new Date(row.locked_until).getTime() - hub.clock.now().getTime();
      assert.ok(lockMs > 14 * MINUTE && lockMs <= 15 * MINUTE, `locked for 15 minutes, got ${lockMs} ms`);

      const res = await login(u.email, u.password, ip);
      assertError(res, 423, 'ACCOUNT_LOCKED');
      assert.equal(
        res.headers.getSetCookie().some((c) => c.startsWith('chorus_session=')),
        false,
      );
      // The lock is per account, not per address.
      assertError(await login(u.email, u.password, newIp()), 423, 'ACCOUNT_LOCKED');

      hub.clock.advanceMinutes(14);
      assertError(await login(u.email, u.password, ip), 423, 'ACCOUNT_LOCKED');
      hub.clock.advanceMinutes(2);
      const ok = await login(u.email, u.password, newIp());
      assert.equal(ok.status, 200, ok.text);
      const cleared = await userRow(u.id);
      assert.equal(cleared.locked_until, null);
      assert.equal(cleared.failed_login_attempts, 0);

      const reasons = (await audit(`action = 'user.login_failed' AND actor_user_id = $1`, [u.id])).map((r) => r.details.reason);
      assert.deepEqual(reasons, [...Array(5).fill('invalid_credentials'), 'locked', 'locked', 'locked']);
    });

    test('failures spread over other accounts do not lock this one', async () => {
      const u = await f.user();
      const other = await f.user();
      const ip = newIp();
      for (let i = 0; i < 4; i++) assertError(await login(u.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');
      for (let i = 0; i < 3; i++) assertError(await login(other.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');
      assert.equal((await login(u.email, u.password, ip)).status, 200);
    });

    test('5 simultaneous failures still lock the account', async () => {
      const u = await f.user();
      const ip = newIp();
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => login(u.email, `wrong-${i}-password`, ip)));
      for (const r of results) assertError(r, 401, 'INVALID_CREDENTIALS');
      assertError(await login(u.email, u.password, ip), 423, 'ACCOUNT_LOCKED');
    });

    test('40 simultaneous wrong passwords: exactly 5 are checked, the other 35 meet the lock (issue 33)', async () => {
      const u = await f.user();
      // Each from its own address, so only the account lock stands in the way.
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => login(u.email, `wrong-${i}-password`, newIp())));
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 401).length, 5, statuses.join(','));
      assert.equal(statuses.filter((s) => s === 423).length, 35, statuses.join(','));
      for (const r of results) if (r.status === 423) assert.ok(r.body.error.details.lockedUntil, 'a lock says until when');
      const reasons = (await audit(`action = 'user.login_failed' AND actor_user_id = $1`, [u.id])).map((r) => r.details.reason);
      assert.equal(reasons.filter((r) => r === 'invalid_credentials').length, 5);
      assert.equal(reasons.filter((r) => r === 'locked').length, 35);
      const row = await userRow(u.id);
      assert.ok(row.locked_until && new Date(row.locked_until) > hub.clock.now());
      assertError(await login(u.email, u.password, newIp()), 423, 'ACCOUNT_LOCKED');
    });

    test('a right password that still needs its second factor does not count toward the lock', async () => {
      const u = await f.user();
      await hub.sql.query('UPDATE users SET failed_login_attempts = 4 WHERE id = $1', [u.id]);
      const begin = await api.post('/auth/mfa/totp/begin', undefined, u);
      assert.equal(begin.status, 200, begin.text);
      const { generate } = await import('otplib');
      const code = await generate({ secret: begin.body.manualKey, epoch: Math.floor(hub.clock.now().getTime() / 1000) });
      assert.equal((await api.post('/auth/mfa/totp/confirm', { code }, u)).status, 200);
      const res = await login(u.email, u.password, newIp());
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.mfaRequired, true);
      const row = await userRow(u.id);
      assert.equal(row.locked_until, null, 'the fifth check was right: no lock');
      assert.equal(row.failed_login_attempts, 4, 'and the earlier failures still count');
      assertError(await login(u.email, 'not-the-password', newIp()), 401, 'INVALID_CREDENTIALS');
      assertError(await login(u.email, u.password, newIp()), 423, 'ACCOUNT_LOCKED');
    });

    test('20 attempts per IP per 15 minutes, then 429; moving past the window frees the address', async () => {
      const ip = newIp();
      const u = await f.user();
      // Successes count as attempts too: the limit is on the address, not on failures.
      assert.equal((await login(u.email, u.password, ip)).status, 200);
      for (let i = 1; i < 20; i++) {
        assertError(await login(`stranger-${i}@example.org`, 'whatever-password', ip), 401, 'INVALID_CREDENTIALS');
      }
      const limited = await login(u.email, u.password, ip);
      assertError(limited, 429, 'RATE_LIMITED');
      assert.equal(limited.headers.get('retry-after'), '900');
      assert.equal(
        limited.headers.getSetCookie().some((c) => c.startsWith('chorus_session=')),
        false,
      );
      // Refusals do not extend the window, and other addresses are unaffected.
      assertError(await login(u.email, u.password, ip), 429, 'RATE_LIMITED');
      assert.equal((await login(u.email, u.password, newIp())).status, 200);

      const rows = await audit(`action = 'user.login_failed' AND ip = $1 AND details->>'reason' = 'rate_limited'`, [ip]);
      assert.equal(rows.length, 2);
      assert.equal(rows[0].actor_email, u.email);

      hub.clock.advanceMinutes(16);
      const freed = await login(u.email, u.password, ip);
      assert.equal(freed.status, 200, freed.text);
    });

    test('a burst of simultaneous attempts from one IP still lets at most 20 through', async () => {
      const ip = newIp();
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => login(`burst-${i}@example.org`, 'whatever-password', ip)));
      const statuses = results.map((r) => r.status);
      assert.ok(
        statuses.every((s) => s === 401 || s === 429),
        statuses.join(','),
      );
      const through = statuses.filter((s) => s === 401).length;
      assert.ok(through <= 20, `${through} of 30 simultaneous attempts got past the limit`);
      // Refused places are given back: one by one, the address gets exactly the rest of its 20.
      let more = 0;
      for (;;) {
        const r = await login(`late-${more}@example.org`, 'whatever-password', ip);
        if (r.status === 429) break;
        assertError(r, 401, 'INVALID_CREDENTIALS');
        more++;
        assert.ok(more <= 20, 'the limit holds after the burst');
      }
      assert.equal(through + more, 20);
      // Refused attempts do not hold the window: it frees 15 minutes after the ones that counted.
      hub.clock.advanceMinutes(16);
      assertError(await login('later@example.org', 'whatever-password', ip), 401, 'INVALID_CREDENTIALS');
    });

    test('a rate-limited attempt is refused before the password is looked at, and does not count toward the lock', async () => {
      const ip = newIp();
      for (let i = 0; i < 20; i++) assertError(await login(`filler-${i}@example.org`, 'whatever-password', ip), 401, 'INVALID_CREDENTIALS');
      const u = await f.user();
      for (let i = 0; i < 5; i++) assertError(await login(u.email, 'not-the-password', ip), 429, 'RATE_LIMITED');
      assert.equal((await userRow(u.id)).failed_login_attempts, 0);
      assert.equal((await login(u.email, u.password, newIp())).status, 200);
    });

    test('each refusal is audited as user.login_failed with its reason and the client IP', async () => {
      const admin = await hubAdmin();
      const blocked = await f.user();
      assert.equal((await api.post(`/admin/users/${blocked.id}/block`, undefined, admin)).status, 200);
      const lockedUser = await f.user();
      const ip = newIp();

      assertError(await login(lockedUser.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');
      for (let i = 0; i < 4; i++) await login(lockedUser.email, 'not-the-password', ip);
      assertError(await login(lockedUser.email, lockedUser.password, ip), 423, 'ACCOUNT_LOCKED');
      assertError(await login(blocked.email, blocked.password, ip), 403, 'ACCOUNT_BLOCKED');
      for (let i = 0; i < 13; i++) await login(`filler-${i}@example.org`, 'whatever-password', ip);
      assertError(await login(blocked.email, blocked.password, ip), 429, 'RATE_LIMITED');

      const rows = await audit(`action = 'user.login_failed' AND ip = $1`, [ip]);
      assert.equal(rows.length, 21);
      const byReason = (reason: string) => rows.filter((r) => r.details.reason === reason);
      assert.equal(byReason('invalid_credentials').length, 18);
      assert.equal(byReason('locked').length, 1);
      assert.equal(byReason('locked')[0].actor_user_id, lockedUser.id);
      assert.equal(byReason('blocked').length, 1);
      assert.equal(byReason('blocked')[0].actor_user_id, blocked.id);
      assert.equal(byReason('blocked')[0].target_id, blocked.id);
      assert.equal(byReason('rate_limited').length, 1);
      assert.equal(byReason('rate_limited')[0].actor_email, blocked.email);
      for (const r of rows) {
        assert.equal(r.ip, ip);
        assert.equal(r.tenant_id, null);
      }
    });
  });

  describe('blocked accounts', () => {
    test('a blocked person cannot sign in, and their JWT, cookie session and API keys stop at once', async () => {
      const u = await f.user();
      const team = await f.team(u);
      const key = await f.apiKey(team, u, 'member');
      const ip = newIp();
      const signedIn = await login(u.email, u.password, ip, { returnToken: true });
      assert.equal(signedIn.status, 200, signedIn.text);
      const cookie = { cookie: cookieFrom(signedIn) };
      const jwt = { token: signedIn.body.token as string };
      const keyCred = { token: key.token };
      // Everything works before the block.
      for (const cred of [u, cookie, jwt, keyCred]) assert.equal((await me(cred)).status, 200);

      const admin = await hubAdmin();
      const blocked = await api.post(`/admin/users/${u.id}/block`, undefined, admin);
      assert.equal(blocked.status, 200, blocked.text);
      assert.deepEqual(blocked.body, { id: u.id, status: 'blocked' });
      assert.equal((await userRow(u.id)).status, 'blocked');

      for (const cred of [u, cookie, jwt, keyCred]) assertError(await me(cred), 401, 'UNAUTHENTICATED');
      assertError(await login(u.email, u.password, ip), 403, 'ACCOUNT_BLOCKED');
      // A wrong password still answers as a wrong password: the block is not disclosed to guessers.
      assertError(await login(u.email, 'not-the-password', ip), 401, 'INVALID_CREDENTIALS');

      const open = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1 AND revoked_at IS NULL', [
        u.id,
      ]);
      assert.equal(open.n, 0, 'every session revoked');
      const entry = await audit(`action = 'admin.user_blocked' AND target_id = $1`, [u.id]);
      assert.equal(entry.length, 1);
      assert.equal(entry[0].actor_user_id, admin.id);

      const failed = await audit(`action = 'user.login_failed' AND actor_user_id = $1 AND details->>'reason' = 'blocked'`, [u.id]);
      assert.equal(failed.length, 1);
      assert.equal(failed[0].ip, ip);
    });

    test('unblocking lets the person sign in again', async () => {
      const u = await f.user();
      const admin = await hubAdmin();
      assert.equal((await api.post(`/admin/users/${u.id}/block`, undefined, admin)).body.status, 'blocked');
      assertError(await login(u.email, u.password, newIp()), 403, 'ACCOUNT_BLOCKED');
      const unblocked = await api.post(`/admin/users/${u.id}/block`, undefined, admin);
      assert.deepEqual(unblocked.body, { id: u.id, status: 'active' });
      assert.equal((await login(u.email, u.password, newIp())).status, 200);
      assert.equal((await audit(`action = 'admin.user_unblocked' AND target_id = $1`, [u.id])).length, 1);
    });
  });

  describe('logout and token lifetime', () => {
    test('logout ends the cookie session and the JWT issued with the same login, and nothing else', async () => {
      const u = await f.user();
      const ip = newIp();
      const res = await login(u.email, u.password, ip, { returnToken: true });
      const cookie = { cookie: cookieFrom(res) };
      const jwt = { token: res.body.token as string };
      assert.equal((await me(cookie)).status, 200);
      assert.equal((await me(jwt)).status, 200);

      const out = await api.call('POST', '/auth/logout', { as: cookie, headers: { 'x-forwarded-for': ip } });
      assert.equal(out.status, 204, out.text);
      const cleared = out.headers.getSetCookie().find((c) => c.startsWith('chorus_session='));
      assert.ok(cleared, 'the cookie is cleared');
      assert.match(cleared, /chorus_session=;|Expires=Thu, 01 Jan 1970/i);

      assertError(await me(cookie), 401, 'UNAUTHENTICATED');
      assertError(await me(jwt), 401, 'UNAUTHENTICATED');
      // Another session of the same person (the factory's) lives on.
      assert.equal((await me(u)).status, 200);

      const session = await hub.sql.one<{ revoked_at: Date | null }>('SELECT revoked_at FROM sessions WHERE user_id = $1 AND ip = $2', [
        u.id,
        ip,
      ]);
      assert.ok(session.revoked_at, 'session row revoked');
      const rows = await audit(`action = 'user.logout' AND actor_user_id = $1`, [u.id]);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].ip, ip);
    });

    test('logout with the JWT ends the cookie of the same login too', async () => {
      const u = await f.user();
      const res = await login(u.email, u.password, newIp(), { returnToken: true });
      const cookie = { cookie: cookieFrom(res) };
      const jwt = { token: res.body.token as string };
      assert.equal((await api.post('/auth/logout', undefined, jwt)).status, 204);
      assertError(await me(jwt), 401, 'UNAUTHENTICATED');
      assertError(await me(cookie), 401, 'UNAUTHENTICATED');
    });

    test('logout needs a signed-in caller', async () => {
      assertError(await api.post('/auth/logout'), 401, 'UNAUTHENTICATED');
    });

    test('a JWT expires after 7 days', async () => {
      const u = await f.user();
      const res = await login(u.email, u.password, newIp(), { returnToken: true });
      const jwt = { token: res.body.token as string };
      hub.clock.advance(6 * DAY);
      assert.equal((await me(jwt)).status, 200, 'still valid after 6 days');
      hub.clock.advance(2 * DAY);
      assertError(await me(jwt), 401, 'UNAUTHENTICATED');
      // A new sign-in gives a new token that works.
      const again = await login(u.email, u.password, newIp(), { returnToken: true });
      assert.equal((await me({ token: again.body.token })).status, 200);
    });
  });

  describe('credential resolver order (spec §5: internal key, session cookie, bearer JWT, API key)', () => {
    const both = (cookie: string, bearer: string): Credential => ({ cookie, token: bearer });

    test('the internal key beats a valid session cookie', async () => {
      const u = await f.user();
      const cookie = cookieFrom(await login(u.email, u.password, newIp()));
      const res = await me(both(cookie, INTERNAL_KEY));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user, null);
      assert.equal(res.body.credential.kind, 'internal');
    });

    test('a valid session cookie beats a bearer JWT of another person, and a bearer API key', async () => {
      const a = await f.user();
      const b = await f.user();
      const team = await f.team(b);
      const key = await f.apiKey(team, b, 'admin');
      const cookie = cookieFrom(await login(a.email, a.password, newIp()));
      const withJwt = await me(both(cookie, b.token));
      assert.equal(withJwt.status, 200, withJwt.text);
      assert.equal(withJwt.body.user.id, a.id);
      const withKey = await me(both(cookie, key.token));
      assert.equal(withKey.status, 200, withKey.text);
      assert.equal(withKey.body.user.id, a.id);
      assert.deepEqual(withKey.body.tenants, [], "the key's team is not the cookie person's");
    });

    test('a stale cookie is skipped: the bearer JWT decides, else the bearer API key', async () => {
      const a = await f.user();
      const b = await f.user();
      const team = await f.team(b);
      const key = await f.apiKey(team, b, 'member');
      const res = await login(a.email, a.password, newIp());
      const cookie = cookieFrom(res);
      assert.equal((await api.post('/auth/logout', undefined, { cookie })).status, 204);
      assertError(await me({ cookie }), 401, 'UNAUTHENTICATED');
      assert.equal((await me(both(cookie, b.token))).body.user.id, b.id);
      const viaKey = await me(both(cookie, key.token));
      assert.equal(viaKey.status, 200, viaKey.text);
      assert.equal(viaKey.body.user, null);
      assert.deepEqual(
        { kind: viaKey.body.credential.kind, tenantId: viaKey.body.credential.tenantId },
        { kind: 'api_key', tenantId: team.id },
      );
    });

    test('a bearer JWT is read as a JWT, never as an API key; an invalid bearer leaves the caller anonymous', async () => {
      const u = await f.user();
      const jwt = await me({ token: u.token });
      assert.equal(jwt.status, 200, jwt.text);
      assert.equal(jwt.body.user.id, u.id);
      // A tampered JWT is not tried as anything weaker.
      const [h, p] = u.token.split('.');
      assertError(await me({ token: `${h}.${p}.${'A'.repeat(43)}` }), 401, 'UNAUTHENTICATED');
      assertError(await me({ token: 'f'.repeat(64) }), 401, 'UNAUTHENTICATED');
      assertError(await me({ token: `${INTERNAL_KEY}x` }), 401, 'UNAUTHENTICATED');
    });
  });

  describe('registration', () => {
    let seq = 0;
    const fresh = () => ({ email: `new-${++seq}-${Date.now()}@example.org`, password: 'a-long-enough-password', name: 'New Person' });

    test('with allow_self_registration on (the default), anyone registers: 201 and can sign in', async () => {
      const body = fresh();
      const ip = newIp();
      const res = await post('/auth/register', body, ip);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.user.email, body.email);
      assert.equal(res.body.user.name, body.name);
      assert.equal(res.body.user.isAdmin, false);
      assert.equal(res.body.user.status, 'active');
      assert.equal(res.body.joined, null);
      assert.equal(res.body.user.passwordHash, undefined);

      const row = await userRow(res.body.user.id);
      assert.notEqual(row.password_hash, body.password, 'the password is stored hashed');
      assert.match(row.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, 'argon2id, 19 MiB, 2 passes');
      const memberships = await hub.sql.query('SELECT 1 FROM memberships WHERE user_id = $1', [res.body.user.id]);
      assert.equal(memberships.length, 0);

      const entry = await audit(`action = 'user.register' AND target_id = $1`, [res.body.user.id]);
      assert.equal(entry.length, 1);
      assert.equal(entry[0].actor_user_id, res.body.user.id);
      assert.equal(entry[0].ip, ip);

      assert.equal((await login(body.email, body.password, newIp())).status, 200);
    });

    test('with allow_self_registration off: 403 REGISTRATION_DISABLED, but a valid invite admits with its role', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      await setHubSettings({ allow_self_registration: false });
      try {
        const refused = fresh();
        assertError(await post('/auth/register', refused, newIp()), 403, 'REGISTRATION_DISABLED');
        assert.equal(await hub.sql.maybeOne('SELECT id FROM users WHERE email = $1', [refused.email]), null);

        const invite = await api.post('/auth/invites', { tenantId: team.id, role: 'viewer' }, owner);
        assert.equal(invite.status, 201, invite.text);
        assert.match(invite.body.token, /^[0-9a-f]{64}$/);

        const body = { ...fresh(), inviteToken: invite.body.token };
        const res = await post('/auth/register', body, newIp());
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(res.body.joined, { tenantId: team.id, role: 'viewer' });
        const membership = await hub.sql.one<{ role: string }>('SELECT role FROM memberships WHERE user_id = $1 AND tenant_id = $2', [
          res.body.user.id,
          team.id,
        ]);
        assert.equal(membership.role, 'viewer');
        const inviteRow = await hub.sql.one<{ used_at: Date | null; used_by: string | null }>(
          'SELECT used_at, used_by FROM invites WHERE id = $1',
          [invite.body.id],
        );
        assert.ok(inviteRow.used_at);
        assert.equal(inviteRow.used_by, res.body.user.id);

        const joined = await audit(`action = 'member.joined_team' AND actor_user_id = $1`, [res.body.user.id]);
        assert.equal(joined.length, 1);
        assert.equal(joined[0].tenant_id, team.id);

        // The new member sees the team with the invite's role.
        const signedIn = await login(body.email, body.password, newIp(), { returnToken: true });
        const who = await me({ token: signedIn.body.token });
        assert.deepEqual(
          who.body.tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
          [[team.id, 'viewer']],
        );
      } finally {
        await setHubSettings({ allow_self_registration: null });
      }
      // Back to the default: open again.
      assert.equal((await post('/auth/register', fresh(), newIp())).status, 201);
    });

    test('GET /api/system/info tells anyone whether registration and team creation are open, and the public URL', async () => {
      const open = await api.get('/system/info');
      assert.equal(open.status, 200, open.text);
      assert.deepEqual(Object.keys(open.body).sort(), ['mail', 'publicUrl', 'selfRegistration', 'teamCreation', 'version']);
      assert.equal(open.body.mail, false, 'no SMTP_URL: the hub sends no mail');
      assert.equal(open.body.selfRegistration, true);
      assert.equal(open.body.teamCreation, true);
      assert.match(open.body.publicUrl, /^https?:\/\//);
      await setHubSettings({ allow_self_registration: false, allow_tenant_creation: false });
      try {
        const closed = await api.get('/system/info');
        assert.equal(closed.body.selfRegistration, false);
        assert.equal(closed.body.teamCreation, false);
      } finally {
        await setHubSettings({ allow_self_registration: null, allow_tenant_creation: null });
      }
    });

    test('an invite is single use: 400 INVITE_USED, and no account is left behind', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const invite = await api.post('/auth/invites', { tenantId: team.id, role: 'member' }, owner);
      const first = await post('/auth/register', { ...fresh(), inviteToken: invite.body.token }, newIp());
      assert.equal(first.status, 201, first.text);
      assert.deepEqual(first.body.joined, { tenantId: team.id, role: 'member' });

      const second = { ...fresh(), inviteToken: invite.body.token };
      assertError(await post('/auth/register', second, newIp()), 400, 'INVITE_USED');
      assert.equal(
        await hub.sql.maybeOne('SELECT id FROM users WHERE email = $1', [second.email]),
        null,
        'the refused account is rolled back',
      );
      const members = await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM memberships WHERE tenant_id = $1`, [team.id]);
      assert.equal(members.n, 2, 'owner and the first invitee only');
    });

    test('an invite expires after 7 days: 400 INVITE_EXPIRED', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const invite = await api.post('/auth/invites', { tenantId: team.id, role: 'member' }, owner);
      assert.equal(invite.status, 201, invite.text);
      hub.clock.advance(8 * DAY);
      const body = { ...fresh(), inviteToken: invite.body.token };
      assertError(await post('/auth/register', body, newIp()), 400, 'INVITE_EXPIRED');
      assert.equal(await hub.sql.maybeOne('SELECT id FROM users WHERE email = $1', [body.email]), null);
    });

    test('an unknown invite token answers 400 INVALID_INVITE', async () => {
      assertError(await post('/auth/register', { ...fresh(), inviteToken: 'ab'.repeat(32) }, newIp()), 400, 'INVALID_INVITE');
    });

    test('an email already in use answers 409 EMAIL_TAKEN, whatever its case', async () => {
      const u = await f.user();
      assertError(await post('/auth/register', { ...fresh(), email: u.email }, newIp()), 409, 'EMAIL_TAKEN');
      assertError(await post('/auth/register', { ...fresh(), email: u.email.toUpperCase() }, newIp()), 409, 'EMAIL_TAKEN');
      const n = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [u.email]);
      assert.equal(n.n, 1);
    });

    test('a refused registration does not use up the invite', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const taken = await f.user();
      const invite = await api.post('/auth/invites', { tenantId: team.id, role: 'member' }, owner);
      assertError(
        await post('/auth/register', { ...fresh(), email: taken.email, inviteToken: invite.body.token }, newIp()),
        409,
        'EMAIL_TAKEN',
      );
      assertError(
        await post('/auth/register', { ...fresh(), password: 'short', inviteToken: invite.body.token }, newIp()),
        400,
        'VALIDATION_FAILED',
      );
      const row = await hub.sql.one<{ used_at: Date | null }>('SELECT used_at FROM invites WHERE id = $1', [invite.body.id]);
      assert.equal(row.used_at, null);
      const ok = await post('/auth/register', { ...fresh(), inviteToken: invite.body.token }, newIp());
      assert.equal(ok.status, 201, ok.text);
      assert.deepEqual(ok.body.joined, { tenantId: team.id, role: 'member' });
    });

    test('a password shorter than 10 characters answers 400 and creates nothing', async () => {
      const body = { ...fresh(), password: 'short-pw' };
      const res = await post('/auth/register', body, newIp());
      assertError(res, 400, 'VALIDATION_FAILED');
      assert.equal(await hub.sql.maybeOne('SELECT id FROM users WHERE email = $1', [body.email]), null);
      assertError(await post('/auth/register', { ...fresh(), password: ' '.repeat(12) }, newIp()), 400, 'VALIDATION_FAILED');
    });

    test('a malformed email or a missing name answers 400 VALIDATION_FAILED', async () => {
      assertError(await post('/auth/register', { ...fresh(), email: 'not-an-email' }, newIp()), 400, 'VALIDATION_FAILED');
      const { name: _name, ...noName } = fresh();
      assertError(await post('/auth/register', noName, newIp()), 400, 'VALIDATION_FAILED');
      assertError(await post('/auth/register', { ...fresh(), isAdmin: true }, newIp()), 400, 'VALIDATION_FAILED');
    });
  });

  describe('password reset', () => {
    const mailsTo = (email: string) => hub.infra.mail.recorded().filter((m) => m.to === email);

    /** Asks for a reset link and returns the raw token read from the recorded mail. */
    async function requestReset(u: TestUser, ip = newIp()): Promise<string> {
      const before = mailsTo(u.email).length;
      const res = await post('/auth/forgot-password', { email: u.email }, ip);
      assert.equal(res.status, 204, res.text);
      const mails = mailsTo(u.email);
      assert.equal(mails.length, before + 1, 'one mail recorded');
      const match = mails.at(-1)!.text.match(/\/reset-password\?token=([0-9a-f]{64})/);
      assert.ok(match, `the mail carries a link with a token: ${mails.at(-1)!.text}`);
      return match[1];
    }

    test('forgot-password answers 204 for a known address and mails a 60-minute link', async () => {
      const u = await f.user();
      const ip = newIp();
      const res = await post('/auth/forgot-password', { email: u.email }, ip);
      assert.equal(res.status, 204, res.text);
      assert.equal(res.text, '');
      const mails = mailsTo(u.email);
      assert.equal(mails.length, 1);
      assert.equal(mails[0].delivered, false, 'no transport configured: recorded and dropped');
      assert.match(mails[0].text, /http:\/\/chorus\.test\/reset-password\?token=[0-9a-f]{64}/);

      const token = await hub.sql.one<{ created_at: Date; expires_at: Date; used_at: Date | null; token_hash: string }>(
        'SELECT created_at, expires_at, used_at, token_hash FROM password_reset_tokens WHERE user_id = $1',
        [u.id],
      );
      assert.equal(new Date(token.expires_at).getTime() - new Date(token.created_at).getTime(), 60 * MINUTE);
      assert.equal(token.used_at, null);
      const raw = mails[0].text.match(/token=([0-9a-f]{64})/)![1];
      assert.notEqual(token.token_hash, raw, 'only a hash of the token is stored');

      const entry = await audit(`action = 'user.password_reset_requested' AND target_id = $1`, [u.id]);
      assert.equal(entry.length, 1);
      assert.equal(entry[0].ip, ip);
    });

    test('forgot-password answers 204 for an unknown address too, and mails nobody', async () => {
      const email = `unknown-${Date.now()}@example.org`;
      const before = hub.infra.mail.recorded().length;
      const res = await post('/auth/forgot-password', { email }, newIp());
      assert.equal(res.status, 204, res.text);
      assert.equal(res.text, '');
      assert.equal(hub.infra.mail.recorded().length, before);
      assert.equal((await audit(`action = 'user.password_reset_requested' AND actor_email = $1`, [email])).length, 0);
    });

    test('forgot-password allows 5 requests per IP per 15 minutes; the 6th still answers 204 but sends nothing', async () => {
      const u = await f.user();
      const ip = newIp();
      for (let i = 0; i < 5; i++) assert.equal((await post('/auth/forgot-password', { email: u.email }, ip)).status, 204);
      assert.equal(mailsTo(u.email).length, 5);
      const sixth = await post('/auth/forgot-password', { email: u.email }, ip);
      assert.equal(sixth.status, 204);
      assert.equal(mailsTo(u.email).length, 5, 'no mail past the limit');
      const tokens = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM password_reset_tokens WHERE user_id = $1', [u.id]);
      assert.equal(tokens.n, 5);
      // Another address is not held back, and the window passes.
      assert.equal((await post('/auth/forgot-password', { email: u.email }, newIp())).status, 204);
      assert.equal(mailsTo(u.email).length, 6);
      hub.clock.advanceMinutes(16);
      assert.equal((await post('/auth/forgot-password', { email: u.email }, ip)).status, 204);
      assert.equal(mailsTo(u.email).length, 7);
    });

    test('the reset token sets the new password, ends every session and marks the token used', async () => {
      const u = await f.user();
      const signedIn = await login(u.email, u.password, newIp(), { returnToken: true });
      const cookie = { cookie: cookieFrom(signedIn) };
      const token = await requestReset(u);
      const ip = newIp();

      const res = await post('/auth/reset-password', { token, password: NEW_PASSWORD }, ip);
      assert.equal(res.status, 204, res.text);

      for (const cred of [u, cookie, { token: signedIn.body.token as string }]) assertError(await me(cred), 401, 'UNAUTHENTICATED');
      assertError(await login(u.email, u.password, newIp()), 401, 'INVALID_CREDENTIALS');
      assert.equal((await login(u.email, NEW_PASSWORD, newIp())).status, 200);

      const row = await hub.sql.one<{ used_at: Date | null }>('SELECT used_at FROM password_reset_tokens WHERE user_id = $1', [u.id]);
      assert.ok(row.used_at, 'used_at marked');
      const entry = await audit(`action = 'user.password_reset_completed' AND target_id = $1`, [u.id]);
      assert.equal(entry.length, 1);
      assert.equal(entry[0].ip, ip);
    });

    test('a successful reset clears failed_login_attempts and locked_until', async () => {
      const locked = await f.user();
      const failing = await f.user();
      const ip = newIp();
      for (let i = 0; i < 5; i++) await login(locked.email, 'not-the-password', ip);
      for (let i = 0; i < 3; i++) await login(failing.email, 'not-the-password', ip);
      assertError(await login(locked.email, locked.password, ip), 423, 'ACCOUNT_LOCKED');
      assert.ok((await userRow(locked.id)).locked_until);
      assert.equal((await userRow(failing.id)).failed_login_attempts, 3);

      for (const u of [locked, failing]) {
        const token = await requestReset(u);
        assert.equal((await post('/auth/reset-password', { token, password: NEW_PASSWORD }, newIp())).status, 204);
        const row = await userRow(u.id);
        assert.equal(row.failed_login_attempts, 0);
        assert.equal(row.locked_until, null);
      }
      // The lock is gone at once, without waiting out the 15 minutes.
      assert.equal((await login(locked.email, NEW_PASSWORD, newIp())).status, 200);
    });

    test('a used token answers 400 TOKEN_USED and is audited as user.password_reset_failed', async () => {
      const u = await f.user();
      const token = await requestReset(u);
      assert.equal((await post('/auth/reset-password', { token, password: NEW_PASSWORD }, newIp())).status, 204);
      const ip = newIp();
      assertError(await post('/auth/reset-password', { token, password: 'yet-another-password' }, ip), 400, 'TOKEN_USED');
      assert.equal((await login(u.email, NEW_PASSWORD, newIp())).status, 200, 'the password did not change again');

      const rows = await audit(`action = 'user.password_reset_failed' AND target_id = $1`, [u.id]);
      assert.equal(rows.length, 1);
      assert.deepEqual(rows[0].details, { reason: 'used' });
      assert.equal(rows[0].ip, ip);
      assert.equal(rows[0].actor_user_id, u.id);
    });

    test('one reset ends every other open link of the person', async () => {
      const u = await f.user();
      const older = await requestReset(u);
      const newer = await requestReset(u);
      assert.equal((await post('/auth/reset-password', { token: newer, password: NEW_PASSWORD }, newIp())).status, 204);
      assertError(await post('/auth/reset-password', { token: older, password: 'yet-another-password' }, newIp()), 400, 'TOKEN_USED');
    });

    test('a token is good for 60 minutes: 400 TOKEN_EXPIRED after that', async () => {
      const early = await f.user();
      const late = await f.user();
      const earlyToken = await requestReset(early);
      const lateToken = await requestReset(late);
      hub.clock.advanceMinutes(59);
      assert.equal((await post('/auth/reset-password', { token: earlyToken, password: NEW_PASSWORD }, newIp())).status, 204);
      hub.clock.advanceMinutes(2);
      const ip = newIp();
      assertError(await post('/auth/reset-password', { token: lateToken, password: NEW_PASSWORD }, ip), 400, 'TOKEN_EXPIRED');

      const rows = await audit(`action = 'user.password_reset_failed' AND target_id = $1`, [late.id]);
      assert.equal(rows.length, 1);
      assert.deepEqual(rows[0].details, { reason: 'expired' });
      assert.equal(rows[0].ip, ip);
      const used = await hub.sql.one<{ used_at: Date | null }>('SELECT used_at FROM password_reset_tokens WHERE user_id = $1', [late.id]);
      assert.equal(used.used_at, null, 'an expired token is not marked used');
      assert.equal((await login(late.email, late.password, newIp())).status, 200, 'the old password still works');
    });

    test('a blocked person gets no reset mail, and a link issued before the block answers 400 ACCOUNT_BLOCKED', async () => {
      const u = await f.user();
      const token = await requestReset(u);
      assert.equal((await api.post(`/admin/users/${u.id}/block`, undefined, await hubAdmin())).status, 200);

      assert.equal((await post('/auth/forgot-password', { email: u.email }, newIp())).status, 204);
      assert.equal(mailsTo(u.email).length, 1, 'only the mail from before the block');

      const ip = newIp();
      assertError(await post('/auth/reset-password', { token, password: NEW_PASSWORD }, ip), 400, 'ACCOUNT_BLOCKED');
      const rows = await audit(`action = 'user.password_reset_failed' AND target_id = $1`, [u.id]);
      assert.equal(rows.length, 1);
      assert.deepEqual(rows[0].details, { reason: 'blocked' });
      assert.equal(rows[0].ip, ip);
      // The old password is still the one on file (it reaches the block check), the new one is not.
      assertError(await login(u.email, u.password, newIp()), 403, 'ACCOUNT_BLOCKED');
      assertError(await login(u.email, NEW_PASSWORD, newIp()), 401, 'INVALID_CREDENTIALS');
    });

    test('an unknown token answers 400 INVALID_TOKEN; a short new password answers 400 and keeps the token', async () => {
      assertError(await post('/auth/reset-password', { token: 'ab'.repeat(32), password: NEW_PASSWORD }, newIp()), 400, 'INVALID_TOKEN');
      const u = await f.user();
      const token = await requestReset(u);
      assertError(await post('/auth/reset-password', { token, password: 'short' }, newIp()), 400, 'VALIDATION_FAILED');
      assert.equal((await post('/auth/reset-password', { token, password: NEW_PASSWORD }, newIp())).status, 204);
    });
  });
});
