/**
 * Words, numbers and times that read right (issue 36 point 5), end to end in headless Chromium:
 * the language picker says which languages the interface has and which only name species; a
 * German person reads decimals with a decimal comma (a detection's raw and calibrated scores,
 * the noise floor on the Fleet page); the team's alerts are written in the team's language.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('words and numbers (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner, 'Wiesenwacht');
    const sat = await makeSatellite(hub, team, owner, 'Hecke');
    await hub.sql.query('UPDATE satellites SET noise_floor_rms = 0.01234 WHERE id = $1', [sat.id]);
    await makeDetection(hub, { satellite: sat, confidence: 0.912 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('the language picker groups the interface languages apart from those that only name species', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    const picker = page.getByLabel('Language', { exact: true });
    await picker.waitFor();
    const groups = await picker
      .locator('optgroup')
      .evaluateAll((gs) =>
        gs.map((g) => ({ label: g.getAttribute('label'), options: [...g.querySelectorAll('option')].map((o) => o.value) })),
      );
    assert.equal(groups[0]?.label, 'Interface and species names');
    assert.deepEqual(groups[0]?.options, ['en', 'de']);
    assert.equal(groups[1]?.label, 'Species names only (interface in English)');
    assert.ok((groups[1]?.options.length ?? 0) >= 30, `species-only languages: ${groups[1]?.options.length}`);
    assert.ok(!groups[1]!.options.includes('de'));
    await page.getByText(/^The interface is in English or German; species names come in \d+ languages\.$/).waitFor();
    await ctx.close();
  });

  test('a German person reads scores and the noise floor with a decimal comma', async () => {
    assert.equal((await api.put('/auth/me/preferences', { primaryLanguage: 'de' }, owner)).status, 200);
    try {
      const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1400, height: 1000 } });
      const nav = page.getByRole('navigation', { name: /.+/ }).first();
      await nav.getByRole('link', { name: 'Erkennungen' }).click();
      const conf = page.locator('.conf').first();
      await conf.waitFor();
      assert.match((await conf.getAttribute('title')) ?? '', /0,912/);
      assert.doesNotMatch((await conf.getAttribute('title')) ?? '', /0\.912/);
      await nav.getByRole('link', { name: 'Geräte' }).click();
      await page.getByTestId('satellite-row').filter({ hasText: 'Hecke' }).getByText('0,0123').waitFor();
      assert.deepEqual(cspViolations, []);
      await ctx.close();
    } finally {
      await api.put('/auth/me/preferences', { primaryLanguage: null }, owner);
    }
  });
});
