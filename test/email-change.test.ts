/**
 * Changing one's email address (issue 33 item 3) over HTTP. PUT /auth/me/profile with a stolen
 * session used to move the account to the thief's mailbox at once, where the next reset link
 * then went. Now: the new address takes effect only through a single-use link mailed to it
 * (24 hours), the old address is told at once with a 7-day undo link, sessions stay, and undoing
 * takes the account back (old address, every session ended, reset links dead, password replaced).
 * Unknown tokens spend the guess limit. Mail is read from the hub's record of sent mail.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { assertError, client, ipSequence } from './helpers/http.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('email change', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  const newIp = ipSequence('203.0');

  before(async () => {
    hub = await startHub({ env: { LIMIT_TOKEN_GUESSES: '3/15m', LIMIT_RESET_MAIL: '3/1h' } });
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  const mailsTo = (email: string) => hub.infra.mail.recorded().filter((m) => m.to === email);
  const lastMailTo = (email: string) => mailsTo(email).at(-1);
  const linkIn = (text: string | undefined, page: string) => {
    const m = new RegExp(`http://chorus\\.test/${page}\\?token=([0-9a-f]{64})`).exec(text ?? '');
    assert.ok(m, `a ${page} link in: ${text}`);
    return m[1];
  };
  const confirmLink = (email: string) => linkIn(lastMailTo(email)?.text, 'confirm-email');
  const undoLink = (email: string) => linkIn(lastMailTo(email)?.text, 'undo-email-change');
  const anon = (path: string, body: unknown, ip = newIp()) => api.call('POST', path, { body, headers: { 'x-forwarded-for': ip } });
  const confirm = (token: string, ip?: string) => anon('/auth/email-change/confirm', { token }, ip);
  const undo = (token: string, ip?: string) => anon('/auth/email-change/undo', { token }, ip);
  const login = (email: string, password: string) => anon('/auth/login', { email, password });
  const emailOf = async (id: string) => (await hub.sql.one<{ email: string }>('SELECT email FROM users WHERE id = $1', [id])).email;
  const actions = async (id: string) =>
    (
      await hub.sql.query<{ action: string; details: Record<string, unknown> }>(
        `SELECT action, details FROM audit_log WHERE target_id = $1 AND action LIKE 'user.email_change%' ORDER BY id`,
        [id],
      )
    ).map((r) => `${r.action}${r.details.reason ? `:${r.details.reason}` : ''}`);
  const fresh = () => `new-${crypto.randomBytes(4).toString('hex')}@example.net`;

  async function requestChange(u: TestUser, email: string, name?: string) {
    const res = await api.put('/auth/me/profile', { ...(name ? { name } : {}), email }, u);
    assert.equal(res.status, 200, res.text);
    return res;
  }

  test('a new address waits for its link: the answer and /auth/me show the current one and the change; both inboxes are mailed', async () => {
    const u = await f.user();
    const to = fresh();
    const res = await requestChange(u, to, 'Renamed Person');
    // The name changes at once, the address does not.
    assert.equal(res.body.user.name, 'Renamed Person');
    assert.equal(res.body.user.email, u.email);
    assert.equal(res.body.emailChange.newEmail, to);
    const ttl = new Date(res.body.emailChange.expiresAt).getTime() - hub.clock.now().getTime();
    assert.ok(ttl > DAY - 60_000 && ttl <= DAY, `the link works for 24 hours, got ${ttl} ms`);
    assert.equal(await emailOf(u.id), u.email);
    const me = await api.get('/auth/me', u);
    assert.equal(me.body.user.email, u.email);
    assert.equal(me.body.emailChange.newEmail, to);

    // The new address gets the confirmation link, the old one the news and the undo link.
    const toNew = lastMailTo(to)!;
    assert.match(toNew.subject, /Confirm/);
    const confirmToken = linkIn(toNew.text, 'confirm-email');
    const toOld = lastMailTo(u.email)!;
    assert.ok(toOld.text.includes(to), 'the old address learns which address is asked for');
    const undoToken = linkIn(toOld.text, 'undo-email-change');

    // The tokens are kept as SHA-256 hashes only.
    const row = await hub.sql.one<{ confirm_token_hash: string; undo_token_hash: string }>(
      'SELECT confirm_token_hash, undo_token_hash FROM email_changes WHERE user_id = $1',
      [u.id],
    );
    assert.equal(row.confirm_token_hash, crypto.createHash('sha256').update(confirmToken).digest('hex'));
    assert.equal(row.undo_token_hash, crypto.createHash('sha256').update(undoToken).digest('hex'));

    // Until confirmed, the new address signs nobody in; the old one still does.
    assertError(await login(to, u.password), 401, 'INVALID_CREDENTIALS');
    assert.equal((await login(u.email, u.password)).status, 200);
    assert.deepEqual(await actions(u.id), ['user.email_change_requested']);
    const profile = await hub.sql.query<{ details: { fields: string[] } }>(
      `SELECT details FROM audit_log WHERE action = 'user.profile_updated' AND target_id = $1`,
      [u.id],
    );
    assert.deepEqual(
      profile.map((p) => p.details.fields),
      [['name']],
    );
  });

  test('the link confirms once: the address moves, the session that asked stays, and reset mail goes to the new address', async () => {
    const u = await f.user();
    const to = fresh();
    await requestChange(u, to);
    const token = confirmLink(to);
    const res = await confirm(token);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { email: to });
    assert.equal(await emailOf(u.id), to);

    const me = await api.get('/auth/me', u);
    assert.equal(me.status, 200, 'sessions stay as they are');
    assert.equal(me.body.user.email, to);
    assert.equal(me.body.emailChange, null);
    assert.equal((await login(to, u.password)).status, 200);
    assertError(await login(u.email, u.password), 401, 'INVALID_CREDENTIALS');
    const resetMails = mailsTo(to).length;
    assert.equal((await anon('/auth/forgot-password', { email: to })).status, 204);
    assert.equal(mailsTo(to).length, resetMails + 1);
    linkIn(lastMailTo(to)?.text, 'reset-password');

    assertError(await confirm(token), 400, 'TOKEN_USED');
    assert.deepEqual(await actions(u.id), ['user.email_change_requested', 'user.email_change_confirmed', 'user.email_change_failed:used']);
  });

  test('a confirmation link works for 24 hours', async () => {
    const u = await f.user();
    const to = fresh();
    await requestChange(u, to);
    const token = confirmLink(to);
    hub.clock.advance(DAY + 1000);
    assertError(await confirm(token), 400, 'TOKEN_EXPIRED');
    assert.equal(await emailOf(u.id), u.email);
    assert.equal((await api.get('/auth/me', u)).body.emailChange, null, 'an expired change is no longer shown');
  });

  test('a newer request replaces the older one, and the person may cancel the change waiting', async () => {
    const u = await f.user();
    const first = fresh();
    await requestChange(u, first);
    const firstToken = confirmLink(first);
    const second = fresh();
    const res = await requestChange(u, second);
    assert.equal(res.body.emailChange.newEmail, second);
    assertError(await confirm(firstToken), 400, 'TOKEN_USED');

    const secondToken = confirmLink(second);
    assert.equal((await api.del('/auth/me/email-change', u)).status, 204);
    assert.equal((await api.get('/auth/me', u)).body.emailChange, null);
    assertError(await confirm(secondToken), 400, 'TOKEN_USED');
    assert.equal(await emailOf(u.id), u.email);
    // Sending the current address (the account page sends both fields) leaves a waiting change alone.
    await requestChange(u, first);
    const kept = await requestChange(u, u.email.toUpperCase(), 'Same Address');
    assert.equal(kept.body.emailChange.newEmail, first);
    assert.ok((await actions(u.id)).includes('user.email_change_cancelled'));
  });

  test('undo after a takeover: the old address returns, every session ends, the thief’s reset link dies, the password must be reset', async () => {
    const victim = await f.user();
    const thief = fresh();
    // The thief holds the victim's JWT: asks for their own address, confirms it, asks for a reset link.
    await requestChange(victim, thief);
    const undoToken = undoLink(victim.email);
    assert.equal((await confirm(confirmLink(thief))).status, 200);
    assert.equal((await anon('/auth/forgot-password', { email: thief })).status, 204);
    const thiefReset = linkIn(lastMailTo(thief)?.text, 'reset-password');

    // The victim opens the undo link from the old mailbox.
    const res = await undo(undoToken);
    assert.equal(res.status, 204, res.text);
    assert.equal(await emailOf(victim.id), victim.email);
    assertError(await api.get('/auth/me', victim), 401, 'UNAUTHENTICATED');
    assertError(await anon('/auth/reset-password', { token: thiefReset, password: 'thief-passphrase-1' }), 400, 'TOKEN_USED');
    // Nobody knows the password now: not even the old one signs in.
    assertError(await login(victim.email, victim.password), 401, 'INVALID_CREDENTIALS');
    assertError(await login(thief, victim.password), 401, 'INVALID_CREDENTIALS');
    // A reset through the restored address gets the victim back in.
    assert.equal((await anon('/auth/forgot-password', { email: victim.email })).status, 204);
    const reset = linkIn(lastMailTo(victim.email)?.text, 'reset-password');
    assert.equal((await anon('/auth/reset-password', { token: reset, password: 'my-own-passphrase-2' })).status, 204);
    assert.equal((await login(victim.email, 'my-own-passphrase-2')).status, 200);

    assertError(await undo(undoToken), 400, 'TOKEN_USED');
    const undone = await hub.sql.one<{ details: { restored: boolean } }>(
      `SELECT details FROM audit_log WHERE action = 'user.email_change_undone' AND target_id = $1`,
      [victim.id],
    );
    assert.equal(undone.details.restored, true);
  });

  test('undo before confirmation cancels the change; the undo link works for 7 days', async () => {
    const u = await f.user();
    const to = fresh();
    await requestChange(u, to);
    const confirmToken = confirmLink(to);
    assert.equal((await undo(undoLink(u.email))).status, 204);
    assertError(await confirm(confirmToken), 400, 'TOKEN_USED');
    assert.equal(await emailOf(u.id), u.email);

    const late = await f.user();
    const lateTo = fresh();
    await requestChange(late, lateTo);
    const lateUndo = undoLink(late.email);
    assert.equal((await confirm(confirmLink(lateTo))).status, 200);
    hub.clock.advance(7 * DAY + 1000);
    assertError(await undo(lateUndo), 400, 'TOKEN_EXPIRED');
    assert.equal(await emailOf(late.id), lateTo);
  });

  test("another account's address: 409 EMAIL_TAKEN when asked for, and when confirmed after someone took it", async () => {
    const u = await f.user();
    const other = await f.user();
    assertError(await api.put('/auth/me/profile', { email: other.email.toUpperCase() }, u), 409, 'EMAIL_TAKEN');
    const to = fresh();
    await requestChange(u, to);
    const token = confirmLink(to);
    await f.user({ email: to });
    assertError(await confirm(token), 409, 'EMAIL_TAKEN');
    assert.equal(await emailOf(u.id), u.email);
  });

  test('each change mails two inboxes: past the per-account budget, 429 and no mail', async () => {
    const u = await f.user();
    for (let i = 0; i < 3; i++) await requestChange(u, fresh());
    const before = hub.infra.mail.recorded().length;
    const refused = await api.put('/auth/me/profile', { email: fresh() }, u);
    assertError(refused, 429, 'RATE_LIMITED');
    assert.equal(hub.infra.mail.recorded().length, before);
  });

  test('unknown tokens answer 400 INVALID_TOKEN and spend the guess limit: then 429, even for a real link', async () => {
    const u = await f.user();
    const to = fresh();
    await requestChange(u, to);
    const ip = newIp();
    assertError(await confirm('ab'.repeat(32), ip), 400, 'INVALID_TOKEN');
    assertError(await undo('cd'.repeat(32), ip), 400, 'INVALID_TOKEN');
    assertError(await confirm('ef'.repeat(32), ip), 400, 'INVALID_TOKEN');
    assertError(await confirm(confirmLink(to), ip), 429, 'RATE_LIMITED');
    // Another address is not held back; a malformed token is refused before any lookup.
    assertError(await confirm('not-a-token'), 400, 'VALIDATION_FAILED');
    assert.equal((await confirm(confirmLink(to))).status, 200);
  });
});
