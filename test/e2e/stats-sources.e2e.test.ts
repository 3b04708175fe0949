/**
 * The Statistics section's outside sources in the dashboard (issue 19), against local servers
 * playing Open-Meteo and eBird: the weather view shows the hub's correlations and sample sizes
 * for the satellite with a position, and the expected-species view sorts eBird's nearby reports
 * into expected and heard, expected and not heard, heard and not expected.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { fakeService, openMeteoBody } from '../helpers/fake-sources.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('statistics outside sources dashboard (e2e)', { skip, timeout: 240_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let member: TestUser;
  let team: TestTeam;
  let weather: Awaited<ReturnType<typeof fakeService>>;
  let ebird: Awaited<ReturnType<typeof fakeService>>;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    weather = await fakeService((r) => ({ body: openMeteoBody(r.query) }));
    ebird = await fakeService(() => ({
      body: JSON.stringify([
        {
          speciesCode: 'eurrob1',
          comName: 'European Robin',
          sciName: 'Erithacus rubecula',
          obsDt: '2026-11-20 08:15',
          lat: 52.5,
          lng: 13.4,
        },
        { speciesCode: 'gretit1', comName: 'Great Tit', sciName: 'Parus major', obsDt: '2026-11-21 07:00', lat: 52.5, lng: 13.4 },
      ]),
    }));
    hub = await startHub({ env: { WEATHER_API_URL: weather.url, EBIRD_API_URL: ebird.url, EBIRD_API_KEY: 'test-ebird-key-0123' } });
    const f = factories(hub);
    const owner = await f.user({ name: 'Olga Owner' });
    team = await f.team(owner, 'Garden Club');
    member = await f.member(team, 'member', { name: 'Mia Member' });
    const sat = await makeSatellite(hub, team, owner, 'Garden Mic');
    await hub.sql.query('UPDATE satellites SET latitude = 52.52, longitude = 13.40 WHERE id = $1', [sat.id]);
    const day = Math.floor(hub.clock.now().getTime() / DAY) * DAY - 3 * DAY;
    for (const [h, n] of [
      [6, 3],
      [7, 5],
      [12, 1],
      [18, 2],
    ])
      for (let i = 0; i < n; i++) await makeDetection(hub, { satellite: sat, at: new Date(day + h * HOUR + i * 60_000) });
    await makeDetection(hub, {
      satellite: sat,
      at: new Date(day + 8 * HOUR),
      code: 'comchi1',
      commonName: 'Common Chiffchaff',
      scientificName: 'Phylloscopus collybita',
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
    await weather?.close();
    await ebird?.close();
  });

  test('weather correlations and expected species show what the hub computed', async () => {
    const expected = await client(hub.url).get(`/stats/weather-correlation?tenantId=${team.id}`, member);
    assert.equal(expected.status, 200);
    assert.equal(expected.body.available, true);
    const { ctx, page } = await signedIn(browser, hub.url, member, { viewport: { width: 1280, height: 1000 }, timezoneId: 'UTC' });
    await page.getByRole('heading', { name: 'Detections' }).waitFor();
    await page.goto('/stats/outlook');

    const overall = page.getByTestId('weather-overall');
    await overall.waitFor();
    assert.match((await overall.locator('caption').textContent()) ?? '', new RegExp(`\\(${expected.body.overall.hours} hours\\)`));
    const temperature = overall.getByRole('row', { name: /Temperature/ });
    const c = expected.body.overall.correlations.temperature;
    assert.deepEqual(await temperature.locator('th, td').allTextContents(), [
      'Temperature',
      c.pearson.toFixed(3),
      c.spearman.toFixed(3),
      String(c.n),
    ]);
    assert.equal(await page.getByTestId('weather-unavailable').count(), 0);

    const heard = page.getByRole('heading', { name: /Expected and heard/ }).locator('..');
    await heard.getByRole('link', { name: 'European Robin' }).waitFor();
    assert.match((await heard.textContent()) ?? '', /11 detections/);
    const notHeard = page.getByRole('heading', { name: /Expected, not heard/ }).locator('..');
    await notHeard.getByRole('link', { name: 'Great Tit' }).waitFor();
    const unexpected = page.getByRole('heading', { name: /Heard, not expected/ }).locator('..');
    await unexpected.getByRole('link', { name: 'Common Chiffchaff' }).waitFor();
    assert.equal(await page.getByTestId('expected-unavailable').count(), 0);
    assert.deepEqual(cspViolations, []);
    await ctx.close();
  });
});
