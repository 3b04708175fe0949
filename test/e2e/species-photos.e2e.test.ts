/**
 * Species photos in the dashboard, end to end in headless Chromium against a real hub and local
 * servers playing Wikimedia Commons and iNaturalist (issue 20): a member sees the robin's square
 * photo with its credit and licence beside a detection, opens the species' gallery, and a hub
 * admin reads the image cache statistics and clears the cache; no CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestUser } from '../helpers/factories.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { birdJpeg, startFakeProviders, type FakeProviders } from '../helpers/photo-providers.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('species photos dashboard (e2e)', { skip, timeout: 180_000 }, () => {
  let fake: FakeProviders;
  let hub: Hub;
  let browser: Browser;
  let member: TestUser;
  let hubAdmin: TestUser;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    fake = await startFakeProviders();
    fake.files.set('robin.jpg', { body: await birdJpeg({ width: 900, height: 500, x: 0.8, y: 0.55 }), type: 'image/jpeg' });
    fake.commonsPhotos.set('Erithacus rubecula', [{ id: 1, file: 'robin.jpg', licence: 'CC BY-SA 4.0', author: 'Anna Fotograf' }]);
    hub = await startHub({ env: { ...fake.env, IMAGES_PROVIDERS: 'wikimedia' } });
    const f = factories(hub);
    const owner = await f.user({ name: 'Olga Owner' });
    const team = await f.team(owner, 'Garden Listeners');
    member = await f.member(team, 'member', { name: 'Mia Member' });
    hubAdmin = await f.user({ admin: true, name: 'Hub Admin' });
    const sat = await makeSatellite(hub, team, owner, 'Garden Mic');
    await makeDetection(hub, { satellite: sat, code: 'eurrob1', at: new Date('2026-04-12T06:00:00Z') });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
    await fake?.close();
  });

  test('a member sees the credited photo beside a detection and opens the gallery', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, member, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await page.getByRole('heading', { name: 'Detections' }).waitFor();
    await page.goto(
      `/detections?start=${encodeURIComponent('2026-04-12T00:00:00.000Z')}&end=${encodeURIComponent('2026-04-13T00:00:00.000Z')}`,
    );
    const row = page.getByTestId('detection').first();
    const thumb = row.getByTestId('species-thumb');
    await thumb.waitFor({ timeout: 30_000 });
    await page.waitForFunction(
      (el) => (el as HTMLImageElement | null)?.complete && (el as HTMLImageElement).naturalWidth === 128,
      await thumb.elementHandle(),
    );
    const credit = (await row.getByTestId('photo-credit').textContent()) ?? '';
    assert.match(credit, /Photo: Anna Fotograf/);
    assert.match(credit, /CC BY-SA 4\.0/);
    assert.equal(
      await row.getByRole('link', { name: 'CC BY-SA 4.0' }).getAttribute('href'),
      'https://creativecommons.org/licenses/by-sa/4.0/',
    );

    await thumb.click();
    await page.getByRole('heading', { name: /^Photos of / }).waitFor();
    const photo = page.getByTestId('gallery-photo');
    await photo.first().waitFor();
    assert.equal(await photo.count(), 1);
    const img = photo.getByRole('img');
    await page.waitForFunction(
      (el) => (el as HTMLImageElement | null)?.complete && (el as HTMLImageElement).naturalWidth === 256,
      await img.elementHandle(),
    );
    assert.match((await photo.getByTestId('photo-credit').textContent()) ?? '', /Anna Fotograf · CC BY-SA 4\.0 · source/);
    assert.match((await photo.getByRole('link', { name: 'source' }).getAttribute('href')) ?? '', /\/wiki\/File:robin\.jpg$/);
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });

  test('a hub admin reads the image cache and clears it', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await page.getByTestId('nav-admin').click();
    await page.getByRole('heading', { name: 'Species photos' }).waitFor();
    const section = page.getByTestId('image-cache');
    assert.equal(await section.getByTestId('image-cache-photos').textContent(), '1');
    page.once('dialog', (d) => void d.accept());
    await section.getByRole('button', { name: 'Clear the photo cache' }).click();
    await section.getByText('1 photo removed.').waitFor();
    await section.getByTestId('image-cache-photos').filter({ hasText: '0' }).waitFor();
    const entry = await hub.sql.maybeOne(`SELECT 1 FROM audit_log WHERE action = 'admin.image_cache_cleared'`);
    assert.ok(entry, 'the clear is audited');
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });
});
