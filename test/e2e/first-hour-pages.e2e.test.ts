/**
 * Pages that explain themselves, and forms that say what they take (issue 23, items 5–7), in
 * Chromium against a hub serving the built dashboard: the share page names the hub and the place
 * in the visitor's language and date format, the invite page names team, inviter and role, an
 * empty members table says why, a 6,000-character comment wraps, an empty rename is refused at
 * the field, inputs carry the API's limits and a date filter shows the person's date format.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { launchChromium, newWatchedContext, signedIn, skip } from '../helpers/browser.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { newId } from '../../src/core/crypto.ts';

describe('pages that explain themselves (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  let sat: { id: string; name: string };

  before(async () => {
    hub = await startHub();
    browser = await launchChromium();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user({ name: 'Olive Owner' });
    team = await f.team(owner, 'Marsh Listeners');
    sat = await makeSatellite(hub, team, owner, 'Reedbed Pi');
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
  });

  test('the share page names the hub and the place, with texts and date in the visitor’s locale (de-DE)', async () => {
    const root = await factories(hub).user({ admin: true });
    assert.equal((await api.put('/settings/platform', { hub_name: 'Moorhub' }, root)).status, 200);
    await hub.sql.query('UPDATE satellites SET latitude = 52.3759, longitude = 9.7320 WHERE id = $1', [sat.id]);
    const id = await makeDetection(hub, { satellite: { id: sat.id, tenantId: team.id }, at: new Date(Date.UTC(2026, 4, 10, 5, 30)) });
    const ctx = await newWatchedContext(browser, { baseURL: hub.url, locale: 'de-DE', timezoneId: 'Europe/Berlin' });
    const page = await ctx.newPage();
    await page.goto(`/share/detection/${id}/${hub.services.share.tokenFor(id)}`);
    await page.getByTestId('shared-hub').getByText('Geteilt von Moorhub').waitFor();
    assert.equal(await page.getByTestId('shared-place').textContent(), 'Gehört bei 52° N, 10° O');
    // German long date, Berlin summer time: "10. Mai 2026 um 07:30".
    assert.match((await page.getByTestId('shared-when').textContent()) ?? '', /^10\. Mai 2026.*07:30/);
    const body = (await page.textContent('main')) ?? '';
    for (const secret of [team.name, sat.name, '52.37', '9.73']) assert.ok(!body.includes(secret), `no ${secret}`);
    await ctx.close();
  });

  test('a sensitive species’ share page gives the day only, without a time or a player (issue 33)', async () => {
    const id = await makeDetection(hub, {
      satellite: { id: sat.id, tenantId: team.id },
      at: new Date(Date.UTC(2026, 4, 10, 22, 30)),
      code: 'goleag',
      scientificName: 'Aquila chrysaetos',
      commonName: 'Golden Eagle',
    });
    // New York: the UTC day's start read as local time would be the evening of 9 May.
    const ctx = await newWatchedContext(browser, { baseURL: hub.url, locale: 'en-US', timezoneId: 'America/New_York' });
    const page = await ctx.newPage();
    await page.goto(`/share/detection/${id}/${hub.services.share.tokenFor(id)}`);
    await page.getByRole('heading', { name: 'Golden Eagle' }).waitFor();
    assert.equal(await page.getByTestId('shared-when').textContent(), 'May 10, 2026');
    assert.equal(await page.locator('audio').count(), 0, 'no player for the withheld recording');
    await ctx.close();
  });

  test('the invite page names the team, the inviter and the role', async () => {
    const invite = await api.post('/auth/invites', { tenantId: team.id, role: 'viewer' }, owner);
    assert.equal(invite.status, 201, invite.text);
    const ctx = await newWatchedContext(browser, { baseURL: hub.url, locale: 'en-GB' });
    const page = await ctx.newPage();
    await page.goto(`/register?invite=${invite.body.token}`);
    await page.getByText('Olive Owner invites you to join Marsh Listeners as Viewer.').waitFor();
    await ctx.close();

    const person = await factories(hub).user();
    const s = await signedIn(browser, hub.url, person);
    await s.page.goto(`/register?invite=${invite.body.token}`);
    await s.page.getByText('Olive Owner invites you to join Marsh Listeners as Viewer.').waitFor();
    await s.ctx.close();
  });

  test('the members table of a team with only a hub admin says why it is empty', async () => {
    const admin = await factories(hub).user({ admin: true, name: 'Hub Keeper' });
    await factories(hub).team(admin, 'Admin Only Team');
    const { ctx, page } = await signedIn(browser, hub.url, admin);
    await page.getByRole('link', { name: 'Detections' }).first().waitFor();
    await page.goto('/team');
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    await page.getByText('hub admins reach every team without being members').waitFor();
    await ctx.close();
  });

  test('a 6,000-character comment wraps; the comment field carries the API limit', async () => {
    const id = await makeDetection(hub, { satellite: { id: sat.id, tenantId: team.id } });
    await hub.sql.query(
      'INSERT INTO detection_comments (id, detection_id, tenant_id, author_id, text, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [newId(), id, team.id, owner.id, 'x'.repeat(6000), hub.clock.now()],
    );
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 800 } });
    await page.getByRole('link', { name: 'Detections' }).first().waitFor();
    await page.goto(`/detections/${id}`);
    await page.getByText('x'.repeat(100)).first().waitFor();
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
    }));
    assert.ok(scrollWidth <= innerWidth, `the page stays ${innerWidth} px wide (scrollWidth ${scrollWidth})`);
    assert.equal(await page.getByLabel('Add a comment').getAttribute('maxlength'), '2000');
    await ctx.close();
  });

  test('an empty rename is refused at the field; the field carries the schema’s maxLength', async () => {
    const doc = await (await fetch(`${hub.url}/api/docs/openapi.json`)).json();
    const nameSchema = doc.paths['/api/satellites/{id}'].patch.requestBody.content['application/json'].schema.properties.name;
    const { ctx, page } = await signedIn(browser, hub.url, owner);
    await page.getByRole('link', { name: 'Detections' }).first().waitFor();
    await page.goto(`/fleet/${sat.id}`);
    const field = page.getByRole('textbox', { name: 'Rename' });
    await field.waitFor();
    assert.equal(Number(await field.getAttribute('maxlength')), nameSchema.maxLength);
    await field.fill('   ');
    await page.getByRole('form', { name: 'Rename' }).getByRole('button', { name: 'Save' }).click();
    await page.getByText('A satellite needs a name.').waitFor();
    const row = await hub.sql.one<{ name: string }>('SELECT name FROM satellites WHERE id = $1', [sat.id]);
    assert.equal(row.name, sat.name);
    await ctx.close();
  });

  test('a date filter shows the chosen value in the person’s date format', async () => {
    assert.equal((await api.put('/auth/me/preferences', { dateFormatPrimary: 'DD.MM.YYYY' }, owner)).status, 200);
    const { ctx, page } = await signedIn(browser, hub.url, owner);
    await page.getByRole('link', { name: 'Detections' }).first().waitFor();
    await page.goto('/detections');
    await page.locator('details.filters summary').click();
    await page.getByLabel('From').fill('2026-05-10T05:30');
    await page
      .getByTestId('date-shown')
      .getByText(/10\.05\.2026/)
      .waitFor();
    await ctx.close();
  });
  test('while the built-in model classifies, Detections and Fleet say so in one line; a team on a real model sees none', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner);
    await page.getByRole('link', { name: 'Detections' }).first().waitFor();
    await page.goto('/detections');
    const note = page.getByTestId('demo-model-note');
    await note.getByText('built-in demonstration model').waitFor();
    assert.match((await note.textContent()) ?? '', /A hub admin can install BirdNET or Perch/);
    await page.goto('/fleet');
    await page.getByTestId('demo-model-note').getByText('not real birds').waitFor();
    await ctx.close();

    // Another team picks an installed model: no line on its pages.
    const birder = await factories(hub).user();
    const real = await factories(hub).team(birder, 'Real Model Team');
    await hub.sql.query(
      `INSERT INTO inference_models (id, name, version, enabled, is_default, label_count, created_at, updated_at)
       VALUES ('birdnet-test', 'BirdNET', '2.4', true, false, 6522, now(), now())`,
    );
    assert.equal((await api.put(`/settings/tenant?tenantId=${real.id}`, { inference_model: 'birdnet-test' }, birder)).status, 200);
    const other = await signedIn(browser, hub.url, birder);
    await other.page.getByRole('link', { name: 'Detections' }).first().waitFor();
    for (const path of ['/fleet', '/detections']) {
      await other.page.goto(path);
      // The line names the team's model once the page knows it; the demonstration note is not there.
      await other.page.getByTestId('team-model').getByText('Identified by BirdNET 2.4.').waitFor();
      assert.equal(await other.page.getByTestId('demo-model-note').count(), 0);
    }
    await other.ctx.close();
  });
});
