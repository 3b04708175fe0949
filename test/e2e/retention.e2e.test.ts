/**
 * Storage and retention in the hub admin page, end to end in headless Chromium (issue 22): a
 * hub admin presses "Run now" and the run appears in the table, finished, with the chunk its
 * team's retention removed; no CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeChunk, makeSatellite, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('storage and retention (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let hubAdmin: TestUser;
  let key: string;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    const f = factories(hub);
    const api = client(hub.url);
    hubAdmin = await f.user({ admin: true, name: 'Hub Admin' });
    const owner = await f.user();
    const team = await f.team(owner);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { audio_retention_days: 7 }, owner)).status, 200);
    const sat = await makeSatellite(hub, team, owner);
    const old = await makeChunk(hub, {
      satellite: sat,
      at: new Date(hub.clock.now().getTime() - 10 * 86_400_000),
      audio: Buffer.alloc(2048, 1),
    });
    key = old.key;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('"Run now" lists the run with what it removed', async () => {
    const { ctx, page: a } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await a.getByTestId('nav-admin').click();
    await a.getByRole('heading', { name: 'Storage and retention' }).waitFor();
    const table = a.getByRole('table', { name: 'Retention runs' });
    await table.getByText('No run yet.').waitFor();
    await a.getByRole('button', { name: 'Run now' }).click();
    const row = table.getByRole('row').filter({ hasText: 'manual' });
    await row.filter({ hasText: 'finished' }).waitFor({ timeout: 20_000 });
    const cells = await row.getByRole('cell').allTextContents();
    assert.equal(cells[3], '1', 'one chunk removed');
    assert.equal(cells[4], '2.05 kB', 'its bytes freed: 2048 bytes in SI units');
    assert.equal(cells[5], '0', 'none kept');
    assert.equal(await hub.infra.storage.stat(key), null, 'its object is gone');
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });
});
