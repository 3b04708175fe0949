/**
 * Cross-site request forgery (issue 33, point 1): a state-changing request carried by the session
 * cookie is refused unless it comes from one of the hub's own origins, on every route of the
 * registry; bearer and API-key callers, and programs that name no origin, are not concerned.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeSatellite, makeSatelliteKey, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client, cookieFrom } from './helpers/http.ts';

const ALLOWED = 'https://app.example.org';
const PUBLIC = 'https://hub.example.org';
const EVIL = 'http://evil.example';

describe('state changes signed in by cookie come only from the hub’s origins', { timeout: 120_000 }, () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let admin: TestUser;
  let cookie: string;
  let team: TestTeam;

  before(async () => {
    hub = await startHub({ env: { CHORUS_ALLOWED_ORIGINS: ALLOWED, CHORUS_PUBLIC_URL: PUBLIC } });
    api = client(hub.url);
    const f = factories(hub);
    admin = await f.user({ admin: true });
    team = await f.team(admin);
    const login = await api.post('/auth/login', { email: admin.email, password: admin.password });
    assert.equal(login.status, 200, login.text);
    cookie = cookieFrom(login);
  });
  after(() => hub?.close());

  /** A form post as a page on another site sends it: multipart body, the cookie, the page's origin. */
  function formPost(path: string, headers: Record<string, string>) {
    const form = new FormData();
    form.set('anything', 'x');
    return fetch(`${hub.url}/api${path}`, { method: 'POST', body: form, headers: { cookie, ...headers }, redirect: 'manual' });
  }

  test('every state-changing route of the registry refuses a cookie request from another origin: 403 CROSS_ORIGIN_REQUEST', async () => {
    const unsafe = hub.registry.filter((p) => !['GET', 'HEAD', 'OPTIONS'].includes(p.method));
    assert.ok(unsafe.length > 80, `${unsafe.length} state-changing routes`);
    const passed: string[] = [];
    for (const p of unsafe) {
      const path = p.url.replace(/:[A-Za-z]+/g, '00000000-0000-4000-8000-000000000000');
      const res = await fetch(`${hub.url}/api${path}`, { method: p.method, headers: { cookie, origin: EVIL } });
      const body = res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text();
      if (res.status !== 403 || (body as { error?: { code?: string } }).error?.code !== 'CROSS_ORIGIN_REQUEST') {
        passed.push(`${p.method} ${p.url}: ${res.status}`);
      }
    }
    assert.deepEqual(passed, []);
  });

  test('a forged form post does nothing: the satellite key is not rotated and still works', async () => {
    const sat = await makeSatellite(hub, team, admin);
    const key = await makeSatelliteKey(hub, sat);
    const res = await formPost(`/satellites/${sat.id}/rotate-api-key`, { origin: EVIL });
    assert.equal(res.status, 403);
    const body = await res.json();
    assert.equal(body.error.code, 'CROSS_ORIGIN_REQUEST');
    assert.match(body.error.message, /evil\.example/);
    const keys = await hub.sql.query<{ expires_at: Date | null }>('SELECT expires_at FROM api_keys WHERE satellite_id = $1', [sat.id]);
    assert.deepEqual(keys, [{ expires_at: null }], 'one key, the old one, still unexpired');
    const audited = await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'admin.satellite_api_key_rotated' AND target_id = $1`, [
      sat.id,
    ]);
    assert.equal(audited.length, 0);
    const again = await api.post(`/satellites/${sat.id}/rotate-api-key`, undefined, { token: key });
    assert.equal(again.status, 200, 'the old key still works');
  });

  test('without Origin the Referer decides; "null" and unreadable ones are foreign', async () => {
    const sat = await makeSatellite(hub, team, admin);
    for (const headers of [{ referer: `${EVIL}/page.html` }, { origin: 'null' }, { referer: 'not a url' }] as Record<string, string>[]) {
      const res = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, { as: { cookie }, headers });
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(res.body.error.code, 'CROSS_ORIGIN_REQUEST');
    }
    const fromDashboard = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, {
      as: { cookie },
      headers: { referer: `${PUBLIC}/satellites` },
    });
    assert.equal(fromDashboard.status, 200, fromDashboard.text);
    // A dashboard page served with no-referrer (a share page the person went on from) says "null";
    // the browser's own Sec-Fetch-Site still marks it as the hub's.
    const noReferrerPage = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, {
      as: { cookie },
      headers: { origin: 'null', 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(noReferrerPage.status, 200, noReferrerPage.text);
    const sameSite = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, {
      as: { cookie },
      headers: { origin: EVIL, 'sec-fetch-site': 'same-site' },
    });
    assert.equal(sameSite.status, 403);
  });

  test('the public URL, CHORUS_ALLOWED_ORIGINS and the hub’s own address pass', async () => {
    const sat = await makeSatellite(hub, team, admin);
    for (const origin of [PUBLIC, ALLOWED, hub.url]) {
      const res = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, { as: { cookie }, headers: { origin } });
      assert.equal(res.status, 200, `${origin}: ${res.text}`);
      assert.match(res.body.apiKey, /^[0-9a-f]{32,}$/);
    }
  });

  test('bearer and API-key callers, reads, and programs naming no origin are not concerned', async () => {
    const sat = await makeSatellite(hub, team, admin);
    const byJwt = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, { as: { token: admin.token }, headers: { origin: EVIL } });
    assert.equal(byJwt.status, 200, byJwt.text);
    const key = await makeSatelliteKey(hub, sat);
    const byKey = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, { as: { token: key }, headers: { origin: EVIL } });
    assert.equal(byKey.status, 200, byKey.text);
    const read = await api.call('GET', `/satellites/${sat.id}`, { as: { cookie }, headers: { origin: EVIL } });
    assert.equal(read.status, 200);
    const script = await api.call('POST', `/satellites/${sat.id}/rotate-api-key`, { as: { cookie } });
    assert.equal(script.status, 200, script.text);
  });
});
