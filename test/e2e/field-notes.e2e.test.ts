/**
 * Field notes in the dashboard, end to end in headless Chromium against a real hub (issue 22):
 * a member adds a note with a photo and the satellite's position on the satellite page and
 * sees it listed (the photo loads), then finds it beside the Detections list; no CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeSatellite, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');
/** A real 2×2 PNG, so the listed photo actually renders. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGNQaHAAIgYIBQAYDgOB5/Xb2wAAAABJRU5ErkJggg==', 'base64');

describe('field notes dashboard (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let member: TestUser;
  let sat: { id: string; name: string; tenantId: string };

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    const f = factories(hub);
    const owner = await f.user({ name: 'Olga Owner' });
    const team = await f.team(owner, 'Marsh Watchers');
    member = await f.member(team, 'member', { name: 'Mia Member' });
    sat = await makeSatellite(hub, team, owner, 'Marsh Mic');
    await hub.sql.query('UPDATE satellites SET latitude = 52.51, longitude = 13.38 WHERE id = $1', [sat.id]);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('a member adds a note on a satellite page and sees it listed, with its photo and position', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, member, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await page.getByRole('heading', { name: 'Detections' }).waitFor();
    await page.goto(`/fleet/${sat.id}`);
    await page.getByRole('heading', { name: 'Marsh Mic' }).waitFor();
    const notes = page.getByRole('region', { name: 'Field notes' });
    await notes.getByText('No field notes yet.').waitFor();

    const form = notes.getByRole('form', { name: 'Add a note' });
    await form.getByLabel('Note').fill('Bittern booming from the north reeds at dusk.');
    await form.getByLabel('Time').fill('2026-04-12T19:45');
    await form.getByLabel('Photo (optional)').setInputFiles({ name: 'reeds.png', mimeType: 'image/png', buffer: PNG });
    await form.getByRole('button', { name: "Use the satellite's position" }).click();
    assert.equal(await form.getByTestId('note-position').textContent(), '52.51000, 13.38000');
    await form.getByRole('button', { name: 'Save note' }).click();

    const item = notes.getByTestId('field-note');
    await item.getByText('Bittern booming from the north reeds at dusk.').waitFor();
    assert.equal(await item.count(), 1);
    const meta = await item.locator('.muted').first().textContent();
    assert.match(meta ?? '', /2026-04-12/);
    assert.match(meta ?? '', /Mia Member/);
    assert.match(meta ?? '', /52\.51000, 13\.38000/);
    const img = item.getByRole('img', { name: 'Photo by Mia Member' });
    await img.waitFor();
    await page.waitForFunction(
      (el) => (el as HTMLImageElement | null)?.complete && (el as HTMLImageElement).naturalWidth === 2,
      await img.elementHandle(),
    );
    assert.equal(await form.getByLabel('Note').inputValue(), '', 'the form is emptied');
    await item.getByRole('button', { name: 'Edit' }).waitFor();

    // The hub holds it as written.
    const list = await client(hub.url).get(`/field-notes?tenantId=${sat.tenantId}&satelliteId=${sat.id}`, member);
    assert.equal(list.body.total, 1);
    assert.equal(list.body.notes[0].at, '2026-04-12T19:45:00.000Z');
    assert.equal(list.body.notes[0].latitude, 52.51);

    // Beside the Detections list, in a window that holds it.
    await page.goto(
      `/detections?start=${encodeURIComponent('2026-04-12T00:00:00.000Z')}&end=${encodeURIComponent('2026-04-13T00:00:00.000Z')}`,
    );
    const side = page.getByRole('region', { name: 'Field notes in this window' });
    await side.getByText('Bittern booming from the north reeds at dusk.').waitFor();
    assert.match((await side.getByTestId('field-note').textContent()) ?? '', /Marsh Mic/);

    assert.deepEqual(cspViolations, []);
    await ctx.close();
  });
});
