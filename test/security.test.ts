/**
 * Security hardening (docs/security.md): whom the hub believes about client addresses, the abuse
 * limits and their statuses, the browser headers, and the Origin rule of the WebSocket.
 *
 * A peer other than loopback is simulated with Fastify's inject (remoteAddress): the test client
 * itself always connects from 127.0.0.1, which the default rule trusts as a local proxy. Limits run
 * with small budgets (LIMIT_* variables): the memory store keeps real time, not the test clock.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import mqtt from 'mqtt';
import WebSocket from 'ws';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { assertError, client, ipSequence, type Res } from './helpers/http.ts';

const STRANGER = '203.0.113.7';
const PROXY = '198.51.100.9';

/** A request from a given peer address, as Fastify would see it from the socket. */
async function fromPeer(hub: Hub, peer: string, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  return hub.app.inject({ method, url, remoteAddress: peer, headers, payload: body === undefined ? undefined : JSON.stringify(body) });
}

const jsonHeaders = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...extra });
const isSecure = (setCookie: string) =>
  setCookie
    .split(';')
    .map((a) => a.trim().toLowerCase())
    .includes('secure');

describe('security on a default hub (proxy trust: loopback only), with small abuse budgets', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  // Two octets: the sequence adds two more (a longer prefix would make values that are not addresses).
  const newIp = ipSequence('192.0');

  before(async () => {
    hub = await startHub({
      env: {
        LIMIT_REGISTER: '3/1h',
        LIMIT_RESET_MAIL: '2/1h',
        LIMIT_INVITE_ACCEPT: '2/1h',
        LIMIT_TOKEN_GUESSES: '3/15m',
        LIMIT_API_KEYS: '2/1h',
        LIMIT_MQTT_FAILURES: '2/10m',
      },
    });
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  const post = (path: string, body: unknown, ip: string, as?: TestUser) =>
    api.call('POST', path, { body, as, headers: { 'x-forwarded-for': ip } });

  describe('client addresses', () => {
    test('X-Forwarded-For from a peer that is not a proxy is ignored by the sign-in limit and in audit entries', async () => {
      hub.clock.advanceMinutes(16);
      for (let i = 0; i < 20; i++) {
        const r = await fromPeer(hub, STRANGER, 'POST', '/api/auth/login', jsonHeaders({ 'x-forwarded-for': `198.18.7.${i + 1}` }), {
          email: `nobody-${i}@example.org`,
          password: 'whatever-password',
        });
        assert.equal(r.statusCode, 401, r.body);
      }
      const limited = await fromPeer(hub, STRANGER, 'POST', '/api/auth/login', jsonHeaders({ 'x-forwarded-for': '198.18.8.1' }), {
        email: 'nobody@example.org',
        password: 'whatever-password',
      });
      assert.equal(limited.statusCode, 429, 'a rotated X-Forwarded-For does not escape the limit');
      assert.equal(JSON.parse(limited.body).error.code, 'RATE_LIMITED');
      assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After is set');
      const ips = await hub.sql.query<{ ip: string }>(
        `SELECT DISTINCT ip FROM audit_log WHERE action = 'user.login_failed' AND actor_email LIKE 'nobody%'`,
      );
      assert.deepEqual(
        ips.map((r) => r.ip),
        [STRANGER],
      );
    });

    test('the session cookie is not made Secure on the word of an untrusted X-Forwarded-Proto', async () => {
      const u = await f.user();
      const res = await fromPeer(hub, '203.0.113.8', 'POST', '/api/auth/login', jsonHeaders({ 'x-forwarded-proto': 'https' }), {
        email: u.email,
        password: u.password,
      });
      assert.equal(res.statusCode, 200, res.body);
      const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('chorus_session='))!;
      assert.ok(!isSecure(set), set);
      const row = await hub.sql.one<{ last_login_ip: string }>('SELECT last_login_ip FROM users WHERE id = $1', [u.id]);
      assert.equal(row.last_login_ip, '203.0.113.8');
    });

    test('a proxy on the same host is believed: the audit entry carries the forwarded address', async () => {
      const u = await f.user();
      const ip = newIp();
      const res = await post('/auth/login', { email: u.email, password: u.password }, ip);
      assert.equal(res.status, 200, res.text);
      const [entry] = await hub.sql.query<{ ip: string }>(`SELECT ip FROM audit_log WHERE action = 'user.login' AND actor_user_id = $1`, [
        u.id,
      ]);
      assert.equal(entry.ip, ip);
    });
  });

  describe('abuse limits', () => {
    test('registration per address: past the budget 429 RATE_LIMITED with Retry-After; another address is not held back', async () => {
      const ip = newIp();
      const fresh = () => ({
        email: `reg-${crypto.randomBytes(4).toString('hex')}@example.org`,
        password: 'a-long-password-1',
        name: 'Reg',
      });
      for (let i = 0; i < 3; i++) assert.equal((await post('/auth/register', fresh(), ip)).status, 201);
      const refused = await post('/auth/register', fresh(), ip);
      assertError(refused, 429, 'RATE_LIMITED');
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      assert.equal((await post('/auth/register', fresh(), newIp())).status, 201);
    });

    test('reset mail per account: forgot-password still answers 204 from every address, but stops mailing', async () => {
      const u = await f.user();
      const mails = () => hub.infra.mail.recorded().filter((m) => m.to === u.email).length;
      for (let i = 0; i < 4; i++) {
        const res = await post('/auth/forgot-password', { email: u.email }, newIp());
        assert.equal(res.status, 204, res.text);
      }
      assert.equal(mails(), 2, 'two mails, then none');
      const tokens = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM password_reset_tokens WHERE user_id = $1', [u.id]);
      assert.equal(tokens.n, 2, 'no token is minted past the limit either');
    });

    test('invite acceptance per person: 429 past the budget', async () => {
      const u = await f.user();
      const ip = newIp();
      const owner = await f.user();
      const team = await f.team(owner);
      const invite = await api.post('/auth/invites', { tenantId: team.id, role: 'viewer' }, owner);
      assert.equal(invite.status, 201, invite.text);
      assertError(await post('/auth/invites/accept', { token: 'ab'.repeat(32) }, ip, u), 400, 'INVALID_INVITE');
      assert.equal((await post('/auth/invites/accept', { token: invite.body.token }, ip, u)).status, 200);
      assertError(await post('/auth/invites/accept', { token: 'cd'.repeat(32) }, newIp(), u), 429, 'RATE_LIMITED');
    });

    test('share-link guesses per address: forged links count, then 429 on every share route; other addresses still get 403', async () => {
      const ip = newIp();
      const get = (path: string, from: string) => api.call('GET', path, { headers: { 'x-forwarded-for': from } });
      for (let i = 0; i < 3; i++) assertError(await get(`/share/detection/x${i}/forged`, ip), 403, 'INVALID_SHARE_LINK');
      const limited = await get('/share/audio/x/forged', ip);
      assertError(limited, 429, 'RATE_LIMITED');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assertError(await get('/share/detection/x/forged', newIp()), 403, 'INVALID_SHARE_LINK');
    });

    test('invite-token guesses per address count across register and accept', async () => {
      const ip = newIp();
      const u = await f.user();
      const reg = (token: string) => ({
        email: `g-${crypto.randomBytes(4).toString('hex')}@example.org`,
        password: 'a-long-password-1',
        name: 'G',
        inviteToken: token,
      });
      assertError(await post('/auth/register', reg('01'.repeat(32)), ip), 400, 'INVALID_INVITE');
      assertError(await post('/auth/register', reg('02'.repeat(32)), ip), 400, 'INVALID_INVITE');
      assertError(await post('/auth/invites/accept', { token: '03'.repeat(32) }, ip, u), 400, 'INVALID_INVITE');
      assertError(await post('/auth/invites/accept', { token: '04'.repeat(32) }, ip, u), 429, 'RATE_LIMITED');
    });

    test('API-key creation per person: 429 past the budget', async () => {
      const owner = await f.user();
      const team = await f.team(owner);
      const body = { tenantId: team.id, name: 'k', role: 'viewer' };
      assert.equal((await api.post('/auth/api-keys', body, owner)).status, 201);
      assert.equal((await api.post('/auth/api-keys', body, owner)).status, 201);
      const refused = await api.post('/auth/api-keys', body, owner);
      assertError(refused, 429, 'RATE_LIMITED');
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
    });

    test('MQTT: after repeated refused logins from an address, the broker refuses it before checking (return code 5)', async () => {
      const login = async (password: string) => {
        try {
          const c = await mqtt.connectAsync(
            hub.infra.broker.brokerUrl,
            { clientId: 'satellite-nobody', username: 'nobody', password, protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 5000 },
            false,
          );
          c.end(true);
          return 0;
        } catch (err) {
          return (err as { code?: number }).code;
        }
      };
      assert.equal(await login('wrong-1'), 4, 'bad credentials');
      assert.equal(await login('wrong-2'), 4, 'bad credentials');
      assert.equal(await login('wrong-3'), 5, 'not authorized: the address spent its budget');
    });
  });

  describe('forwarded addresses: only IP addresses, IPv6 clients by their /64', () => {
    test('an X-Forwarded-For value that is not an IP address is never the client address: audit entry and last-login IP', async () => {
      const signIn = async (forwarded: string) => {
        const u = await f.user();
        const res = await api.call('POST', '/auth/login', {
          body: { email: u.email, password: u.password },
          headers: { 'x-forwarded-for': forwarded },
        });
        assert.equal(res.status, 200, res.text);
        const audit = await hub.sql.one<{ ip: string | null }>(
          `SELECT ip FROM audit_log WHERE action = 'user.login' AND actor_user_id = $1`,
          [u.id],
        );
        const user = await hub.sql.one<{ last_login_ip: string }>('SELECT last_login_ip FROM users WHERE id = $1', [u.id]);
        assert.equal(audit.ip, user.last_login_ip);
        return audit.ip;
      };
      // The nearest value is the bad one: the socket peer (the local proxy) is the client.
      assert.equal(await signIn('<script>alert(1)</script>'), '127.0.0.1');
      assert.equal(await signIn('192.0.2.202, unknown'), '127.0.0.1');
      assert.equal(await signIn('198.51.100.3:4711'), '127.0.0.1');
      // A bad value further away is dropped with all before it; the real address next to the proxy stands.
      assert.equal(await signIn('not-an-ip, 192.0.2.201'), '192.0.2.201');
      assert.equal(await signIn('2001:db8::5'), '2001:db8::5');
    });

    test('two IPv6 addresses in one /64 share a limit: registrations and the sign-in ledger; another /64 does not', async () => {
      const fresh = () => ({
        email: `v6-${crypto.randomBytes(4).toString('hex')}@example.org`,
        password: 'a-long-password-1',
        name: 'Six',
      });
      assert.equal((await post('/auth/register', fresh(), '2001:db8:33:7::1')).status, 201);
      assert.equal((await post('/auth/register', fresh(), '2001:db8:33:7::2')).status, 201);
      assert.equal((await post('/auth/register', fresh(), '2001:db8:33:7:ffff:ffff:ffff:3')).status, 201);
      assertError(await post('/auth/register', fresh(), '2001:db8:33:7::4'), 429, 'RATE_LIMITED');
      assert.equal((await post('/auth/register', fresh(), '2001:db8:33:8::1')).status, 201, 'the next /64 is another client');

      // The sign-in ledger (20 per 15 minutes) counts the /64 as one client.
      const wrong = (i: number) => ({ email: `v6-nobody-${i}@example.org`, password: 'whatever-password' });
      for (let i = 0; i < 20; i++) assert.equal((await post('/auth/login', wrong(i), `2001:db8:44:1::${(i % 2) + 1}`)).status, 401);
      assertError(await post('/auth/login', wrong(20), '2001:db8:44:1::99'), 429, 'RATE_LIMITED');
      assert.equal((await post('/auth/login', wrong(21), '2001:db8:44:2::1')).status, 401);
    });

    test('an IPv4-mapped IPv6 address counts as the IPv4 address it carries', async () => {
      const get = (path: string, from: string) => api.call('GET', path, { headers: { 'x-forwarded-for': from } });
      assertError(await get('/share/detection/m1/forged', '::ffff:192.0.2.251'), 403, 'INVALID_SHARE_LINK');
      assertError(await get('/share/detection/m2/forged', '::ffff:c000:2fb'), 403, 'INVALID_SHARE_LINK');
      assertError(await get('/share/detection/m3/forged', '192.0.2.251'), 403, 'INVALID_SHARE_LINK');
      assertError(await get('/share/detection/m4/forged', '192.0.2.251'), 429, 'RATE_LIMITED');
    });
  });

  describe('browser headers', () => {
    const common = (res: Res) => {
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /object-src 'none'/);
      assert.doesNotMatch(csp, /upgrade-insecure-requests/, 'a plain-http hub is not pushed to https');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.headers.get('strict-transport-security'), null, 'no HSTS while the public URL is http');
    };

    test('the dashboard at / and an API response: CSP, nosniff, no framing, strict-origin-when-cross-origin', async () => {
      const page = await fetch(hub.url + '/');
      await page.text();
      common({ status: page.status, headers: page.headers, body: null, text: '' });
      assert.equal(page.headers.get('referrer-policy'), 'strict-origin-when-cross-origin');
      const res = await api.get('/health');
      common(res);
      assert.equal(res.headers.get('referrer-policy'), 'strict-origin-when-cross-origin');
    });

    test('a share page and the share API send no referrer', async () => {
      const page = await fetch(hub.url + '/share/detection/some-id/some-token');
      await page.text();
      common({ status: page.status, headers: page.headers, body: null, text: '' });
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      const res = await api.call('GET', '/share/detection/some-id/some-token', { headers: { 'x-forwarded-for': newIp() } });
      assert.equal(res.status, 403);
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    });

    test('the API docs get their own, relaxed style rule', async () => {
      const res = await fetch(hub.url + '/api/docs/');
      await res.text();
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /style-src 'self' 'unsafe-inline'/);
      assert.match(csp, /frame-ancestors 'none'/);
    });
  });

  describe('WebSocket origin', () => {
    let viewer: TestUser;
    let teamId: string;
    before(async () => {
      const team = await f.team(await f.user());
      teamId = team.id;
      viewer = await f.member(team, 'viewer');
    });

    function handshake(origin: string | null): Promise<number> {
      const url = `${hub.url.replace(/^http/, 'ws')}/ws/events?tenantId=${teamId}`;
      return new Promise((resolve) => {
        const ws = new WebSocket(url, {
          headers: { authorization: `Bearer ${viewer.token}` },
          ...(origin ? { origin } : {}),
        });
        ws.on('unexpected-response', (_req, res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        ws.on('open', () => {
          ws.close();
          resolve(101);
        });
        ws.on('error', () => {});
      });
    }

    test('a foreign Origin gets 403; the public origin and no Origin are accepted', async () => {
      assert.equal(await handshake('https://evil.example'), 403);
      assert.equal(await handshake('http://chorus.test'), 101, 'the public URL origin');
      assert.equal(await handshake(null), 101, 'no Origin: satellites and scripts');
      assert.equal(await handshake(hub.url), 101, "the hub's own origin as the request reached it");
    });
  });
});

