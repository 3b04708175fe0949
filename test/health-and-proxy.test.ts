/**
 * GET /api/health (spec §9: the health endpoint returns the hub version) and a hub started with
 * TRUST_PROXY=false (spec §6: the audit IP comes from the forwarded-for header only where the
 * proxy is trusted): forwarded headers are then ignored for the audit IP, the last-login IP
 * and the Secure flag of the session cookie.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';
import { client } from './helpers/http.ts';

const PACKAGE_VERSION: string = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8')).version;

describe('health, and a hub that does not trust a proxy', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;

  before(async () => {
    hub = await startHub({ env: { TRUST_PROXY: 'false' } });
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  test('X-Forwarded-For is ignored: the audit entry and the last-login IP carry the socket address', async () => {
    const u = await f.user();
    const res = await api.call('POST', '/auth/login', {
      body: { email: u.email, password: u.password },
      headers: { 'x-forwarded-for': '203.0.113.200', 'x-forwarded-proto': 'https' },
    });
    assert.equal(res.status, 200, res.text);
    const [entry] = await hub.sql.query<{ ip: string | null }>(
      `SELECT ip FROM audit_log WHERE action = 'user.login' AND actor_user_id = $1`,
      [u.id],
    );
    assert.equal(entry.ip, '127.0.0.1');
    const row = await hub.sql.one<{ last_login_ip: string | null }>('SELECT last_login_ip FROM users WHERE id = $1', [u.id]);
    assert.equal(row.last_login_ip, '127.0.0.1');
    const set = res.headers.getSetCookie().find((c) => c.startsWith('chorus_session='))!;
    assert.ok(
      !set
        .split(';')
        .map((a) => a.trim().toLowerCase())
        .includes('secure'),
      `X-Forwarded-Proto is not believed either: ${set}`,
    );
  });

  test('the per-IP sign-in limit counts the socket address, whatever X-Forwarded-For says', async () => {
    hub.clock.advanceMinutes(16); // the window starts empty, whatever earlier tests signed in
    for (let i = 0; i < 20; i++) {
      const r = await api.call('POST', '/auth/login', {
        body: { email: `nobody-${i}@example.org`, password: 'whatever-password' },
        headers: { 'x-forwarded-for': `198.18.0.${i + 1}` },
      });
      assert.equal(r.status, 401, r.text);
    }
    const limited = await api.call('POST', '/auth/login', {
      body: { email: 'nobody@example.org', password: 'whatever-password' },
      headers: { 'x-forwarded-for': '198.18.1.1' },
    });
    assert.equal(limited.status, 429, 'a fresh forwarded address does not escape the limit');
    const rows = await hub.sql.query<{ ip: string }>(`SELECT DISTINCT ip FROM audit_log WHERE action = 'user.login_failed'`);
    assert.deepEqual(
      rows.map((r) => r.ip),
      ['127.0.0.1'],
    );
  });

  test("every answer carries an X-Request-Id: a proxy's well-formed id is kept, anything else replaced by a UUID", async () => {
    const fresh = await fetch(`${hub.url}/api/health`);
    assert.match(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const kept = await fetch(`${hub.url}/api/health`, { headers: { 'x-request-id': 'edge-4711.a' } });
    assert.equal(kept.headers.get('x-request-id'), 'edge-4711.a');
    const bad = await fetch(`${hub.url}/api/nope`, { headers: { 'x-request-id': 'bad id <script>' } });
    assert.equal(bad.status, 404);
    assert.match(bad.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.notEqual(fresh.headers.get('x-request-id'), bad.headers.get('x-request-id'));
  });

  test('GET /api/health answers {status: "ok", version: the hub version, timestamp: the injected clock as ISO}', async () => {
    // Frozen far from real time, so only the injected clock can produce this timestamp (last test: the clock stays frozen).
    hub.clock.freeze(new Date('2031-05-06T07:08:09.123Z'));
    const res = await api.get('/health');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { status: 'ok', version: PACKAGE_VERSION, timestamp: '2031-05-06T07:08:09.123Z' });
    assert.ok(!(await api.get('/health', { headers: { authorization: 'Bearer not-a-credential' } })).body.error, 'public: any caller');
  });
});
