/**
 * A team's public page in the dashboard, end to end in headless Chromium (issue 20): a visitor
 * who never signed in opens /t/:slug and reads it in English or German (species names too), a
 * link-preview bot gets the Open Graph HTML at the same address, and a page that is off shows
 * its own message; no CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import sharp from 'sharp';
import { newId } from '../../src/core/crypto.ts';
import { cspViolations, launchChromium, newWatchedContext, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('public team page (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let owner: TestUser;
  let team: TestTeam;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub({ env: { IMAGES_PROVIDERS: 'off' } });
    const api = client(hub.url);
    const f = factories(hub);
    const hubAdmin = await f.user({ admin: true });
    owner = await f.user({ name: 'Olga Owner' });
    team = await f.team(owner, 'Meadow Listeners');
    const sat = await makeSatellite(hub, team, owner, 'Hidden Hedge Mic');
    for (let i = 0; i < 3; i++) await makeDetection(hub, { satellite: sat, at: new Date(hub.clock.now().getTime() - i * 1000) });
    await makeDetection(hub, { satellite: sat, code: 'winwre4', scientificName: 'Troglodytes troglodytes', commonName: 'Eurasian Wren' });
    // The robin's photo as the species photos module keeps one: a real JPEG in storage and its credit.
    const jpeg = await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 180, g: 90, b: 40 } } })
      .jpeg()
      .toBuffer();
    await hub.infra.storage.put('species/eurrob1/o.jpg', jpeg, 'image/jpeg');
    await hub.infra.storage.put('species/eurrob1/d.jpg', jpeg, 'image/jpeg');
    await hub.sql.query(
      `INSERT INTO species_images (id, species_code, position, provider, source_id, storage_key, content_type, width, height, original_bytes,
         display_key, display_bytes, display_width, display_height, author, licence, licence_url, source_url, focus_x, focus_y, analysed_at, created_at)
       VALUES ($1, 'eurrob1', 0, 'wikimedia', 'File:Robin.jpg', 'species/eurrob1/o.jpg', 'image/jpeg', 320, 240, $2,
         'species/eurrob1/d.jpg', $2, 320, 240, 'Ann Author', 'CC BY 4.0', 'https://creativecommons.org/licenses/by/4.0/',
         'https://commons.wikimedia.org/wiki/File:Robin.jpg', 0.5, 0.5, $3, $3)`,
      [newId(), jpeg.length, hub.clock.now()],
    );
    assert.equal((await api.put('/settings/platform', { allow_public_pages: true }, hubAdmin)).status, 200);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page: true }, owner)).status, 200);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('a visitor without a session reads the page in English', async () => {
    const ctx = await newWatchedContext(browser, { baseURL: hub.url, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await ctx.newPage();
    await page.goto(`/t/${team.slug}`);
    await page.getByRole('heading', { name: 'Meadow Listeners' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/t/${team.slug}`, 'no detour to the sign-in page');
    assert.equal(await page.getByTestId('count-species').textContent(), '2');
    assert.equal(await page.getByTestId('count-detections').textContent(), '4');
    await page.getByRole('heading', { name: 'Most heard' }).waitFor();
    await page.getByText('European Robin').first().waitFor();
    // The team's photos: the robin's square loads from the hub, with its credit beside it.
    const img = page.getByRole('img', { name: 'European Robin' });
    await img.waitFor();
    await page.waitForFunction(() => [...document.images].some((i) => i.complete && i.naturalWidth > 0));
    assert.match((await page.getByTestId('photo-credit').textContent()) ?? '', /Photo: Ann Author \(CC BY 4.0\)/);
    await page.getByRole('heading', { name: 'The last 30 days' }).waitFor();
    assert.ok(!(await page.content()).includes('Hidden Hedge Mic'), 'no satellite name');
    await ctx.close();
  });

  test('in German, species names too', async () => {
    const ctx = await newWatchedContext(browser, { baseURL: hub.url, locale: 'de-DE', timezoneId: 'Europe/Berlin' });
    const page = await ctx.newPage();
    await page.goto(`/t/${team.slug}`);
    await page.getByRole('heading', { name: 'Am häufigsten gehört' }).waitFor();
    await page.getByText('Rotkehlchen').first().waitFor();
    await page.getByText('Zaunkönig').first().waitFor();
    await page.getByRole('heading', { name: 'Die letzten 30 Tage' }).waitFor();
    await ctx.close();
  });

  test('a link-preview bot gets the Open Graph HTML at /t/:slug', async () => {
    const res = await fetch(`${hub.url}/t/${team.slug}`, { headers: { 'user-agent': 'TelegramBot (like TwitterBot)' } });
    const html = await res.text();
    assert.match(html, /<meta property="og:title" content="Meadow Listeners">/);
    assert.match(html, /<meta property="og:description" content="2 species, 4 detections, 1 recorders">/);
  });

  test('a page that is off says so', async () => {
    const ctx = await newWatchedContext(browser, { baseURL: hub.url, locale: 'en-GB' });
    const page = await ctx.newPage();
    await page.goto('/t/no-such-team-here');
    await page.getByText('This team has no public page.').waitFor();
    await ctx.close();
    assert.deepEqual(cspViolations, []);
  });
});
