/**
 * The two stream channels in the dashboard (issue 38 point 2), in headless Chromium against a
 * real hub: an admin adds a Home Assistant channel and a BirdWeather channel from the Alert
 * settings page, sees both listed without their secrets, sends a test to a local stand-in of the
 * station API, and the rule form does not offer them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { closedPort, startReceiver, type Receiver } from '../helpers/receivers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const PASSWORD = 'ha-broker-password-e2e';
const TOKEN = 'stationTokenE2e987';

describe('integrations in the dashboard (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let owner: TestUser;
  let team: TestTeam;
  let page: Page;
  let station: Receiver;
  let brokerUrl = '';

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    station = await startReceiver((r) =>
      r.path.includes('/soundscapes')
        ? { status: 201, headers: { 'content-type': 'application/json' }, body: '{"success":true,"soundscape":{"id":42}}' }
        : { status: 201, body: '{"success":true}' },
    );
    brokerUrl = `mqtt://127.0.0.1:${await closedPort()}`;
    hub = await startHub({ env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    const f = factories(hub);
    owner = await f.user({ name: 'Hana Home' });
    team = await f.team(owner, 'Garden Birds');
    browser = await launchChromium();
    ({ page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 } }));
    await page.getByRole('heading', { name: 'Detections' }).waitFor();
    await page.goto('/team/alerts');
    await page.getByRole('heading', { name: /Alert rules and channels/ }).waitFor();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
    await station?.close();
  });

  test('an admin adds a Home Assistant channel and sees it listed without its password', async () => {
    await page.getByRole('button', { name: 'Add a channel' }).click();
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Channel name').fill('House');
    await form.getByLabel('Channel type').selectOption('mqtt_home_assistant');
    await form.getByText(/Home Assistant finds each satellite by MQTT discovery/).waitFor();
    await form.getByLabel('Broker URL').fill(brokerUrl);
    await form.getByLabel('User name').fill('hass');
    await form.getByLabel('Password').fill(PASSWORD);
    assert.equal(await form.getByLabel('Topic prefix').inputValue(), 'chorus');
    assert.equal(await form.getByLabel('Discovery prefix').inputValue(), 'homeassistant');
    await form.getByRole('button', { name: 'Save' }).click();
    const channel = page.getByTestId('channel').filter({ hasText: 'House' });
    await channel.waitFor();
    await channel.getByText('Home Assistant (MQTT)').waitFor();
    await channel.getByText('secret stored').waitFor();
    assert.ok(!(await page.content()).includes(PASSWORD));
    const listed = (await client(hub.url).get(`/alert-rules/channels?tenantId=${team.id}`, owner)).body.channels;
    assert.equal(listed.find((c: { name: string }) => c.name === 'House').type, 'mqtt_home_assistant');
  });

  test('an admin adds a BirdWeather channel; "Send test" reaches the station stand-in', async () => {
    await page.getByRole('button', { name: 'Add a channel' }).click();
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Channel name').fill('Station');
    await form.getByLabel('Channel type').selectOption('birdweather');
    await form.getByText(/Sensitive species are never uploaded/).waitFor();
    await form.getByLabel('Station token').fill(TOKEN);
    await form.getByLabel('API address').fill(station.url);
    await form.getByLabel('Minimum confidence').fill('0.5');
    await form.getByRole('button', { name: 'Save' }).click();
    const channel = page.getByTestId('channel').filter({ hasText: 'Station' });
    await channel.waitFor();
    await channel.getByText('BirdWeather', { exact: true }).waitFor();
    assert.ok(!(await page.content()).includes(TOKEN));
    await channel.getByRole('button', { name: 'Send test' }).click();
    const result = channel.getByTestId('test-result');
    await result.waitFor({ timeout: 15_000 });
    assert.match((await result.textContent()) ?? '', /^Delivered — HTTP 201 in \d+ ms$/);
    assert.deepEqual(
      station.received.map((r) => r.path.split('?')[0]),
      [`/api/v1/stations/${TOKEN}/soundscapes`, `/api/v1/stations/${TOKEN}/detections`],
    );
  });

  test('the rule form does not offer the stream channels', async () => {
    await page
      .getByRole('button', { name: /Add a rule|New rule/ })
      .first()
      .click();
    const sendTo = page.getByRole('group', { name: 'Send to' }).last();
    await sendTo.waitFor();
    assert.equal(await sendTo.getByLabel('House').count(), 0);
    assert.equal(await sendTo.getByLabel('Station').count(), 0);
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspViolations, [], 'CSP violations');
  });
});
