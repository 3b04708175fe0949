/**
 * Per-species thresholds on the Species page, end to end in headless Chromium (issue 35 item 2):
 * after 22 votes on robins at known confidences the page shows the learned 66 % with its rule and
 * every recomputation; a member sees no controls; a team admin pins 80 %, resets to none and
 * follows the votes again, each change audited; no CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('species thresholds dashboard (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let owner: TestUser;
  let member: TestUser;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    const api = client(hub.url);
    const f = factories(hub);
    owner = await f.user({ name: 'Olga Owner' });
    const team = await f.team(owner, 'Garden Listeners');
    member = await f.member(team, 'member', { name: 'Mia Member' });
    const sat = await makeSatellite(hub, team, owner, 'Garden Mic');
    // As in test/species-thresholds.test.ts: 17 confirmed, 5 rejected; learned 0.66.
    const confirmed = [0.5, 0.55, ...Array.from({ length: 15 }, (_, i) => Math.round((0.66 + 0.02 * i) * 100) / 100)];
    const rejected = [0.3, 0.35, 0.4, 0.45, 0.65];
    const day = hub.clock.now().getTime() - 86_400_000;
    let i = 0;
    for (const [confidence, vote] of [...confirmed.map((c) => [c, 'confirm'] as const), ...rejected.map((c) => [c, 'reject'] as const)]) {
      const id = await makeDetection(hub, { satellite: sat, confidence, at: new Date(day + i++ * 60_000) });
      assert.equal((await api.post(`/detections/${id}/verify`, { vote }, owner)).status, 200);
    }
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  async function openRobin(page: Page) {
    await page.getByRole('heading', { name: 'Detections' }).waitFor();
    await page.goto('/species');
    const row = page.locator('[data-testid="species-row"][data-code="eurrob1"]');
    await row.waitFor({ timeout: 30_000 });
    return row.getByTestId('threshold');
  }

  test('a member sees the learned threshold, the rule and its history, and no controls', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, member, { viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
    const cell = await openRobin(page);
    await cell.getByTestId('threshold-value').filter({ hasText: '66%' }).waitFor();
    await cell.locator('summary').click();
    await cell.getByTestId('threshold-history').waitFor();
    assert.equal(await cell.getByTestId('threshold-history-row').count(), 22);
    const newest = (await cell.getByTestId('threshold-history-row').first().textContent()) ?? '';
    assert.match(newest, /66%/);
    assert.match(newest, /22 \(17 \/ 5\)/);
    assert.match(newest, /100%/);
    assert.match((await cell.getByTestId('threshold-history-row').nth(1).textContent()) ?? '', /none.*21 \(17 \/ 4\)/);
    assert.match((await cell.getByTestId('threshold-rule').textContent()) ?? '', /90%.*20 detections.*at least 5 each/);
    assert.match((await cell.getByTestId('threshold-learned').textContent()) ?? '', /Learned 66% from 22 votes/);
    assert.equal(await cell.getByRole('button', { name: 'Pin' }).count(), 0);
    assert.equal(await cell.getByRole('button', { name: 'Reset to none' }).count(), 0);
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });

  test('a team admin pins a value, resets it to none and follows the votes again', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
    const cell = await openRobin(page);
    await cell.locator('summary').click();
    await cell.getByTestId('threshold-pin-input').fill('80');
    await cell.getByRole('button', { name: 'Pin' }).click();
    await cell.locator('summary').filter({ hasText: '80%' }).filter({ hasText: 'pinned' }).waitFor();
    await cell.getByTestId('threshold-learned').filter({ hasText: 'An admin pinned 80%.' }).waitFor();

    await cell.getByRole('button', { name: 'Reset to none' }).click();
    await cell.locator('summary').filter({ hasText: 'none' }).filter({ hasText: 'reset' }).waitFor();

    await cell.getByRole('button', { name: 'Follow the votes' }).click();
    await cell.getByTestId('threshold-value').filter({ hasText: '66%' }).waitFor();

    const actions = await hub.sql.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE action LIKE 'admin.species_threshold_%' ORDER BY id",
    );
    assert.deepEqual(
      actions.map((a) => a.action),
      ['admin.species_threshold_pinned', 'admin.species_threshold_reset', 'admin.species_threshold_learned'],
    );
    assert.equal(
      (await hub.sql.one<{ mode: string }>("SELECT mode FROM species_thresholds WHERE species_code = 'eurrob1'")).mode,
      'learned',
    );
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });
});