describe('security on a hub that names its proxy and is public over https', () => {
  let hub: Hub;

  before(async () => {
    hub = await startHub({
      env: { TRUST_PROXY: PROXY, CHORUS_PUBLIC_URL: 'https://chorus.example.org', CHORUS_ALLOWED_ORIGINS: 'https://app.example.org' },
    });
  });
  after(() => hub.close());

  test('X-Forwarded-For and X-Forwarded-Proto from the named proxy are believed', async () => {
    const u = await factories(hub).user();
    const res = await fromPeer(
      hub,
      PROXY,
      'POST',
      '/api/auth/login',
      jsonHeaders({ 'x-forwarded-for': '192.0.2.77', 'x-forwarded-proto': 'https' }),
      {
        email: u.email,
        password: u.password,
      },
    );
    assert.equal(res.statusCode, 200, res.body);
    const [entry] = await hub.sql.query<{ ip: string }>(`SELECT ip FROM audit_log WHERE action = 'user.login' AND actor_user_id = $1`, [
      u.id,
    ]);
    assert.equal(entry.ip, '192.0.2.77');
    const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('chorus_session='))!;
    assert.ok(isSecure(set), set);
  });

  test('the same headers from loopback are not believed: loopback is no longer trusted once TRUST_PROXY names a proxy', async () => {
    const u = await factories(hub).user();
    const res = await client(hub.url).call('POST', '/auth/login', {
      body: { email: u.email, password: u.password },
      headers: { 'x-forwarded-for': '192.0.2.78' },
    });
    assert.equal(res.status, 200, res.text);
    const [entry] = await hub.sql.query<{ ip: string }>(`SELECT ip FROM audit_log WHERE action = 'user.login' AND actor_user_id = $1`, [
      u.id,
    ]);
    assert.equal(entry.ip, '127.0.0.1');
  });

  test('HSTS and upgrade-insecure-requests when the public URL is https', async () => {
    const res = await client(hub.url).get('/health');
    assert.match(res.headers.get('strict-transport-security') ?? '', /max-age=31536000/);
    assert.match(res.headers.get('content-security-policy') ?? '', /upgrade-insecure-requests/);
  });

  test('an origin listed in CHORUS_ALLOWED_ORIGINS may open the WebSocket; others may not', async () => {
    const f = factories(hub);
    const owner = await f.user();
    const team = await f.team(owner);
    const status = (origin: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${hub.url.replace(/^http/, 'ws')}/ws/events?tenantId=${team.id}`, {
          headers: { authorization: `Bearer ${owner.token}` },
          origin,
        });
        ws.on('unexpected-response', (_req, res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        ws.on('open', () => {
          ws.close();
          resolve(101);
        });
        ws.on('error', () => {});
      });
    assert.equal(await status('https://app.example.org'), 101);
    assert.equal(await status('https://chorus.example.org'), 101);
    assert.equal(await status('http://chorus.example.org'), 403, 'the scheme is part of the origin');
  });
});
