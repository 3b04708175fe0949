/**
 * Changing one's email address in the dashboard (issue 33 item 3), end to end in headless
 * Chromium: the Account page asks for a new address, shows the change waiting ("Confirmation
 * sent to …") while the account keeps its address, the link from the mail confirms it on the
 * /confirm-email page, and the Account page then shows the new address. Also the second-factor
 * banner for hub admins: advice while the hub switch require_admin_mfa is off, a requirement
 * when it is on. No CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('email change on the Account page (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let f: ReturnType<typeof factories>;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    f = factories(hub);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await hub?.close();
  });

  test('a new address waits for its link, then the link from the mail confirms it', async () => {
    const u = await f.user({ name: 'Ada Address' });
    const to = `ada-new-${Date.now()}@example.net`;
    const { ctx, page } = await signedIn(browser, hub.url, u);
    await page.getByRole('navigation').getByRole('link', { name: 'Account' }).click();
    const email = page.getByLabel('Email');
    await email.waitFor();
    assert.equal(await email.inputValue(), u.email);
    await email.fill(to);
    const profile = page.locator('form').filter({ has: email });
    const [saved] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/auth/me/profile')),
      profile.getByRole('button', { name: 'Save' }).click(),
    ]);
    assert.equal(saved.status(), 200);

    // The change waits: the page says where the link went, and the account keeps its address.
    const pending = page.getByTestId('email-pending');
    await pending.getByText(`Confirmation sent to ${to}`).waitFor();
    assert.equal(await email.inputValue(), u.email);

    const mail = hub.infra.mail.recorded().find((m) => m.to === to);
    assert.ok(mail, 'a confirmation mail to the new address');
    const link = /https?:\/\/\S+\/confirm-email\?token=[0-9a-f]{64}/.exec(mail.text)?.[0];
    assert.ok(link, 'the mail carries the confirmation link');
    assert.ok(
      hub.infra.mail.recorded().some((m) => m.to === u.email && m.text.includes('/undo-email-change?token=')),
      'the old address is told',
    );

    const url = new URL(link);
    await page.goto(url.pathname + url.search);
    await page.getByRole('heading', { name: 'Confirm your new email address' }).waitFor();
    await page.getByRole('button', { name: 'Use this address' }).click();
    await page.getByRole('status').getByText(`Your account now uses ${to}.`).waitFor();

    await page.getByRole('status').getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    assert.equal(await page.getByLabel('Email').inputValue(), to);
    assert.equal(await page.getByTestId('email-pending').count(), 0, 'nothing waits any more');
    await ctx.close();
  });

  test('hub admins without a second factor: advice by default, a requirement with require_admin_mfa on', async () => {
    const admin = await f.user({ admin: true, name: 'Hal Admin' });
    const { ctx, page } = await signedIn(browser, hub.url, admin);
    const banner = page.getByTestId('mfa-banner');
    await banner.getByText('Hub admins should sign in with a second factor.').waitFor();

    const api = client(hub.url);
    assert.equal((await api.put('/settings/platform', { require_admin_mfa: true }, f.internal)).status, 200);
    try {
      await page.reload();
      await banner.getByText('This hub requires hub admins to sign in with a second factor').waitFor();
      await banner.getByRole('link', { name: 'Set up an authenticator app' }).click();
      await page.getByRole('heading', { name: 'Account' }).waitFor();
    } finally {
      assert.equal((await api.put('/settings/platform', { require_admin_mfa: false }, f.internal)).status, 200);
    }
    await ctx.close();
    assert.deepEqual(cspViolations, []);
  });
});
