/**
 * Things that looked broken (issue 36 point 6), end to end in headless Chromium: on a hub
 * without a mail server the forgot-password page says no link will come and who can help, and
 * the hub admin's System page says mail is off; the password rule (common and breached
 * passwords refused) shows before the first try; a hub admin allows a LAN webhook receiver in the
 * hub settings.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, newWatchedContext, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('things that looked broken (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let hubAdmin: TestUser;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    hubAdmin = await factories(hub).user({ admin: true, name: 'Hub Admin' });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('without a mail server, forgot-password says no link will come and who resets it', async () => {
    assert.equal((await client(hub.url).get('/system/info')).body.mail, false, 'the test hub has no SMTP_URL');
    const ctx = await newWatchedContext(browser, { baseURL: hub.url });
    const page = await ctx.newPage();
    await page.goto('/sign-in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Forgot password' }).waitFor();
    const note = page.getByTestId('forgot-no-mail');
    await note.waitFor();
    assert.match((await note.textContent()) ?? '', /This hub sends no email.*Admin → Users → Reset password/);
    await ctx.close();
  });

  test('the password rule shows before the first try; a common password is refused in words', async () => {
    const ctx = await newWatchedContext(browser, { baseURL: hub.url });
    const page = await ctx.newPage();
    await page.goto('/register');
    await page.getByText('At least 10 characters. Common passwords, and those known from data breaches, are refused.').waitFor();
    await page.getByLabel('Name').fill('Pat Common');
    await page.getByLabel('Email').fill(`pat-${Date.now()}@example.org`);
    await page.getByLabel('Password').fill('Password123');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('This password is one of the most common ones, found in data breaches: choose another.').waitFor();
    await ctx.close();
  });

  test("the hub admin's System page says mail is off", async () => {
    const { ctx, page } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 } });
    await page.getByTestId('nav-admin').click();
    const mail = page.getByTestId('system-mail');
    await mail.waitFor();
    assert.match((await mail.textContent()) ?? '', /^Mail: off: no SMTP_URL is set/);
    assert.deepEqual(cspViolations, []);
    await ctx.close();
  });

  test('a hub admin allows a LAN webhook from the hub settings; before that the refusal says who and where', async () => {
    const api = client(hub.url);
    const owner = await factories(hub).user();
    const team = await factories(hub).team(owner);
    const body = { tenantId: team.id, type: 'webhook', name: 'LAN', config: { url: 'http://192.168.1.20/hook' } };
    const refused = await api.post('/alert-rules/channels', body, owner);
    assert.equal(refused.body.error.code, 'URL_NOT_ALLOWED');

    const { ctx, page } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 } });
    await page.getByTestId('nav-admin').click();
    const row = page.getByTestId('setting-outbound_allow_hosts');
    await row.getByText('Private hosts webhooks may reach').waitFor();
    await row.getByRole('textbox').fill('192.168.1.0/24');
    await row.getByRole('button', { name: 'Save' }).click();
    await row.getByTestId('value').filter({ hasText: '192.168.1.0/24' }).waitFor();
    assert.equal((await api.post('/alert-rules/channels', body, owner)).status, 201, 'allowed now');
    await api.put('/settings/platform', { outbound_allow_hosts: null }, hubAdmin);
    await ctx.close();
  });
});
