/**
 * Common and breached passwords are refused (issue 36 point 6; NIST SP 800-63B §5.1.1.2): at
 * registration and at a password change, with their own error code, and the plain variations a
 * guesser tries first ("Sunshine2024!") with them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { isCommonPassword } from '../src/modules/users/common-passwords.ts';

describe('common passwords', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
  });
  after(async () => {
    await hub.close();
  });

  test('the list and its plain variations', () => {
    for (const p of ['password123', 'qwertyuiop', '1234567890', 'Sunshine2024!', '!!Dragon123456', 'BASKETBALL'])
      assert.ok(isCommonPassword(p), p);
    for (const p of ['correct-horse-battery', 'meadow pipit at dawn', 'x7#kQ9!pLm2z']) assert.ok(!isCommonPassword(p), p);
  });

  test('registration and a password change refuse a common password with PASSWORD_TOO_COMMON', async () => {
    const email = `common-${Date.now()}@example.org`;
    assertError(await api.post('/auth/register', { name: 'Common', email, password: 'password123' }), 400, 'PASSWORD_TOO_COMMON');
    const ok = await api.post('/auth/register', { name: 'Common', email, password: 'meadow pipit at dawn' });
    assert.ok(ok.status === 201 || ok.status === 200, ok.text);
    const u = await factories(hub).user();
    assertError(
      await api.put('/auth/me/password', { currentPassword: u.password, newPassword: 'Sunshine2024!' }, u),
      400,
      'PASSWORD_TOO_COMMON',
    );
  });
});
