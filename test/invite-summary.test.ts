/**
 * What an invite link offers (issue 23, item 7): GET /auth/invites/summary/:token names the team,
 * the inviter and the role, so the invite and registration pages can say who invites whom to
 * what. Anyone holding the link may read it; unknown, used, revoked and expired links answer the
 * same 404, and neither the inviter's email nor the invited address is ever in the answer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';

describe('invite summary', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;

  const invite = async (role = 'viewer', email?: string) => {
    const res = await api.post('/auth/invites', { tenantId: team.id, role, ...(email ? { email } : {}) }, owner);
    assert.equal(res.status, 201, res.text);
    return res.body as { id: string; token: string; expiresAt: string };
  };

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user({ name: 'Olive Owner', email: 'olive.owner@example.org' });
    team = await f.team(owner, 'Marsh Listeners');
  });
  after(() => hub.close());

  test('anyone with the link reads {teamName, inviterName, role, expiresAt}, never an email', async () => {
    const i = await invite('viewer', 'newcomer@example.org');
    const res = await api.get(`/auth/invites/summary/${i.token}`, null);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { teamName: 'Marsh Listeners', inviterName: 'Olive Owner', role: 'viewer', expiresAt: i.expiresAt });
    assert.ok(!res.text.includes('@'), 'no email address in the answer');
    // A signed-in person reads the same.
    assert.deepEqual((await api.get(`/auth/invites/summary/${i.token}`, owner)).body, res.body);
  });

  test('unknown, revoked, used and expired links answer the same 404; a malformed token 400', async () => {
    assertError(await api.get(`/auth/invites/summary/${'a'.repeat(64)}`, null), 404, 'NOT_FOUND');
    assertError(await api.get('/auth/invites/summary/not-a-token', null), 400, 'VALIDATION_FAILED');

    const revoked = await invite('member');
    assert.equal((await api.del(`/auth/invites/${revoked.id}?tenantId=${team.id}`, owner)).status, 204);
    assertError(await api.get(`/auth/invites/summary/${revoked.token}`, null), 404, 'NOT_FOUND');

    const used = await invite('member');
    const joiner = await factories(hub).user();
    assert.equal((await api.post('/auth/invites/accept', { token: used.token }, joiner)).status, 200);
    assertError(await api.get(`/auth/invites/summary/${used.token}`, null), 404, 'NOT_FOUND');

    const old = await invite('member');
    await hub.sql.query('UPDATE invites SET expires_at = $2 WHERE id = $1', [old.id, hub.clock.now()]);
    assertError(await api.get(`/auth/invites/summary/${old.token}`, null), 404, 'NOT_FOUND');
  });

  test('unknown links spend the guess limit of invite and share tokens: past it 429, even for a real link; other addresses pass', async () => {
    const real = await invite('viewer');
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    const ip = '198.18.33.8';
    const budget = hub.infra.config.limits.tokenGuesses.points;
    for (let i = 0; i < budget; i++) {
      const guess = i.toString(16).padStart(64, '0');
      assertError(await api.call('GET', `/auth/invites/summary/${guess}`, from(ip)), 404, 'NOT_FOUND');
    }
    assertError(await api.call('GET', `/auth/invites/summary/${'f'.repeat(64)}`, from(ip)), 429, 'RATE_LIMITED');
    assertError(await api.call('GET', `/auth/invites/summary/${real.token}`, from(ip)), 429, 'RATE_LIMITED');
    // The same budget as invite acceptance: spent here, spent there.
    assertError(
      await api.call('POST', '/auth/invites/accept', { ...from(ip), body: { token: real.token }, as: owner }),
      429,
      'RATE_LIMITED',
    );
    assert.equal((await api.call('GET', `/auth/invites/summary/${real.token}`, from('198.18.33.9'))).status, 200);
  });
});
