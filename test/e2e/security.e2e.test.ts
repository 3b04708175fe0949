/**
 * Cross-site request forgery in a real browser (issue 33, point 1). A page served from a second
 * origin on the same site (another port of 127.0.0.1: SameSite=Lax lets the session cookie through)
 * posts a multipart form and a no-cors fetch at the hub while its visitor is signed in: both are
 * refused and the satellite's key is not rotated. The dashboard's own button still rotates it.
 * The team page says when a key acts below its role because its creator was demoted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('security in the dashboard (e2e): cross-origin requests, capped keys', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let owner: TestUser;
  let team: TestTeam;
  let evil: http.Server;
  let evilUrl: string;
  let ctx: BrowserContext;
  let page: Page;
  let sat: { id: string };

  const rotations = async () =>
    (
      await hub.sql.query(
        `SELECT 1 FROM audit_log WHERE action IN ('satellite.api_key_rotated', 'admin.satellite_api_key_rotated') AND target_id = $1`,
        [sat.id],
      )
    ).length;

  /** The hub's own count of 403 answers on the rotate route (its metrics, as a scrape reads them). */
  const refusedRotations = async () => {
    const { body } = await hub.services.metrics.render();
    const line = String(body)
      .split('\n')
      .find((l) => l.includes('http_requests_total{') && l.includes('rotate-api-key') && l.includes('status="403"'));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub({ env: { IMAGES_PROVIDERS: 'off' } });
    const f = factories(hub);
    owner = await f.user({ name: 'Olga Owner' });
    team = await f.team(owner, 'Meadow Listeners');
    sat = await makeSatellite(hub, team, owner, 'Hedge Mic');
    const target = `${hub.url}/api/satellites/${sat.id}/rotate-api-key`;
    // The attacker's pages: a form that posts itself, and a script that fires a no-cors fetch.
    evil = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      if (req.url === '/form') {
        res.end(`<form id="f" method="POST" enctype="multipart/form-data" action="${target}"><input name="x" value="1"></form>
          <script>document.getElementById('f').submit()</script>`);
      } else {
        res.end(`<script>
          const body = new FormData(); body.set('x', '1');
          fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include', body })
            .then(() => { document.title = 'sent'; }, () => { document.title = 'failed'; });
        </script>`);
      }
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
    browser = await launchChromium();
    ({ ctx, page } = await signedIn(browser, hub.url, owner, { locale: 'en-GB' }));
    await page.waitForURL((u) => u.pathname !== '/sign-in');
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await new Promise((resolve) => evil?.close(resolve));
    await hub?.close();
  });

  test('a form posted from another origin reaches the hub with the cookie and is refused', async () => {
    await page.goto(`${evilUrl}/form`);
    await page.waitForURL((u) => u.href.startsWith(hub.url));
    const answer = JSON.parse((await page.locator('body').textContent()) ?? '{}');
    // The code proves the session cookie arrived: only a cookie-signed request is refused this way.
    assert.equal(answer.error?.code, 'CROSS_ORIGIN_REQUEST', JSON.stringify(answer));
    assert.equal(await rotations(), 0);
  });

  test('a no-cors fetch from another origin is refused too', async () => {
    const before = await refusedRotations();
    await page.goto(`${evilUrl}/fetch`);
    await page.waitForFunction(() => document.title === 'sent' || document.title === 'failed');
    // The page learns nothing either way (Cross-Origin-Resource-Policy makes the fetch reject); the hub's count says it arrived.
    assert.equal((await refusedRotations()) - before, 1, 'the hub answered it 403');
    assert.equal(await rotations(), 0);
  });

  test('the dashboard’s own button still rotates the key', async () => {
    await page.goto(`${hub.url}/fleet/${sat.id}`);
    await page.getByRole('button', { name: 'Rotate API key' }).click();
    await page.getByRole('region', { name: 'API key' }).waitFor();
    assert.equal(await rotations(), 1);
  });

  test('the team page shows a key acting below its role once its creator was demoted', async () => {
    const f = factories(hub);
    const admin = await f.member(team, 'admin', { name: 'Ada Admin' });
    const key = await f.apiKey(team, admin, 'admin');
    const api = client(hub.url);
    assert.equal((await api.put(`/admin/members/${admin.membershipId}/role`, { role: 'viewer' }, owner)).status, 200);
    await page.goto(`${hub.url}/team`);
    const row = page.getByRole('listitem').filter({ hasText: key.token.slice(0, 8) });
    await row.getByTestId('key-capped').waitFor();
    assert.equal(await row.getByTestId('key-capped').textContent(), 'acts as viewer: its creator’s role in the team now');
    await ctx.close();
    assert.deepEqual(cspViolations, []);
  });
});
