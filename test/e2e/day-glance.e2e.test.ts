/**
 * Issue 36 points 1 and 2 in headless Chromium at desktop size: the day at a glance (the home
 * view: species × hour, the species heard last on top, a cell opening that species' detections of
 * that hour, yesterday and back, no tomorrow; the public page's grid with a sensitive species
 * hidden, then as a day total only) and the compact detection rows (≤ 56 px, a spectrogram
 * thumbnail, review actions on hover and focus with their keys, Enter opens the detail page,
 * whose audio knows its length before play). No CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { insertRows } from '../helpers/stats.ts';
import { cspViolations, launchChromium, newWatchedContext, signedIn, skip } from '../helpers/browser.ts';
import { makeWav } from '../../src/protocol/wav.ts';

const root = path.resolve(import.meta.dirname, '../..');
const DAY = 86_400_000;

describe('the day at a glance and rows that scan (e2e)', { skip, timeout: 240_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let hubAdmin: TestUser;
  let team: TestTeam;
  /** The hub's today (UTC, the team's zone) and yesterday. */
  let today: string;
  let yesterday: string;
  const at = (date: string, time: string) => `${date}T${time}:00.000Z`;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub({ env: { IMAGES_PROVIDERS: 'off' } });
    // Noon of the day before the real one: every hour below is in the hub's past, and cookies
    // the hub dates from its clock are still valid for the browser's real one.
    const noon = new Date(Math.floor(Date.now() / DAY) * DAY - DAY + 12 * 3_600_000);
    hub.clock.freeze(noon);
    today = noon.toISOString().slice(0, 10);
    yesterday = new Date(noon.getTime() - DAY).toISOString().slice(0, 10);
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user({ name: 'Olga Owner' });
    team = await f.team(owner, 'Orchard Ears');
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { time_zone: 'UTC' }, owner)).status, 200);
    const sat = await makeSatellite(hub, team, owner, 'Orchard');
    const ids = await insertRows(hub, team, [
      { sat, code: 'eurrob1', at: at(today, '07:10'), confidence: 0.6 },
      { sat, code: 'eurrob1', at: at(today, '07:20'), confidence: 0.85 },
      { sat, code: 'eurbla', at: at(today, '11:30'), confidence: 0.7 },
      { sat, code: 'gretit1', at: at(yesterday, '20:00'), confidence: 0.66 },
    ]);
    // A stitched call's continuation: neither a call of its own in the grid nor a row in the list.
    await insertRows(hub, team, [{ sat, code: 'eurrob1', at: at(today, '07:21'), confidence: 0.99, callId: ids[1] }]);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  const rowCodes = async (page: Page) => page.getByTestId('day-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-code')));

  test('the home view: species × hour, newest first, a cell opens its detections, yesterday and back', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await page.waitForURL('**/detections');
    await page.goto('/');
    await page.waitForURL(/\/day$/);
    await page.getByRole('heading', { name: 'The day at a glance' }).waitFor();
    await page.getByTestId('day-row').first().waitFor();
    assert.deepEqual(await rowCodes(page), ['eurbla', 'eurrob1'], 'the species heard most recently on top');
    assert.match((await page.getByTestId('day-summary').textContent()) ?? '', /3 calls of 2 species/);
    const robin = page.locator('[data-testid=day-row][data-code=eurrob1]');
    const cell = robin.locator('td[data-hour="7"]');
    assert.equal((await cell.textContent())?.trim(), '2', 'two calls at 07:00 (the continuation is part of one)');
    assert.match((await cell.getByTestId('day-cell').getAttribute('title')) ?? '', /07:00–08:00: 2 calls, best confidence 85\s?%/);
    assert.equal(await robin.getByTestId('day-cell').count(), 1, 'no other hour of the robin');
    assert.equal(await page.getByTestId('day-next').count(), 0, 'no tomorrow past today');
    assert.match((await page.getByTestId('day-date').textContent()) ?? '', /^Today, /);

    // The cell opens the Detections page for that species and hour.
    await cell.getByTestId('day-cell').click();
    await page.waitForURL(/\/detections\?/);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('species'), 'eurrob1');
    assert.equal(url.searchParams.get('start'), at(today, '07:00'));
    assert.equal(url.searchParams.get('end'), at(today, '08:00'));
    await page.getByTestId('detection').nth(1).waitFor();
    assert.equal(await page.getByTestId('detection').count(), 2, 'the two calls of that hour, nothing else');

    // Yesterday, then tomorrow again (which is today).
    await page.getByTestId('nav-day').click();
    await page.getByTestId('day-prev').click();
    await page.waitForURL(new RegExp(`date=${yesterday}`));
    await page.locator('[data-testid=day-row][data-code=gretit1]').waitFor();
    assert.deepEqual(await rowCodes(page), ['gretit1']);
    assert.doesNotMatch((await page.getByTestId('day-date').textContent()) ?? '', /Today/);
    await page.getByTestId('day-next').click();
    await page.locator('[data-testid=day-row][data-code=eurbla]').waitFor();
    assert.equal(await page.getByTestId('day-next').count(), 0);

    // On a 390 px phone the grid stays inside the screen (its numbers move into the cells' titles).
    await page.setViewportSize({ width: 390, height: 844 });
    const right = await page.getByTestId('day-grid').evaluate((el) => el.getBoundingClientRect().right);
    assert.ok(right <= 390, `the grid ends at ${right} px`);
    await ctx.close();
  });

  test("the public page's day: a sensitive species hidden, then given as the day's total only", async () => {
    assert.equal((await api.put('/settings/platform', { allow_public_pages: true }, hubAdmin)).status, 200);
    const put = await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page: true, sensitive_species_extra: ['eurbla'] }, owner);
    assert.equal(put.status, 200, put.text);
    const ctx = await newWatchedContext(browser, {
      baseURL: hub.url,
      locale: 'en-GB',
      timezoneId: 'UTC',
      viewport: { width: 1280, height: 900 },
    });
    const page = await ctx.newPage();
    await page.goto(`/t/${team.slug}`);
    const day = page.getByTestId('public-day');
    await day.getByTestId('day-row').first().waitFor();
    assert.deepEqual(await rowCodes(page), ['eurrob1'], 'the sensitive blackbird is left out');
    assert.equal(await day.getByRole('link').count(), 0, 'cells open nothing for a visitor');
    await day.getByTestId('day-prev').click();
    await day.locator('[data-testid=day-row][data-code=gretit1]').waitFor();

    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page_show_sensitive: true }, owner)).status, 200);
    await page.reload();
    await day.locator('[data-testid=day-row][data-code=eurbla]').waitFor();
    assert.deepEqual(await rowCodes(page), ['eurrob1', 'eurbla'], 'last, not in time order');
    const blackbird = day.locator('[data-testid=day-row][data-code=eurbla]');
    await blackbird.getByTestId('day-coarse').waitFor();
    assert.equal(await blackbird.getByTestId('day-cell').count(), 0, 'no hour of a sensitive species');
    await ctx.close();
    assert.deepEqual(cspViolations, []);
  });

  test('compact rows: a thumbnail, actions on hover and focus with their keys, Enter opens, the audio knows its length', async () => {
    const samples = new Int16Array(48_000 * 3);
    for (let i = 0; i < samples.length; i++)
      samples[i] = Math.round(9000 * Math.sin((2 * Math.PI * (2500 + (i % 24_000) / 10) * i) / 48_000));
    for (const [code, minutesAgo] of [
      ['eurwre', 2],
      ['comcha', 1],
    ] as const) {
      const chunk = await makeChunk(hub, { team, at: new Date(hub.clock.now().getTime() - minutesAgo * 60_000), audio: makeWav(samples) });
      await makeDetection(hub, { chunk, code, at: chunk.at, commonName: code === 'eurwre' ? 'Eurasian Wren' : 'Common Chaffinch' });
    }
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 800 }, timezoneId: 'UTC' });
    await page.waitForURL('**/detections');
    const rows = page.getByTestId('detection');
    await rows.nth(1).waitFor();
    const first = rows.first();
    const second = rows.nth(1);
    assert.match((await first.textContent()) ?? '', /Common Chaffinch/);

    // At most 56 px a row.
    for (const r of [first, second]) {
      const box = (await r.boundingBox())!;
      assert.ok(box.height <= 56, `a row is ${box.height} px high`);
    }
    // The spectrogram thumbnail, drawn by the hub.
    const thumb = first.getByTestId('spectrogram-thumb');
    await page.waitForFunction(
      (el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth === 120,
      await thumb.elementHandle(),
    );

    // Actions: hidden on a row nobody points at, shown on hover and on focus, each with its key.
    await page.mouse.move(5, 5);
    const actions = await second.getByTestId('row-actions').elementHandle();
    await page.waitForFunction((el) => getComputedStyle(el!).opacity === '0', actions, { timeout: 2000 });
    await second.hover();
    await page.waitForFunction((el) => getComputedStyle(el!).opacity === '1', actions);
    await page.mouse.move(5, 5);
    await page.waitForFunction((el) => getComputedStyle(el!).opacity === '0', actions, { timeout: 2000 });
    await second.focus();
    await page.waitForFunction((el) => getComputedStyle(el!).opacity === '1', actions);
    assert.equal(await second.getByRole('button', { name: 'Confirm' }).locator('kbd').textContent(), 'c', 'the key is shown');
    assert.equal(await second.getByRole('button', { name: 'Reject' }).getAttribute('aria-keyshortcuts'), 'r');
    await page.keyboard.press('c');
    await second.getByText('Your vote: Confirm').waitFor();

    // On a 390 px phone no row reaches past the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const widest = await rows.evaluateAll((els) => Math.max(...els.map((el) => el.getBoundingClientRect().right)));
    assert.ok(widest <= 390, `a row ends at ${widest} px`);
    await page.setViewportSize({ width: 1280, height: 800 });

    // Enter on the focused row opens its detail page; its audio has a duration before play.
    const id = await second.getAttribute('data-id');
    await second.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/detections/${id}$`));
    const audio = page.getByTestId('detail-audio');
    assert.equal(await audio.getAttribute('preload'), 'metadata');
    await page.waitForFunction(
      (el) => {
        const a = el as HTMLAudioElement;
        return Number.isFinite(a.duration) && a.duration > 2.9 && a.paused;
      },
      await audio.elementHandle(),
      { timeout: 15_000 },
    );
    await ctx.close();
    assert.deepEqual(cspViolations, []);
  });

  test('a live socket that opens again reads the list again (events missed while it was away are not lost from view)', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    // Every socket of the page goes through this route; the test closes the page's side of one.
    await page.waitForURL('**/detections');
    const sockets: Array<{ close(): Promise<void> }> = [];
    await page.routeWebSocket(/\/ws\/events/, (ws) => {
      ws.connectToServer();
      sockets.push(ws);
    });
    // The hub's day, not the browser's (its clock stands at yesterday's noon).
    await page.goto(`/detections?start=${encodeURIComponent(at(today, '00:00'))}&end=${encodeURIComponent(at(today, '12:00'))}`);
    const rows = page.getByTestId('detection');
    await rows.first().waitFor();
    const before = await rows.count();
    assert.ok(sockets.length >= 1, 'the page opened its live socket');
    // A detection arrives while no event tells the page (written behind the hub's back, as one
    // whose event went to a socket that was away).
    const sat = await makeSatellite(hub, team, owner, 'Reopen');
    await insertRows(hub, team, [{ sat, code: 'eurbla', at: at(today, '11:45'), confidence: 0.8 }]);
    // The socket drops (its api process restarted) and opens again by itself: the list is read again.
    await sockets[sockets.length - 1].close();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=detection]').length === n + 1, before, { timeout: 20_000 });
    assert.ok(sockets.length >= 2, 'the page opened a second socket');
    await ctx.close();
  });
});
