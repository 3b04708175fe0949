/**
 * Position and time where a birder looks (issue 36, point 4), in Chromium against a hub serving
 * the built dashboard, on a desktop and on a 390 px phone: a satellite's position is set on its
 * page by a click on the offline map or by typed coordinates (checked through the API, and
 * refused when only one is given), the Fleet page's run commands carry --latitude/--longitude,
 * and a new team takes the browser's time zone (shown, changeable) and continues on Fleet.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { factories, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '../..');
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };

describe('position and time where a birder looks (e2e)', { skip, timeout: 300_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    browser = await launchChromium();
    api = client(hub.url);
    owner = await factories(hub).user({ name: 'Pia Position' });
    team = await factories(hub).team(owner, 'Heath Listeners');
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  const position = async (id: string) => {
    const res = await api.get(`/satellites/${id}`, owner);
    assert.equal(res.status, 200, res.text);
    return { latitude: res.body.latitude, longitude: res.body.longitude };
  };

  const openSatellite = async (page: Page, id: string) => {
    await page.goto(`/fleet/${id}`);
    await page.getByTestId('position-picker').waitFor();
  };

  for (const [device, viewport] of Object.entries(VIEWPORTS)) {
    test(`${device}: a click on the map places the satellite; typed coordinates are saved; one alone is refused`, async () => {
      const sat = await makeSatellite(hub, team, owner, `Heath ${device}`);
      const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport });
      await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
      await openSatellite(page, sat.id);
      const picker = page.getByTestId('position-picker');
      const lat = picker.getByLabel('Latitude');
      const lon = picker.getByLabel('Longitude');
      assert.equal(await lat.inputValue(), '');

      // A click in the middle of the whole-world map names a place near the projection's centre (0°, 0°).
      const map = picker.getByTestId('world-map');
      const box = (await map.boundingBox())!;
      await map.click({ position: { x: box.width / 2, y: box.height / 2 } });
      const first = { latitude: Number(await lat.inputValue()), longitude: Number(await lon.inputValue()) };
      assert.ok(Math.abs(first.latitude) < 5 && Math.abs(first.longitude) < 5, `near 0°, 0°: ${JSON.stringify(first)}`);
      // The map now shows the chosen place, zoomed in around it; a click right of centre lies east of it, by less than before.
      await picker.getByTestId('map-satellite').waitFor();
      const zoomed = (await map.boundingBox())!;
      await map.click({ position: { x: zoomed.width * 0.75, y: zoomed.height / 2 } });
      const second = Number(await lon.inputValue());
      assert.ok(second > first.longitude && second - first.longitude < 30, `east, within the zoomed view: ${second}`);
      await picker.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Position saved.').waitFor();
      const saved = await position(sat.id);
      assert.equal(saved.latitude, Number(await lat.inputValue()));
      assert.equal(saved.longitude, second);

      // Typed, with a decimal comma as German keyboards give it.
      await lat.fill('53,55');
      await lon.fill('10.0012');
      await picker.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Position saved.').first().waitFor();
      await waitFor('the typed position saved', async () => (await position(sat.id)).latitude === 53.55);
      assert.deepEqual(await position(sat.id), { latitude: 53.55, longitude: 10.0012 });

      // Only one coordinate: refused at the form, nothing sent.
      await lon.fill('');
      await picker.getByRole('button', { name: 'Save' }).click();
      await picker.getByText('Give both latitude and longitude').waitFor();
      assert.deepEqual(await position(sat.id), { latitude: 53.55, longitude: 10.0012 });

      await picker.getByRole('button', { name: 'Clear position' }).click();
      await waitFor('the position cleared', async () => (await position(sat.id)).latitude === null);
      assert.deepEqual(await position(sat.id), { latitude: null, longitude: null });
      await ctx.close();
    });
  }

  test('the API takes both coordinates or neither, in range, and audits the change', async () => {
    const sat = await makeSatellite(hub, team, owner, 'Heath API');
    const half = await api.put(`/satellites/${sat.id}/position`, { latitude: 50, longitude: null }, owner);
    assert.equal(half.status, 400);
    assert.equal(half.body.error.code, 'POSITION_INCOMPLETE');
    assert.equal((await api.put(`/satellites/${sat.id}/position`, { latitude: 91, longitude: 0 }, owner)).status, 400);
    const ok = await api.put(`/satellites/${sat.id}/position`, { latitude: -33.9, longitude: 151.2 }, owner);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.latitude, -33.9);
    const audit = await hub.sql.one<{ details: { to: unknown } }>(
      `SELECT details FROM audit_log WHERE action = 'admin.satellite_position_changed' AND target_id = $1`,
      [sat.id],
    );
    assert.deepEqual(audit.details.to, { latitude: -33.9, longitude: 151.2 });
    // A viewer may not move a satellite.
    const viewer = await factories(hub).member(team, 'viewer');
    assert.equal((await api.put(`/satellites/${sat.id}/position`, { latitude: 1, longitude: 1 }, viewer)).status, 403);
  });

  test('the Fleet commands carry --latitude and --longitude once a position is typed', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: VIEWPORTS.phone });
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
    await page.goto('/fleet');
    const setup = page.getByTestId('satellite-setup');
    if (!(await setup.isVisible())) await page.getByRole('button', { name: 'Add a satellite' }).click();
    await page.getByRole('button', { name: 'Create a satellite key' }).click();
    await page.getByTestId('satellite-command').first().waitFor();
    assert.ok(!(await page.getByTestId('satellite-command').first().textContent())!.includes('--latitude'));
    const where = page.getByTestId('setup-position');
    await where.getByLabel('Latitude').fill('52.37');
    await where.getByLabel('Longitude').fill('9,73');
    const commands = await page.getByTestId('satellite-command').allTextContents();
    assert.equal(commands.length, 3);
    for (const c of commands) assert.match(c, / --latitude 52\.37 --longitude 9\.73$/);
    await ctx.close();
  });

  for (const [device, viewport] of Object.entries(VIEWPORTS)) {
    test(`${device}: a new team takes the browser's time zone, shown and changeable, and continues on Fleet`, async () => {
      const person = await factories(hub).user({ name: `Zoe Zone ${device}` });
      const { ctx, page } = await signedIn(browser, hub.url, person, { viewport, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
      await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
      await page.goto('/teams/new');
      const zone = page.getByLabel('Time zone');
      assert.equal(await zone.inputValue(), 'Europe/Berlin', 'the browser’s zone is preselected');
      await page.getByLabel('Team name').fill(`Berlin birds ${device}`);
      if (device === 'phone') await zone.selectOption('Asia/Tokyo');
      await page.getByRole('button', { name: 'Create team' }).click();
      await page.waitForURL('**/fleet');
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      const created = await hub.sql.one<{ id: string }>('SELECT id FROM tenants WHERE name = $1', [`Berlin birds ${device}`]);
      const eff = await api.get(`/settings/effective?tenantId=${created.id}`, person);
      assert.equal(eff.status, 200, eff.text);
      const tz = eff.body.settings.find((s: { key: string }) => s.key === 'time_zone');
      assert.equal(tz.value, device === 'phone' ? 'Asia/Tokyo' : 'Europe/Berlin');
      await ctx.close();
    });
  }

  test('no Content-Security-Policy violations', () => {
    assert.deepEqual(cspViolations, []);
  });
});
