/**
 * Mobile app releases in the admin page, end to end in headless Chromium against a real hub
 * (issue 22): a hub admin uploads a small package (zip magic), sees it listed with its size and
 * SHA-256, and forces the update; the hub answers GET /mobile/latest accordingly.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('mobile releases dashboard (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let hubAdmin: TestUser;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true, name: 'Hanna Hub' });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('a hub admin uploads a release, sees it listed and forces the update', async () => {
    const { ctx, page: a } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 } });
    await a.getByTestId('nav-admin').click();
    await a.getByRole('heading', { name: 'Mobile app releases' }).waitFor();
    await a.getByText('No release uploaded yet.').waitFor();

    const pkg = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), crypto.randomBytes(2044)]);
    const sha = crypto.createHash('sha256').update(pkg).digest('hex');
    const form = a.getByRole('form', { name: 'Upload a release' });
    await form
      .getByLabel('Package')
      .setInputFiles({ name: 'chorus-release.apk', mimeType: 'application/vnd.android.package-archive', buffer: pkg });
    await form.getByLabel('Version', { exact: true }).fill('2.3.0');
    await form.getByLabel('Release notes').fill('Offline maps');
    await form.getByRole('button', { name: 'Upload' }).click();
    await form.getByRole('status').filter({ hasText: 'Version 2.3.0 uploaded.' }).waitFor();

    const row = a.getByRole('table', { name: 'Mobile app releases' }).getByRole('row', { name: /2\.3\.0/ });
    await row.getByText('Offline maps').waitFor();
    await row.getByText(`${sha.slice(0, 12)}…`).waitFor();
    await row.getByRole('button', { name: 'Copy SHA-256' }).waitFor();
    assert.match(
      (await row.getByRole('link', { name: 'Download' }).getAttribute('href')) ?? '',
      /^\/api\/mobile\/download\/[0-9a-f-]{36}$/,
    );
    assert.equal((await api.get('/mobile/latest?current=2.0.0', null)).body.forceUpdate, false);

    const force = row.getByRole('checkbox', { name: 'Force the update to 2.3.0' });
    assert.equal(await force.isChecked(), false);
    await force.click();
    await row.getByText('forced').waitFor();
    assert.equal(await force.isChecked(), true);
    const latest = await api.get('/mobile/latest?current=2.0.0', null);
    assert.equal(latest.body.updateAvailable, true);
    assert.equal(latest.body.forceUpdate, true);
    assert.equal(latest.body.sha256, sha);

    // A second upload of the same version shows the hub's reason.
    await form.getByLabel('Package').setInputFiles({ name: 'again.apk', mimeType: 'application/octet-stream', buffer: pkg });
    await form.getByLabel('Version', { exact: true }).fill('2.3.0');
    await form.getByRole('button', { name: 'Upload' }).click();
    await form.getByRole('alert').filter({ hasText: 'exists already' }).waitFor();
    await ctx.close();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspViolations, [], 'CSP violations');
  });
});
