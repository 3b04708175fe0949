/**
 * The System section of the hub admin page, end to end in headless Chromium (issue 21): the
 * hub's own process and a second one from the service registry, the infrastructure checks, and
 * the data summary; no CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, type TestUser } from '../helpers/factories.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { createServiceRegistration } from '../../src/modules/system/registry.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('system status page (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let hubAdmin: TestUser;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    hubAdmin = await factories(hub).user({ admin: true, name: 'Hub Admin' });
    await hub.runtime.registration.register();
    await createServiceRegistration({
      kv: hub.infra.kv,
      clock: hub.clock,
      mode: 'worker',
      timers: false,
      identity: { id: 'worker-e2e', ip: '10.0.0.7', hostname: 'gpu-box', pid: 77 },
      details: () => ({ inferenceJobs: { completed: 12, failed: 1 } }),
    }).register();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('processes, infrastructure and data', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await page.getByTestId('nav-admin').click();
    await page.getByRole('heading', { name: 'System', exact: true }).waitFor();
    const services = page.getByRole('table', { name: 'Processes' });
    await services.getByRole('row').filter({ hasText: 'gpu-box' }).waitFor();
    const worker = await services.getByRole('row').filter({ hasText: 'gpu-box' }).getByRole('cell').allTextContents();
    assert.equal(worker[0], 'worker');
    assert.match(worker[4], /10\.0\.0\.7/);
    assert.match(worker[5], /completed 12, failed 1/);
    assert.equal(await services.getByRole('row').filter({ hasText: /^full/ }).count(), 1, 'the hub itself');
    const infra = page.getByRole('table', { name: 'Infrastructure' });
    for (const name of ['Database', 'Key-value store', 'MQTT broker', 'Object storage']) {
      const cells = await infra.getByRole('row').filter({ hasText: name }).getByRole('cell').allTextContents();
      assert.equal(cells[1], 'ok', `${name} answers`);
    }
    // Species photos exist since issue 20: the count of species with a photo (none here).
    const images = page.locator('dt', { hasText: 'Species images' }).locator('xpath=following-sibling::dd[1]');
    assert.equal(await images.textContent(), '0');
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });
});
