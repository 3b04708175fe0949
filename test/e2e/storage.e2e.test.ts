/**
 * Storage in sight (issue 23, item 8), end to end in headless Chromium: the Fleet page shows
 * each satellite's stored audio in the person's language, the team total and growth per day,
 * the hub's free space with the warning when it lasts fewer days than storage_warning_days,
 * and a warning for a satellite whose telemetry reports little free space; the System area shows
 * the hub's total and the same warning. No CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeChunk, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');
const MIB = 1024 * 1024;

describe('storage in sight (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  const total = 3 * 500_000 + 2_000;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    hub.clock.freeze();
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true, name: 'Hub Admin' });
    owner = await f.user();
    team = await f.team(owner, 'Meadow Watch');
    const orchard = await makeSatellite(hub, team, owner, 'Orchard');
    const pond = await makeSatellite(hub, team, owner, 'Pond');
    // Two days of history: a rate is given from then on (issue 36 point 6).
    const twoDaysAgo = new Date(hub.clock.now().getTime() - 2 * 86_400_000);
    for (let i = 0; i < 3; i++) await makeChunk(hub, { satellite: orchard, bytes: 500_000, at: twoDaysAgo });
    await makeChunk(hub, { satellite: pond, bytes: 2_000, at: twoDaysAgo });
    // Orchard's satellite is nearly full; Pond has room.
    for (const [sat, free] of [
      [orchard, 200 * MIB],
      [pond, 8 * 1024 * MIB],
    ] as const) {
      await hub.sql.query('INSERT INTO telemetry (tenant_id, satellite_id, at, storage_free_bytes) VALUES ($1, $2, $3, $4)', [
        team.id,
        sat.id,
        hub.clock.now(),
        free,
      ]);
    }
    // Everything arrived two days ago: the growth is half the bytes per day; three days of it are left.
    const growth = total / 2;
    hub.infra.storage.freeSpace = async () => ({ freeBytes: growth * 3, totalBytes: growth * 100 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('the Fleet page shows the bytes per satellite, the team total and growth, and both warnings', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1400, height: 1000 }, timezoneId: 'UTC' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    const panel = page.getByTestId('fleet-storage');
    await panel.getByRole('heading', { name: 'Storage' }).waitFor();
    assert.match((await panel.getByTestId('team-total').textContent()) ?? '', /^1\.5 MB \(4 chunks\)/);
    assert.match((await panel.getByTestId('team-growth').textContent()) ?? '', /^751 kB per day/);
    assert.match((await panel.getByTestId('days-remaining').textContent()) ?? '', /^3 days \(warning below 14 days\)/);
    const warning = panel.getByRole('alert').filter({ hasText: 'Storage is running out' });
    assert.match((await warning.textContent()) ?? '', /lasts about 3 days at the current rate \(warning below 14 days\)/);
    // 90 % of the free space and the stored audio (3 + 2 days of growth) at the rate: 4 days.
    assert.match((await warning.getByTestId('retention-suggestion').textContent()) ?? '', /keeping audio for at most 4 days/);
    const low = panel.getByTestId('satellites-low');
    assert.equal(await low.getAttribute('role'), 'alert');
    assert.match((await low.textContent()) ?? '', /below 1\.07 GB\): Orchard\./);

    const row = (name: string) => page.getByTestId('satellite-row').filter({ hasText: name }).getByTestId('satellite-storage');
    assert.match((await row('Orchard').textContent()) ?? '', /^1\.5 MB209\.7 MB free on the satellitelow$/);
    assert.match((await row('Pond').textContent()) ?? '', /^2 kB8\.59 GB free on the satellite$/);
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });

  test('in German the same figures read in German number formats', async () => {
    const api = client(hub.url);
    assert.equal((await api.put('/auth/me/preferences', { primaryLanguage: 'de' }, owner)).status, 200);
    try {
      const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1400, height: 1000 }, timezoneId: 'UTC' });
      await page.getByRole('navigation', { name: /.+/ }).first().getByRole('link', { name: 'Geräte' }).click();
      const panel = page.getByTestId('fleet-storage');
      await panel.getByRole('heading', { name: 'Speicher' }).waitFor();
      assert.match((await panel.getByTestId('team-total').textContent()) ?? '', /^1,5\sMB \(4 Abschnitte\)/);
      assert.match((await panel.getByRole('alert').first().textContent()) ?? '', /Der Speicher wird knapp/);
      assert.match((await panel.getByTestId('satellites-low').textContent()) ?? '', /unter 1,07\sGB\): Orchard/);
      await ctx.close();
    } finally {
      await api.put('/auth/me/preferences', { primaryLanguage: null }, owner);
    }
  });

  test('the System area shows the hub total, growth, free space, days remaining and the warning', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1400, height: 1000 }, timezoneId: 'UTC' });
    await page.getByTestId('nav-admin').click();
    await page.getByRole('heading', { name: 'Storage', exact: true }).waitFor();
    const panel = page.getByTestId('system-storage');
    await panel.getByTestId('hub-total').waitFor();
    assert.match((await panel.getByTestId('hub-total').textContent()) ?? '', /^1\.5 MB \(4 chunks\)/);
    assert.match((await panel.getByTestId('hub-growth').textContent()) ?? '', /^751 kB per day/);
    assert.match((await panel.getByTestId('hub-free').textContent()) ?? '', /^2\.25 MB of 75\.1 MB$/);
    assert.match((await panel.getByTestId('days-remaining').textContent()) ?? '', /^3 days/);
    assert.match((await panel.getByRole('alert').textContent()) ?? '', /Storage is running out/);
    const teams = await panel
      .getByRole('table', { name: 'Audio per team' })
      .getByRole('row')
      .filter({ hasText: 'Meadow Watch' })
      .textContent();
    assert.match(teams ?? '', /Meadow Watch1\.5 MB751 kB per day2/);
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });

  test('a team whose first audio arrived minutes ago reads "not enough history yet", not a rate', async () => {
    const f = factories(hub);
    const newcomer = await f.user();
    const fresh = await f.team(newcomer, 'Fresh Start');
    const sat = await makeSatellite(hub, fresh, newcomer, 'First Mic');
    await makeChunk(hub, { satellite: sat, bytes: 574_000_000 });
    const { ctx, page } = await signedIn(browser, hub.url, newcomer, { viewport: { width: 1400, height: 1000 }, timezoneId: 'UTC' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
    const panel = page.getByTestId('fleet-storage');
    await panel.getByTestId('team-growth').waitFor();
    assert.equal(await panel.getByTestId('team-growth').textContent(), 'not enough history yet (a rate needs 2 days of audio)');
    await ctx.close();
  });
});
