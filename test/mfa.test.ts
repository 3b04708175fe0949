/**
 * Multi-factor sign-in over HTTP (spec §2 User `mfa`, §3 TOTP enrollment and MFA rows, §4
 * /auth/login/mfa/* and /auth/mfa/*, §5 "Login security" 5, §6 auth.* and user.mfa_* audit
 * actions, §8 TOTP secret 10 minutes). TOTP codes are computed from the manual key with the
 * hub clock's time; passkeys are a software authenticator with a real P-256 key.
 *
 * Every sign-in comes from its own forwarded address, so the per-IP login limit of one test
 * never reaches another.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { client, cookieFrom, type Credential, type Res, assertError, ipSequence } from './helpers/http.ts';
import { otherKey, SoftAuthenticator } from './helpers/webauthn.ts';

const ORIGIN = 'http://chorus.test'; // CHORUS_PUBLIC_URL of the test hub
const REMEMBER = 'chorus_mfa_remember';
const STEP_MS = 30_000;

interface AuditRow {
  action: string;
  actor_user_id: string | null;
  target_id: string | null;
  ip: string | null;
  details: Record<string, unknown>;
}

const setCookie = (res: Res, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
const cookiePair = (res: Res, name: string) => {
  const c = setCookie(res, name);
  assert.ok(c, `${name} cookie set`);
  return c.split(';')[0];
};

describe('multi-factor sign-in', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  const newIp = ipSequence('203.0');

  before(async () => {
    hub = await startHub();
    // Time moves only when a test moves it, so a code computed for a step is checked in that step.
    hub.clock.freeze();
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  /** The code an authenticator app shows now (by the hub clock), or `steps` periods away. */
  const totp = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor((hub.clock.now().getTime() + steps * STEP_MS) / 1000) });
  /** Codes are good once per step: move to the next one. */
  const nextStep = () => hub.clock.advance(STEP_MS);

  const post = (path: string, body: unknown, opts: { ip?: string; as?: Credential | null; cookie?: string } = {}) =>
    api.call('POST', path, {
      body,
      as: opts.as,
      headers: { 'x-forwarded-for': opts.ip ?? newIp(), ...(opts.cookie ? { cookie: opts.cookie } : {}) },
    });

  const login = (u: TestUser, opts: { ip?: string; cookie?: string; returnToken?: boolean } = {}) =>
    post(`/auth/login${opts.returnToken ? '?returnToken=true' : ''}`, { email: u.email, password: u.password }, opts);

  const audit = (action: string, userId: string) =>
    hub.sql.query<AuditRow>(
      `SELECT action, actor_user_id, target_id, ip, details FROM audit_log WHERE action = $1 AND (target_id = $2 OR actor_user_id::text = $2) ORDER BY id`,
      [action, userId],
    );

  const userRow = (id: string) =>
    hub.sql.one<{ failed_login_attempts: number; locked_until: Date | null; last_login_at: Date | null }>(
      'SELECT failed_login_attempts, locked_until, last_login_at FROM users WHERE id = $1',
      [id],
    );

  const mfaOf = async (as: Credential) => {
    const res = await api.get('/auth/me', as);
    assert.equal(res.status, 200, res.text);
    return res.body.mfa;
  };

  /** The hub switch require_admin_mfa, set with the internal key (an unenrolled hub admin could not turn it off). */
  async function setRequireAdminMfa(on: boolean) {
    const res = await api.put('/settings/platform', { require_admin_mfa: on }, f.internal);
    assert.equal(res.status, 200, res.text);
  }

  /** Enrolls TOTP over HTTP; the next code must come from a later step. */
  async function enroll(u: TestUser): Promise<{ secret: string; backupCodes: string[] }> {
    const begin = await api.post('/auth/mfa/totp/begin', undefined, u);
    assert.equal(begin.status, 200, begin.text);
    const confirm = await api.post('/auth/mfa/totp/confirm', { code: await totp(begin.body.manualKey) }, u);
    assert.equal(confirm.status, 200, confirm.text);
    nextStep();
    return { secret: begin.body.manualKey, backupCodes: confirm.body.backupCodes };
  }

  /** Password accepted, second factor outstanding. */
  async function challenge(
    u: TestUser,
    opts: { ip?: string; cookie?: string; returnToken?: boolean } = {},
  ): Promise<{ mfaToken: string; hasPasskeys: boolean }> {
    const res = await login(u, opts);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.mfaRequired, true, res.text);
    return res.body;
  }

  describe('TOTP enrollment', () => {
    test('begin answers a QR code and the manual key; confirm with a code from it enables MFA and shows 10 backup codes once', async () => {
      const u = await f.user();
      const initial = await mfaOf(u);
      assert.deepEqual(initial, {
        enabled: false,
        enrolledAt: null,
        backupCodesRemaining: 0,
        enrollmentRequired: false,
        available: true,
        passkeys: [],
        rememberedDevices: [],
      });

      const begin = await api.post('/auth/mfa/totp/begin', undefined, u);
      assert.equal(begin.status, 200, begin.text);
      assert.match(begin.body.qrDataUrl, /^data:image\/png;base64,[A-Za-z0-9+/=]+$/);
      assert.match(begin.body.manualKey, /^[A-Z2-7]{32}$/, 'a base32 key to type into an authenticator app');
      assert.equal(new Date(begin.body.expiresAt).getTime() - hub.clock.now().getTime() <= 10 * 60_000, true);
      assert.equal((await mfaOf(u)).enabled, false, 'pending is not enabled');

      const good = await totp(begin.body.manualKey);
      const wrong = good === '000000' ? '111111' : '000000';
      assertError(await api.post('/auth/mfa/totp/confirm', { code: wrong }, u), 400, 'INVALID_MFA_CODE');
      const failed = await audit('auth.mfa_enrollment_failed', u.id);
      assert.equal(failed.length, 1);
      assert.deepEqual(failed[0].details, { reason: 'invalid_code' });

      const confirm = await api.post('/auth/mfa/totp/confirm', { code: good }, u);
      assert.equal(confirm.status, 200, confirm.text);
      const codes: string[] = confirm.body.backupCodes;
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      for (const c of codes) assert.match(c, /^[a-z2-9]{5}-[a-z2-9]{5}$/);

      const enabled = await mfaOf(u);
      assert.equal(enabled.enabled, true);
      assert.ok(enabled.enrolledAt);
      assert.equal(enabled.backupCodesRemaining, 10);
      assert.equal((await audit('auth.mfa_enabled', u.id)).length, 1);

      // At rest: the secret is sealed and the codes are hashed.
      const row = await hub.sql.one<{ totp_secret: string }>('SELECT totp_secret FROM mfa_accounts WHERE user_id = $1', [u.id]);
      assert.ok(!row.totp_secret.includes(begin.body.manualKey), 'TOTP secret encrypted');
      assert.match(row.totp_secret, /^v1\./);
      const hashes = await hub.sql.query<{ code_hash: string }>('SELECT code_hash FROM mfa_backup_codes WHERE user_id = $1', [u.id]);
      assert.equal(hashes.length, 10);
      for (const h of hashes) assert.ok(!codes.some((c) => h.code_hash.includes(c.replace('-', ''))), 'backup codes hashed');
    });

    test('the enrollment secret is held 10 minutes: confirming after 11 answers 400 ENROLLMENT_EXPIRED', async () => {
      const u = await f.user();
      const begin = await api.post('/auth/mfa/totp/begin', undefined, u);
      assert.equal(begin.status, 200, begin.text);
      hub.clock.advanceMinutes(11);
      assertError(await api.post('/auth/mfa/totp/confirm', { code: await totp(begin.body.manualKey) }, u), 400, 'ENROLLMENT_EXPIRED');
      assert.equal((await mfaOf(u)).enabled, false);
      const failed = await audit('auth.mfa_enrollment_failed', u.id);
      assert.deepEqual(
        failed.map((r) => r.details.reason),
        ['expired'],
      );
      // The secret is gone, not just late.
      assertError(await api.post('/auth/mfa/totp/confirm', { code: await totp(begin.body.manualKey) }, u), 400, 'NO_PENDING_ENROLLMENT');
    });

    test('cancel drops a pending enrollment', async () => {
      const u = await f.user();
      const begin = await api.post('/auth/mfa/totp/begin', undefined, u);
      assert.equal((await api.post('/auth/mfa/totp/cancel', undefined, u)).status, 204);
      assertError(await api.post('/auth/mfa/totp/confirm', { code: await totp(begin.body.manualKey) }, u), 400, 'NO_PENDING_ENROLLMENT');
      assert.equal((await mfaOf(u)).enabled, false);
    });

    test('enrolling again moves MFA to a new authenticator: the old key and backup codes stop working', async () => {
      const u = await f.user();
      const first = await enroll(u);
      const second = await enroll(u);
      assert.notEqual(first.secret, second.secret);
      const { mfaToken } = await challenge(u);
      assertError(await post('/auth/login/mfa/totp', { mfaToken, code: await totp(first.secret) }), 401, 'INVALID_MFA_CODE');
      assertError(await post('/auth/login/mfa/backup', { mfaToken, code: first.backupCodes[0] }), 401, 'INVALID_MFA_CODE');
      assert.equal((await post('/auth/login/mfa/totp', { mfaToken, code: await totp(second.secret) })).status, 200);
      assert.deepEqual(
        (await audit('auth.mfa_enabled', u.id)).map((r) => r.details.replaced),
        [false, true],
      );
    });

    test('managing MFA needs a signed-in person: 401 anonymous, 403 for an API key', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const key = await f.apiKey(team, owner);
      assertError(await api.post('/auth/mfa/totp/begin', undefined, null), 401, 'UNAUTHENTICATED');
      assertError(await api.post('/auth/mfa/totp/begin', undefined, { token: key.token }), 403, 'FORBIDDEN');
      const me = await api.get('/auth/me', { token: key.token });
      assert.equal(me.body.mfa.available, false, 'a key has no account and so no second factor');
    });
  });

  describe('sign-in with a second factor', () => {
    test('login of an MFA user answers {mfaRequired, mfaToken, hasPasskeys} and sets no session cookie; a TOTP code completes it', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const ip = newIp();
      const res = await login(u, { ip });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['hasPasskeys', 'mfaRequired', 'mfaToken']);
      assert.equal(res.body.mfaRequired, true);
      assert.equal(res.body.hasPasskeys, false);
      assert.match(res.body.mfaToken, /^[0-9a-f]{64}$/);
      assert.equal(setCookie(res, 'chorus_session'), undefined, 'no session before the second factor');
      assert.equal((await userRow(u.id)).last_login_at, null, 'not signed in yet');

      const issued = await audit('user.mfa_challenge_issued', u.id);
      assert.equal(issued.length, 1);
      assert.equal(issued[0].ip, ip);
      assert.equal((await audit('user.login', u.id)).length, 0);

      const done = await post('/auth/login/mfa/totp', { mfaToken: res.body.mfaToken, code: await totp(secret) }, { ip });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.user.id, u.id);
      const who = await api.get('/auth/me', { cookie: cookieFrom(done) });
      assert.equal(who.status, 200, who.text);
      assert.equal(who.body.user.id, u.id);
      assert.equal(setCookie(done, REMEMBER), undefined, 'the device is remembered only when asked');

      const logins = await audit('user.login', u.id);
      assert.equal(logins.length, 1);
      assert.deepEqual(logins[0].details, { mfa: 'totp' });
      assert.ok((await userRow(u.id)).last_login_at, 'login recorded after the second factor');
    });

    test('codes within ±1 step are accepted; a code is good once, even in a new sign-in', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      nextStep(); // the step before now must not be the one enrollment used
      const a = await challenge(u);
      assertError(await post('/auth/login/mfa/totp', { mfaToken: a.mfaToken, code: await totp(secret, 2) }), 401, 'INVALID_MFA_CODE');
      assertError(await post('/auth/login/mfa/totp', { mfaToken: a.mfaToken, code: await totp(secret, -2) }), 401, 'INVALID_MFA_CODE');
      const previous = await totp(secret, -1);
      assert.equal((await post('/auth/login/mfa/totp', { mfaToken: a.mfaToken, code: previous })).status, 200);

      // The same code, and any code of an earlier step, is refused from now on.
      const b = await challenge(u);
      assertError(await post('/auth/login/mfa/totp', { mfaToken: b.mfaToken, code: previous }), 401, 'INVALID_MFA_CODE');
      const reasons = (await audit('user.mfa_login_failed', u.id)).map((r) => r.details);
      assert.deepEqual(reasons.at(-1), { method: 'totp', reason: 'reused_code' });
      // The next step's code is still good (+1).
      assert.equal((await post('/auth/login/mfa/totp', { mfaToken: b.mfaToken, code: await totp(secret, 1) })).status, 200);
    });

    test('?returnToken=true: the JWT comes with the completed challenge, not before', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const res = await login(u, { returnToken: true });
      assert.equal(res.body.mfaRequired, true);
      assert.equal(res.body.token, undefined);
      const done = await post('/auth/login/mfa/totp', { mfaToken: res.body.mfaToken, code: await totp(secret) });
      assert.equal(done.status, 200, done.text);
      assert.match(done.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.equal((await api.get('/auth/me', { token: done.body.token })).body.user.id, u.id);
    });

    test('a backup code completes a challenge once: reuse is refused', async () => {
      const u = await f.user();
      const { backupCodes } = await enroll(u);
      const a = await challenge(u);
      // Typed back in capitals without the dash: still the code.
      const typed = backupCodes[0].replace('-', '').toUpperCase();
      const done = await post('/auth/login/mfa/backup', { mfaToken: a.mfaToken, code: typed });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.user.id, u.id);
      const used = await audit('auth.mfa_backup_code_used', u.id);
      assert.equal(used.length, 1);
      assert.deepEqual(used[0].details, { remaining: 9 });
      assert.equal((await mfaOf(u)).backupCodesRemaining, 9);
      assert.deepEqual(
        (await audit('user.login', u.id)).map((r) => r.details),
        [{ mfa: 'backup_code' }],
      );

      const b = await challenge(u);
      assertError(await post('/auth/login/mfa/backup', { mfaToken: b.mfaToken, code: backupCodes[0] }), 401, 'INVALID_MFA_CODE');
      assert.equal((await post('/auth/login/mfa/backup', { mfaToken: b.mfaToken, code: backupCodes[1] })).status, 200);
      assert.equal((await mfaOf(u)).backupCodesRemaining, 8);
    });

    test('the mfaToken is single use', async () => {
      const u = await f.user();
      const { secret, backupCodes } = await enroll(u);
      const { mfaToken } = await challenge(u);
      assert.equal((await post('/auth/login/mfa/totp', { mfaToken, code: await totp(secret) })).status, 200);
      assertError(await post('/auth/login/mfa/backup', { mfaToken, code: backupCodes[0] }), 401, 'INVALID_MFA_TOKEN');
      assert.deepEqual(
        (await audit('user.mfa_login_failed', u.id)).map((r) => r.details),
        [{ method: 'backup_code', reason: 'token_used' }],
      );
      assert.equal((await mfaOf(u)).backupCodesRemaining, 10, 'the refused attempt spent no code');
      assertError(await post('/auth/login/mfa/totp', { mfaToken: 'ab'.repeat(32), code: '123456' }), 401, 'INVALID_MFA_TOKEN');
    });

    test('the mfaToken lives 5 minutes', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const { mfaToken } = await challenge(u);
      hub.clock.advanceMinutes(5);
      hub.clock.advance(1000);
      assertError(await post('/auth/login/mfa/totp', { mfaToken, code: await totp(secret) }), 401, 'INVALID_MFA_TOKEN');
      assert.deepEqual(
        (await audit('user.mfa_login_failed', u.id)).map((r) => r.details),
        [{ method: 'totp', reason: 'token_expired' }],
      );
      assert.equal((await userRow(u.id)).failed_login_attempts, 0, 'a late token is not a wrong factor');
    });

    test('failed challenges count toward the lockout: the 5th locks the account for 15 minutes (423), audited as user.mfa_login_failed', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const ip = newIp();
      // A correct password does not clear failures of the second factor: 3 wrong codes, a new sign-in, 2 more.
      let { mfaToken } = await challenge(u, { ip });
      for (let i = 0; i < 3; i++)
        assertError(
          await post('/auth/login/mfa/totp', { mfaToken, code: '000000' === (await totp(secret)) ? '111111' : '000000' }, { ip }),
          401,
          'INVALID_MFA_CODE',
        );
      assert.equal((await userRow(u.id)).failed_login_attempts, 3);
      ({ mfaToken } = await challenge(u, { ip }));
      assert.equal((await userRow(u.id)).failed_login_attempts, 3);
      assertError(await post('/auth/login/mfa/backup', { mfaToken, code: 'wrong-code' }, { ip }), 401, 'INVALID_MFA_CODE');
      assertError(await post('/auth/login/mfa/backup', { mfaToken, code: 'wrong-code' }, { ip }), 401, 'INVALID_MFA_CODE');
      const row = await userRow(u.id);
      assert.ok(row.locked_until && new Date(row.locked_until).getTime() > hub.clock.now().getTime(), 'locked');

      // Locked: even the right code is refused, and so is the password.
      assertError(await post('/auth/login/mfa/totp', { mfaToken, code: await totp(secret) }, { ip }), 423, 'ACCOUNT_LOCKED');
      assertError(await login(u, { ip }), 423, 'ACCOUNT_LOCKED');

      const failed = await audit('user.mfa_login_failed', u.id);
      assert.deepEqual(
        failed.map((r) => r.details),
        [
          ...Array(3).fill({ method: 'totp', reason: 'invalid_code' }),
          ...Array(2).fill({ method: 'backup_code', reason: 'invalid_code' }),
          { method: 'totp', reason: 'locked' },
        ],
      );
      assert.ok(failed.every((r) => r.ip === ip));

      hub.clock.advanceMinutes(16);
      const again = await challenge(u, { ip });
      assert.equal((await post('/auth/login/mfa/totp', { mfaToken: again.mfaToken, code: await totp(secret) }, { ip })).status, 200);
      assert.equal((await userRow(u.id)).failed_login_attempts, 0);
    });

    test('a person blocked between password and code cannot finish: 403 ACCOUNT_BLOCKED', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const { mfaToken } = await challenge(u);
      await hub.sql.query(`UPDATE users SET status = 'blocked' WHERE id = $1`, [u.id]);
      assertError(await post('/auth/login/mfa/totp', { mfaToken, code: await totp(secret) }), 403, 'ACCOUNT_BLOCKED');
    });

    test('a malformed completion answers 400 and counts nothing', async () => {
      const u = await f.user();
      await enroll(u);
      const { mfaToken } = await challenge(u);
      assertError(await post('/auth/login/mfa/totp', { mfaToken, code: '12345' }), 400, 'VALIDATION_FAILED');
      assertError(await post('/auth/login/mfa/totp', { mfaToken: 'nope', code: '123456' }), 400, 'VALIDATION_FAILED');
      assert.equal((await userRow(u.id)).failed_login_attempts, 0);
    });
  });

  describe('remembered devices', () => {
    test('rememberDevice sets the mfa-remember cookie; the next login from it skips the factor; logout keeps it; revoking brings the factor back', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const first = await challenge(u);
      const done = await post('/auth/login/mfa/totp', { mfaToken: first.mfaToken, code: await totp(secret), rememberDevice: true }, {});
      assert.equal(done.status, 200, done.text);
      const set = setCookie(done, REMEMBER)!;
      assert.ok(set, 'mfa-remember cookie set');
      const attrs = set.split(';').map((a) => a.trim().toLowerCase());
      assert.ok(attrs.includes('httponly'));
      assert.ok(attrs.includes('samesite=lax'));
      const expires = new Date(attrs.find((a) => a.startsWith('expires='))!.slice(8)).getTime();
      const days = (expires - hub.clock.now().getTime()) / 86_400_000;
      assert.ok(days > 29.9 && days <= 30, `remembered for 30 days, got ${days}`);
      const remember = cookiePair(done, REMEMBER);
      const session = cookieFrom(done);

      // Logout ends the session but leaves the mfa-remember cookie alone.
      const out = await api.call('POST', '/auth/logout', { as: { cookie: `${session}; ${remember}` } });
      assert.equal(out.status, 204, out.text);
      assert.equal(setCookie(out, REMEMBER), undefined, 'logout does not touch the mfa-remember cookie');

      const skipped = await login(u, { cookie: remember });
      assert.equal(skipped.status, 200, skipped.text);
      assert.equal(skipped.body.mfaRequired, undefined);
      assert.equal(skipped.body.user.id, u.id);
      assert.ok(setCookie(skipped, 'chorus_session'), 'session cookie set at once');
      const logins = await audit('user.login', u.id);
      assert.equal(logins.at(-1)!.details.mfa, 'remembered_device');

      const list = await api.get('/auth/mfa/remembered-devices', u);
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body.rememberedDevices.length, 1);
      const device = list.body.rememberedDevices[0];
      assert.ok(device.id && device.createdAt && device.expiresAt);
      assert.equal(device.lastUsedAt !== null, true);
      assert.deepEqual(
        (await mfaOf(u)).rememberedDevices.map((d: { id: string }) => d.id),
        [device.id],
      );

      // The cookie is no pass for anybody else.
      const other = await f.user();
      await enroll(other);
      await challenge(other, { cookie: remember });

      assert.equal(
        (await api.del(`/auth/mfa/remembered-devices/${device.id}`, other)).status,
        404,
        "another person's device is out of reach",
      );
      assert.equal((await api.del(`/auth/mfa/remembered-devices/${device.id}`, u)).status, 204);
      assert.equal((await audit('auth.mfa_device_revoked', u.id)).length, 1);
      assertError(await api.del(`/auth/mfa/remembered-devices/${device.id}`, u), 404, 'NOT_FOUND');

      await challenge(u, { cookie: remember });
    });

    test('a remembered device is forgotten after 30 days', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const { mfaToken } = await challenge(u);
      const done = await post('/auth/login/mfa/totp', { mfaToken, code: await totp(secret), rememberDevice: true });
      const remember = cookiePair(done, REMEMBER);
      hub.clock.advanceMinutes(30 * 24 * 60 + 1);
      const again = await challenge(u, { cookie: remember });
      const back = await post('/auth/login/mfa/totp', { mfaToken: again.mfaToken, code: await totp(secret) });
      assert.equal(back.status, 200, back.text);
      assert.deepEqual(
        (await api.get('/auth/mfa/remembered-devices', { cookie: cookieFrom(back) })).body.rememberedDevices,
        [],
        'expired devices are not listed',
      );
    });
  });

  describe('disable, backup codes and admin reset', () => {
    test('disable needs the password and wipes secret, codes, passkeys and remembered devices; login is one step again', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const { mfaToken } = await challenge(u);
      await post('/auth/login/mfa/totp', { mfaToken, code: await totp(secret), rememberDevice: true });

      assertError(await api.post('/auth/mfa/disable', { password: 'not-the-password' }, u), 400, 'WRONG_PASSWORD');
      assert.equal((await mfaOf(u)).enabled, true);
      assert.equal((await api.post('/auth/mfa/disable', { password: u.password }, u)).status, 204);
      assert.equal((await audit('auth.mfa_disabled_self', u.id)).length, 1);

      const wiped = await mfaOf(u);
      assert.equal(wiped.enabled, false);
      assert.equal(wiped.backupCodesRemaining, 0);
      assert.deepEqual(wiped.rememberedDevices, []);
      for (const table of ['mfa_accounts', 'mfa_backup_codes', 'mfa_passkeys', 'mfa_remembered_devices', 'mfa_challenges']) {
        const n = (await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [u.id])).n;
        assert.equal(n, 0, `${table} wiped`);
      }
      const res = await login(u);
      assert.equal(res.status, 200);
      assert.equal(res.body.user.id, u.id);
      assertError(await api.post('/auth/mfa/disable', { password: u.password }, u), 409, 'MFA_NOT_ENABLED');
    });

    test('enrollmentRequired follows the hub switch require_admin_mfa (off by default); hub admins cannot disable MFA: 403', async () => {
      const admin = await f.user({ admin: true });
      assert.equal((await mfaOf(admin)).enrollmentRequired, false, 'off by default: advice, not a requirement');
      assert.equal((await api.get('/admin/users', admin)).status, 200);
      await setRequireAdminMfa(true);
      try {
        assert.equal((await mfaOf(admin)).enrollmentRequired, true);
        assert.equal((await mfaOf(await f.user())).enrollmentRequired, false, 'people who are not hub admins are not asked');
        await enroll(admin);
        const m = await mfaOf(admin);
        assert.equal(m.enabled, true);
        assert.equal(m.enrollmentRequired, false);
      } finally {
        await setRequireAdminMfa(false);
      }
      assertError(await api.post('/auth/mfa/disable', { password: admin.password }, admin), 403, 'HUB_ADMIN_MFA_REQUIRED');
      assert.equal((await mfaOf(admin)).enabled, true);
      assert.equal((await audit('auth.mfa_disabled_self', admin.id)).length, 0);
    });

    test('with require_admin_mfa on, an unenrolled hub admin reaches only the own account and MFA enrolment until enrolled', async () => {
      const admin = await f.user({ admin: true });
      const person = await f.user();
      await setRequireAdminMfa(true);
      try {
        // Everything but the own account answers 403 MFA_ENROLLMENT_REQUIRED, by JWT and by cookie alike.
        assertError(await api.get('/admin/users', admin), 403, 'MFA_ENROLLMENT_REQUIRED');
        assertError(await api.get('/settings/platform', admin), 403, 'MFA_ENROLLMENT_REQUIRED');
        assertError(await api.post('/auth/create-tenant', { name: 'Admin Team' }, admin), 403, 'MFA_ENROLLMENT_REQUIRED');
        const signedIn = await login(admin);
        assert.equal(signedIn.status, 200, signedIn.text);
        assertError(await api.get('/admin/users', { cookie: cookieFrom(signedIn) }), 403, 'MFA_ENROLLMENT_REQUIRED');
        // The own account and enrolment stay open.
        assert.equal((await api.get('/auth/me', admin)).status, 200);
        assert.equal((await api.put('/auth/me/profile', { name: 'Admin Enrolling' }, admin)).status, 200);
        // Others are not held back: a person who is not a hub admin, and the internal key.
        assert.equal((await api.post('/auth/create-tenant', { name: 'Person Team' }, person)).status, 201);
        assert.equal((await api.get('/admin/users', f.internal)).status, 200);
        await enroll(admin);
        assert.equal((await api.get('/admin/users', admin)).status, 200);
      } finally {
        await setRequireAdminMfa(false);
      }
      const other = await f.user({ admin: true });
      assert.equal((await api.get('/admin/users', other)).status, 200, 'with the switch off, advice only');
    });

    test('regenerating backup codes needs the password; the old set stops working', async () => {
      const u = await f.user();
      const { backupCodes: old } = await enroll(u);
      assertError(await api.post('/auth/mfa/backup-codes/regenerate', { password: 'not-the-password' }, u), 400, 'WRONG_PASSWORD');
      const res = await api.post('/auth/mfa/backup-codes/regenerate', { password: u.password }, u);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.backupCodes.length, 10);
      assert.equal((await audit('auth.mfa_backup_codes_regenerated', u.id)).length, 1);

      const { mfaToken } = await challenge(u);
      assertError(await post('/auth/login/mfa/backup', { mfaToken, code: old[0] }), 401, 'INVALID_MFA_CODE');
      assert.equal((await post('/auth/login/mfa/backup', { mfaToken, code: res.body.backupCodes[0] })).status, 200);

      const plain = await f.user();
      assertError(await api.post('/auth/mfa/backup-codes/regenerate', { password: plain.password }, plain), 409, 'MFA_NOT_ENABLED');
    });

    test('a hub admin resets a person’s MFA (lost device); nobody else may, and not their own', async () => {
      const u = await f.user();
      await enroll(u);
      const admin = await f.user({ admin: true });
      const member = await f.user();

      assertError(await api.post(`/auth/mfa/admin/users/${u.id}/reset`, undefined, member), 403, 'FORBIDDEN');
      assertError(await api.post(`/auth/mfa/admin/users/${u.id}/reset`, undefined, u), 403, 'FORBIDDEN');
      assertError(await api.post(`/auth/mfa/admin/users/${admin.id}/reset`, undefined, admin), 403, 'CANNOT_RESET_OWN_MFA');
      assertError(await api.post(`/auth/mfa/admin/users/00000000-0000-4000-8000-000000000000/reset`, undefined, admin), 404, 'NOT_FOUND');

      assert.equal((await api.post(`/auth/mfa/admin/users/${u.id}/reset`, undefined, admin)).status, 204);
      const entries = await audit('auth.mfa_reset_by_admin', u.id);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].actor_user_id, admin.id);
      assert.deepEqual(entries[0].details, { hadMfa: true });
      assert.equal((await mfaOf(u)).enabled, false);
      const res = await login(u);
      assert.equal(res.body.user?.id, u.id, 'signs in with the password alone, ready to enroll again');
    });
  });

  describe('passkeys', () => {
    async function registerPasskey(u: TestUser, name?: string) {
      const auth = new SoftAuthenticator(ORIGIN);
      const begin = await api.post('/auth/mfa/passkeys/register/begin', undefined, u);
      assert.equal(begin.status, 200, begin.text);
      const finish = await api.post(
        '/auth/mfa/passkeys/register/finish',
        { response: auth.register(begin.body), ...(name ? { name } : {}) },
        u,
      );
      assert.equal(finish.status, 201, finish.text);
      return { auth, passkey: finish.body };
    }

    test('registration needs MFA on: 409 MFA_NOT_ENABLED', async () => {
      const u = await f.user();
      assertError(await api.post('/auth/mfa/passkeys/register/begin', undefined, u), 409, 'MFA_NOT_ENABLED');
    });

    test('register with attestation none, then sign in with a real assertion; the counter moves forward', async () => {
      const u = await f.user();
      await enroll(u);
      const begin = await api.post('/auth/mfa/passkeys/register/begin', undefined, u);
      assert.equal(begin.status, 200, begin.text);
      assert.equal(begin.body.rp.id, 'chorus.test', 'relying-party id from CHORUS_PUBLIC_URL');
      assert.equal(begin.body.attestation, 'none');
      assert.equal(begin.body.user.name, u.email);
      assert.ok(begin.body.challenge);
      assert.ok(begin.body.pubKeyCredParams.some((p: { alg: number }) => p.alg === -7));

      const auth = new SoftAuthenticator(ORIGIN);
      const finish = await api.post('/auth/mfa/passkeys/register/finish', { response: auth.register(begin.body), name: 'Laptop' }, u);
      assert.equal(finish.status, 201, finish.text);
      assert.deepEqual(Object.keys(finish.body).sort(), ['createdAt', 'id', 'lastUsedAt', 'name']);
      assert.equal(finish.body.name, 'Laptop');
      assert.equal(finish.body.lastUsedAt, null);
      assert.equal((await audit('auth.mfa_passkey_added', u.id)).length, 1);
      const list = await api.get('/auth/mfa/passkeys', u);
      assert.deepEqual(list.body.passkeys, [finish.body]);
      assert.deepEqual((await mfaOf(u)).passkeys, [finish.body]);

      // The same begin cannot be finished twice.
      assertError(
        await api.post('/auth/mfa/passkeys/register/finish', { response: auth.register(begin.body) }, u),
        400,
        'PASSKEY_NOT_STARTED',
      );

      const c = await challenge(u);
      assert.equal(c.hasPasskeys, true);
      const options = await post('/auth/login/mfa/passkey/begin', { mfaToken: c.mfaToken });
      assert.equal(options.status, 200, options.text);
      assert.equal(options.body.rpId, 'chorus.test');
      assert.deepEqual(
        options.body.allowCredentials.map((x: { id: string }) => x.id),
        [auth.id],
      );

      const done = await post('/auth/login/mfa/passkey/finish', { mfaToken: c.mfaToken, response: auth.assert(options.body) });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.user.id, u.id);
      assert.ok(cookieFrom(done));
      assert.deepEqual(
        (await audit('user.login', u.id)).map((r) => r.details),
        [{ mfa: 'passkey' }],
      );
      const used = (await api.get('/auth/mfa/passkeys', u)).body.passkeys[0];
      assert.ok(used.lastUsedAt, 'last use recorded');
      const stored = await hub.sql.one<{ n: number }>('SELECT sign_count::int AS n FROM mfa_passkeys WHERE user_id = $1', [u.id]);
      assert.equal(stored.n, 1);

      // With rememberDevice, a passkey sign-in remembers the device like the others.
      const c2 = await challenge(u);
      const o2 = await post('/auth/login/mfa/passkey/begin', { mfaToken: c2.mfaToken });
      const d2 = await post('/auth/login/mfa/passkey/finish', {
        mfaToken: c2.mfaToken,
        response: auth.assert(o2.body),
        rememberDevice: true,
      });
      assert.equal(d2.status, 200, d2.text);
      assert.ok(setCookie(d2, REMEMBER));
    });

    test('a wrong signature is refused and counts as a failed challenge', async () => {
      const u = await f.user();
      const { secret } = await enroll(u);
      const { auth } = await registerPasskey(u);
      const { mfaToken } = await challenge(u);
      const options = await post('/auth/login/mfa/passkey/begin', { mfaToken });
      assertError(
        await post('/auth/login/mfa/passkey/finish', { mfaToken, response: auth.assert(options.body, { signWith: otherKey() }) }),
        401,
        'PASSKEY_REJECTED',
      );
      assert.deepEqual(
        (await audit('user.mfa_login_failed', u.id)).map((r) => r.details),
        [{ method: 'passkey', reason: 'invalid_assertion' }],
      );
      assert.equal((await userRow(u.id)).failed_login_attempts, 1);

      // The WebAuthn challenge was spent by that try: a new begin is needed.
      assertError(
        await post('/auth/login/mfa/passkey/finish', { mfaToken, response: auth.assert(options.body) }),
        400,
        'PASSKEY_NOT_STARTED',
      );
      // A wrong origin is refused too.
      const o2 = await post('/auth/login/mfa/passkey/begin', { mfaToken });
      assertError(
        await post('/auth/login/mfa/passkey/finish', { mfaToken, response: auth.assert(o2.body, { origin: 'http://evil.test' }) }),
        401,
        'PASSKEY_REJECTED',
      );
      // The challenge stays open for the right factor.
      assert.equal((await post('/auth/login/mfa/totp', { mfaToken, code: await totp(secret) })).status, 200);
    });

    test('a replayed (non-increasing) sign counter is refused', async () => {
      const u = await f.user();
      await enroll(u);
      const { auth } = await registerPasskey(u);
      const a = await challenge(u);
      const o1 = await post('/auth/login/mfa/passkey/begin', { mfaToken: a.mfaToken });
      assert.equal(
        (await post('/auth/login/mfa/passkey/finish', { mfaToken: a.mfaToken, response: auth.assert(o1.body, { counter: 5 }) })).status,
        200,
      );

      const b = await challenge(u);
      const o2 = await post('/auth/login/mfa/passkey/begin', { mfaToken: b.mfaToken });
      assertError(
        await post('/auth/login/mfa/passkey/finish', { mfaToken: b.mfaToken, response: auth.assert(o2.body, { counter: 5 }) }),
        401,
        'PASSKEY_REJECTED',
      );
      const o3 = await post('/auth/login/mfa/passkey/begin', { mfaToken: b.mfaToken });
      assertError(
        await post('/auth/login/mfa/passkey/finish', { mfaToken: b.mfaToken, response: auth.assert(o3.body, { counter: 4 }) }),
        401,
        'PASSKEY_REJECTED',
      );
      assert.deepEqual(
        (await audit('user.mfa_login_failed', u.id)).map((r) => r.details),
        [
          { method: 'passkey', reason: 'counter_not_increased' },
          { method: 'passkey', reason: 'counter_not_increased' },
        ],
      );
      const o4 = await post('/auth/login/mfa/passkey/begin', { mfaToken: b.mfaToken });
      assert.equal(
        (await post('/auth/login/mfa/passkey/finish', { mfaToken: b.mfaToken, response: auth.assert(o4.body, { counter: 6 }) })).status,
        200,
      );
    });

    test('an attestation for another challenge is refused; a passkey of another person does not sign this one in', async () => {
      const u = await f.user();
      await enroll(u);
      const begin = await api.post('/auth/mfa/passkeys/register/begin', undefined, u);
      const auth = new SoftAuthenticator(ORIGIN);
      const forged = auth.register(begin.body, { challenge: Buffer.from('not-the-challenge').toString('base64url') });
      assertError(await api.post('/auth/mfa/passkeys/register/finish', { response: forged }, u), 400, 'PASSKEY_REJECTED');
      assert.deepEqual((await api.get('/auth/mfa/passkeys', u)).body.passkeys, []);

      const other = await f.user();
      await enroll(other);
      const { auth: theirs } = await registerPasskey(other);
      await registerPasskey(u);
      const { mfaToken } = await challenge(u);
      const options = await post('/auth/login/mfa/passkey/begin', { mfaToken });
      assertError(
        await post('/auth/login/mfa/passkey/finish', { mfaToken, response: theirs.assert({ ...options.body }) }),
        401,
        'PASSKEY_REJECTED',
      );
      assert.deepEqual(
        (await audit('user.mfa_login_failed', u.id)).map((r) => r.details),
        [{ method: 'passkey', reason: 'unknown_passkey' }],
      );
    });

    test('passkey sign-in without passkeys answers 400 NO_PASSKEYS; removing a passkey is audited and only for its owner', async () => {
      const u = await f.user();
      await enroll(u);
      const c = await challenge(u);
      assert.equal(c.hasPasskeys, false);
      assertError(await post('/auth/login/mfa/passkey/begin', { mfaToken: c.mfaToken }), 400, 'NO_PASSKEYS');

      const { passkey } = await registerPasskey(u);
      assert.equal(passkey.name, 'Passkey 1', 'a default name');
      const stranger = await f.user();
      assertError(await api.del(`/auth/mfa/passkeys/${passkey.id}`, stranger), 404, 'NOT_FOUND');
      assert.equal((await api.del(`/auth/mfa/passkeys/${passkey.id}`, u)).status, 204);
      assert.equal((await audit('auth.mfa_passkey_removed', u.id)).length, 1);
      assertError(await api.del(`/auth/mfa/passkeys/${passkey.id}`, u), 404, 'NOT_FOUND');
      assert.equal((await challenge(u)).hasPasskeys, false);
    });
  });
});
