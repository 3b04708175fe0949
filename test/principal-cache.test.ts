/**
 * The hub remembers a sign-in for a few seconds (src/modules/auth/principal-cache.ts): a read
 * answered from memory must never outlive a change made through the API, in this process or
 * another one sharing the database and the event bus.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { buildApp } from '../src/app.ts';
import { PRINCIPAL_TTL_MS } from '../src/modules/auth/principal-cache.ts';
import { waitFor } from './helpers/wait.ts';

describe('remembered sign-ins', () => {
  let hub: Hub;
  let f: ReturnType<typeof factories>;
  let api: ReturnType<typeof client>;
  // A second API process: its own services and memory, the same database and bus.
  let second: FastifyInstance;
  let api2: ReturnType<typeof client>;

  before(async () => {
    hub = await startHub();
    f = factories(hub);
    api = client(hub.url);
    second = (await buildApp(hub.infra, { logger: false })).app;
    await second.listen({ port: 0, host: '127.0.0.1' });
    const address = second.server.address();
    api2 = client(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
  });
  after(async () => {
    await second?.close();
    await hub?.close();
  });

  test('a principal is read once per interval: a change beside the API shows after the interval of the hub clock', async () => {
    const u = await f.user({ name: 'Before' });
    assert.equal((await api.get('/auth/me', u)).body.user.name, 'Before');
    await hub.sql.query(`UPDATE users SET name = 'After' WHERE id = $1`, [u.id]);
    assert.equal((await api.get('/auth/me', u)).body.user.name, 'Before', 'answered from memory within the interval');
    hub.clock.advance(PRINCIPAL_TTL_MS);
    assert.equal((await api.get('/auth/me', u)).body.user.name, 'After');
  });

  test('signing out ends the session at once, here and in the other process', async () => {
    const u = await f.user();
    assert.equal((await api.get('/auth/me', u)).status, 200);
    assert.equal((await api2.get('/auth/me', u)).status, 200);
    assert.equal((await api.post('/auth/logout', undefined, u)).status, 204);
    assertError(await api.get('/auth/me', u), 401, 'UNAUTHENTICATED');
    // The other process hears it over the bus; its clock does not move, so only the bus can make it forget.
    assert.equal(await notAnymore(() => api2.get('/auth/me', u)), 401);
  });

  test('a block by a hub admin takes effect on the next request, here and in the other process', async () => {
    const admin = await f.user({ admin: true });
    const u = await f.user();
    assert.equal((await api.get('/auth/me', u)).status, 200);
    assert.equal((await api2.get('/auth/me', u)).status, 200);
    assert.equal((await api.post(`/admin/users/${u.id}/block`, undefined, admin)).status, 200);
    assertError(await api.get('/auth/me', u), 401, 'UNAUTHENTICATED');
    assert.equal(await notAnymore(() => api2.get('/auth/me', u)), 401);
  });

  test('a role change by the team owner is what the next request is judged by', async () => {
    const w = await f.world();
    const viewer = await f.member(w.team, 'viewer');
    const mine = () => api.get('/auth/me', viewer).then((r) => r.body.tenants.find((m: { id: string }) => m.id === w.team.id)?.role);
    assert.equal(await mine(), 'viewer');
    const res = await api.put(`/admin/members/${viewer.membershipId}/role`, { role: 'member' }, w.owner);
    assert.equal(res.status, 200, res.text);
    assert.equal(await mine(), 'member');
  });
});

/** The first answer that is not 200, within two seconds of real time (the bus, not the clock, must do it). */
function notAnymore(read: () => Promise<{ status: number }>): Promise<number> {
  return waitFor(
    'an answer other than 200',
    async () => {
      const { status } = await read();
      return status !== 200 && status;
    },
    { timeoutMs: 2_000 },
  );
}
