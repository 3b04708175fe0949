/**
 * Exports in the dashboard, end to end in headless Chromium against a real hub (issue 18): a
 * member previews and downloads detections as CSV (the file holds the header and the filtered
 * seeded rows; one row reads "1 detection"), sees the species an eBird checklist leaves out,
 * and runs an export in the background until its file can be downloaded; an admin's scheduled
 * export with a bad cron expression shows the hub's reason, a good one through an email channel
 * is listed with its next run; a viewer has no Export entry. Submission formats start from
 * confirmed detections, say how many unconfirmed rows they would carry, and Darwin Core shows
 * the team's licence, with GBIF's refusal once an admin picks one it does not take (issue 34).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('exports dashboard (e2e)', { skip, timeout: 240_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let member: TestUser;
  let viewer: TestUser;
  let team: TestTeam;
  let memberCtx: BrowserContext;
  let page: Page;
  const robins: string[] = [];
  const others: string[] = [];
  const nav = (p: Page) => p.getByRole('navigation', { name: 'Main' });

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    const f = factories(hub);
    api = client(hub.url);
    owner = await f.user({ name: 'Olga Owner' });
    team = await f.team(owner, 'Reed Bed Club');
    member = await f.member(team, 'member', { name: 'Mia Member' });
    viewer = await f.member(team, 'viewer', { name: 'Vic Viewer' });
    const sat = await makeSatellite(hub, team, owner, 'Reed Mic');
    const now = hub.clock.now().getTime();
    const at = (minutes: number) => new Date(now - minutes * 60_000);
    for (const m of [10, 20, 30]) robins.push(await makeDetection(hub, { satellite: sat, at: at(m), confidence: 0.91 }));
    others.push(
      await makeDetection(hub, {
        satellite: sat,
        at: at(40),
        code: 'comchi1',
        commonName: 'Common Chiffchaff',
        scientificName: 'Phylloscopus collybita',
        confidence: 0.84,
      }),
    );
    for (const m of [50, 60])
      others.push(
        await makeDetection(hub, {
          satellite: sat,
          at: at(m),
          code: 'comfro',
          commonName: 'Common Frog',
          scientificName: 'Rana temporaria',
          category: 'amphibian',
          confidence: 0.8,
        }),
      );
    browser = await launchChromium();
    ({ ctx: memberCtx, page } = await signedIn(browser, hub.url, member, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' }));
    await page.getByRole('heading', { name: 'Detections' }).waitFor();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('a member previews Detections CSV with its total and rows, filters it, and downloads the file', async () => {
    await nav(page).getByRole('link', { name: 'Export' }).click();
    await page.getByRole('heading', { name: 'Export', exact: true }).waitFor();
    const csv = page.getByRole('radio', { name: 'Detections (CSV)' });
    await csv.check();
    assert.ok(await csv.isChecked());
    await page.getByText('eBird: import at ebird.org/import, Record Format (Extended)', { exact: false }).waitFor();
    const total = page.getByTestId('export-total');
    await total.filter({ hasText: '6 detections' }).waitFor();
    assert.equal(await page.getByTestId('preview-row').count(), 6);
    assert.equal(await page.getByTestId('preview-row').filter({ hasText: 'European Robin' }).count(), 3);
    assert.match((await page.getByTestId('preview-row').filter({ hasText: 'Common Chiffchaff' }).textContent()) ?? '', /Reed Mic/);

    // The filters narrow the preview and the file alike.
    const filters = page.getByRole('form', { name: 'Filters' });
    await filters.getByLabel('Species code').fill('eurrob1');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await total.filter({ hasText: '3 detections' }).waitFor();
    assert.equal(await page.getByTestId('preview-row').count(), 3);

    const link = page.getByRole('link', { name: 'Download', exact: true });
    const href = (await link.getAttribute('href')) ?? '';
    assert.match(href, /^\/api\/export\/detections\?/);
    assert.match(href, /species=eurrob1/);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.match(download.suggestedFilename(), /-detections\.csv$/);
    const text = fs.readFileSync((await download.path())!, 'utf8');
    const lines = text.trim().split(/\r?\n/);
    assert.match(lines[0], /^id,detected_at_utc,detected_at_local,time_zone,end_at_utc,species_code,common_name,scientific_name,category/);
    assert.equal(lines.length, 4, 'the header and the three robins');
    const ids = lines.slice(1).map((l) => l.split(',')[0]);
    assert.deepEqual([...ids].sort(), [...robins].sort());
    for (const l of lines.slice(1)) assert.match(l, /,eurrob1,European Robin,Erithacus rubecula,bird,/);
    for (const id of others) assert.ok(!text.includes(id), 'filtered-out rows stay out');

    // One detection reads in the singular.
    await filters.getByLabel('Species code').fill('comchi1');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await total.filter({ hasText: /^1 detection$/ }).waitFor();
    assert.equal(await total.textContent(), '1 detection');
    assert.equal(await page.getByTestId('preview-row').count(), 1);

    await filters.getByRole('button', { name: 'Clear' }).click();
    await total.filter({ hasText: '6 detections' }).waitFor();
  });

  test('eBird lists the species it leaves out and why', async () => {
    await page.getByRole('radio', { name: 'eBird checklist' }).check();
    // A submission format starts from confirmed detections (none here): widen it to every status.
    const filters = page.getByRole('form', { name: 'Filters' });
    assert.equal(await filters.getByLabel('Verification').inputValue(), 'confirmed');
    await filters.getByLabel('Verification').selectOption('');
    await filters.getByRole('button', { name: 'Apply' }).click();
    const skipped = page.getByTestId('export-skipped');
    await skipped.waitFor();
    assert.match((await skipped.textContent()) ?? '', /Left out of the eBird checklist/);
    const items = skipped.getByTestId('skipped-species');
    assert.equal(await items.count(), 1);
    assert.equal(await items.first().textContent(), 'Common Frog (comfro), 2 detections: not a bird');
    assert.equal(await skipped.getByText('European Robin').count(), 0, 'birds stay in');
    assert.match(
      (await page.getByRole('link', { name: 'Download', exact: true }).getAttribute('href')) ?? '',
      /^\/api\/export\/checklist\?/,
    );
  });

  test('"Run in the background" starts a job that reaches Done with its file and expiry', async () => {
    await page.getByRole('radio', { name: 'Detections (JSON)' }).check();
    await page.getByTestId('export-total').filter({ hasText: '6 detections' }).waitFor();
    await page.getByText('No background exports in the last 24 hours.').waitFor();
    await page.getByRole('checkbox', { name: 'Run in the background' }).check();
    assert.equal(await page.getByRole('link', { name: 'Download', exact: true }).count(), 0, 'no direct link in the background');
    await page.getByRole('button', { name: 'Start the export' }).click();
    const job = page.getByTestId('export-job').first();
    await job.waitFor();
    await job.getByTestId('job-status').filter({ hasText: 'Done' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId('export-job').count(), 1);
    const text = (await job.textContent()) ?? '';
    assert.match(text, /Detections \(JSON\)/);
    assert.match(text, /6 \/ 6 rows/);
    assert.match(text, /Available until \d{4}-\d{2}-\d{2}/);
    const file = job.getByRole('link', { name: /^Download .*-detections\.json$/ });
    assert.match((await file.getAttribute('href')) ?? '', /^\/api\/export\/jobs\/[^/]+\/file$/);
    const [download] = await Promise.all([page.waitForEvent('download'), file.click()]);
    const rows = JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as unknown[];
    assert.equal(rows.length, 6);
    const jobs = (await api.get(`/export/jobs?tenantId=${team.id}`, member)).body.jobs;
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0].status, 'done');
    assert.equal(jobs[0].format, 'json');
  });

  test("Darwin Core: confirmed preselected, the team's licence with a link to the settings, the unconfirmed rows, GBIF's refusal", async () => {
    const total = page.getByTestId('export-total');
    await page.getByRole('radio', { name: 'Detections (CSV)' }).check();
    await total.filter({ hasText: '6 detections' }).waitFor();
    await page.getByRole('checkbox', { name: 'Run in the background' }).uncheck();
    await page.getByRole('radio', { name: 'Darwin Core Archive' }).check();
    const filters = page.getByRole('form', { name: 'Filters' });
    await total.filter({ hasText: '0 detections' }).waitFor();
    assert.equal(await filters.getByLabel('Verification').inputValue(), 'confirmed');
    const href = (await page.getByRole('link', { name: 'Download', exact: true }).getAttribute('href')) ?? '';
    assert.match(href, /^\/api\/export\/observation\?/);
    assert.match(href, /format=dwca/);
    assert.match(href, /verificationStatus=confirmed/);

    const license = page.getByTestId('export-license');
    await license.waitFor();
    assert.match((await license.textContent()) ?? '', /Licence: CC BY 4\.0/);
    assert.equal(
      await license.getByRole('link', { name: 'CC BY 4.0' }).getAttribute('href'),
      'http://creativecommons.org/licenses/by/4.0/legalcode',
    );
    assert.equal(await license.getByRole('link', { name: 'Team admins choose it in the team settings.' }).getAttribute('href'), '/team');
    assert.equal(await page.getByTestId('export-warning').count(), 0, 'GBIF takes CC BY 4.0');
    assert.equal(await page.getByTestId('export-unverified').count(), 0, 'confirmed rows only');

    // Every status: the six seeded rows, none confirmed, the lowest at 80 %.
    await filters.getByLabel('Verification').selectOption('');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await total.filter({ hasText: '6 detections' }).waitFor();
    const note = page.getByTestId('export-unverified');
    await note.waitFor();
    assert.match(
      (await note.textContent()) ?? '',
      /^6 rows have not been confirmed by anyone \(lowest confidence 80%\): they would be submitted/,
    );

    // An admin picks a licence GBIF does not take in the team settings: the Export page says GBIF will refuse it.
    const { ctx, page: a } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    try {
      await a.getByRole('heading', { name: 'Detections' }).waitFor();
      await a.goto('/export?what=dwca');
      await a.getByTestId('export-license').getByRole('link', { name: 'Team admins choose it in the team settings.' }).click();
      const row = a.getByTestId('setting-publication_license');
      await row.getByLabel('Licence of published data').selectOption('CC-BY-NC-SA-4.0');
      await row.getByRole('button', { name: 'Save' }).click();
      await row.getByTestId('value').filter({ hasText: 'CC-BY-NC-SA-4.0' }).waitFor();
    } finally {
      await ctx.close();
    }
    assert.equal((await api.get(`/settings/tenant?tenantId=${team.id}`, member)).body.publication_license, 'CC-BY-NC-SA-4.0');
    await page.reload();
    const warning = page.getByTestId('export-warning');
    await warning.waitFor();
    assert.equal(
      await warning.textContent(),
      'GBIF will refuse this archive: it publishes only CC0 1.0, CC BY 4.0 and CC BY-NC 4.0, not CC BY-NC-SA 4.0.',
    );
    assert.match((await page.getByTestId('export-license').textContent()) ?? '', /Licence: CC BY-NC-SA 4\.0/);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { publication_license: null }, owner)).status, 200);
    await page.getByRole('radio', { name: 'Detections (CSV)' }).check();
  });

  test("an admin's scheduled export: a bad cron shows the hub's reason, a good one is listed with its next run", async () => {
    const channel = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'email', name: 'Club inbox', config: { addresses: ['club@example.org'] } },
      owner,
    );
    assert.equal(channel.status, 201, channel.text);
    // The hub's words for the bad expression, to compare with what the form shows.
    const refused = await api.post(
      '/exports/scheduled',
      { tenantId: team.id, name: 'x', format: 'csv', schedule: '61 * * * *', channelId: channel.body.id },
      owner,
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'INVALID_SCHEDULE');
    const reason: string = refused.body.error.message;

    const { ctx, page: a } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await a.getByRole('heading', { name: 'Detections' }).waitFor();
    await nav(a).getByRole('link', { name: 'Team', exact: true }).click();
    await a.getByRole('link', { name: 'edit the scheduled exports' }).click();
    await a.getByRole('heading', { name: 'Scheduled exports: Reed Bed Club' }).waitFor();
    await a.getByText('No scheduled exports yet.').waitFor();
    await a.getByRole('button', { name: 'Add a scheduled export' }).click();
    const form = a.getByRole('form', { name: 'New scheduled export' });
    await form.getByLabel('Export name').fill('Weekly eBird');
    await form.getByLabel('Format').selectOption('checklist');
    const channelSelect = form.getByLabel('Channel', { exact: true });
    assert.deepEqual(await channelSelect.locator('option').allTextContents(), ['Club inbox (Email)']);
    await form.getByLabel('Schedule (cron)').fill('61 * * * *');
    await form.getByRole('button', { name: 'Save' }).click();
    const error = form.getByRole('alert');
    await error.waitFor();
    assert.equal(await error.textContent(), `The schedule is not valid: ${reason}`);
    assert.match(reason, /^schedule: /);

    await form.getByRole('button', { name: 'Weekly, Monday 06:00' }).click();
    assert.equal(await form.getByLabel('Schedule (cron)').inputValue(), '0 6 * * 1');
    assert.equal(await form.getByLabel('Time zone').inputValue(), 'UTC', "the team's zone by default");
    await form.getByLabel('Minimum confidence').fill('80');
    await form.getByRole('button', { name: 'Save' }).click();
    const item = a.getByTestId('scheduled-export').filter({ hasText: 'Weekly eBird' });
    await item.waitFor();

    const saved = (await api.get(`/exports/scheduled?tenantId=${team.id}`, owner)).body.scheduled;
    assert.equal(saved.length, 1);
    assert.equal(saved[0].schedule, '0 6 * * 1');
    assert.equal(saved[0].format, 'checklist');
    assert.equal(saved[0].channelId, channel.body.id);
    assert.deepEqual(saved[0].filters, { minConfidence: 0.8 });
    assert.ok(saved[0].nextRunAt, 'a next run');
    const text = (await item.textContent()) ?? '';
    assert.match(text, /eBird checklist/);
    assert.match(text, /0 6 \* \* 1/);
    assert.match(text, /Channel: Club inbox/);
    assert.match(text, /Filters: ≥ 80 %/);
    assert.match(text, /Last run: never/);
    const next = new Date(saved[0].nextRunAt);
    assert.equal(next.getUTCDay(), 1, 'a Monday');
    assert.match(text, new RegExp(`Next run: ${saved[0].nextRunAt.slice(0, 10)} 06:00:00`));

    // Switched off: no next run on screen, disabled at the hub.
    await item.getByRole('switch', { name: 'Enabled' }).click();
    await item.getByTestId('scheduled-runs').filter({ hasText: 'Next run: — ·' }).waitFor();
    assert.equal((await api.get(`/exports/scheduled?tenantId=${team.id}`, owner)).body.scheduled[0].enabled, false);

    // "Run now" (issue 36 point 6) sends at once, switched off or not: the last run is no longer "never".
    await item.getByRole('button', { name: 'Run now' }).click();
    await item
      .getByTestId('scheduled-runs')
      .filter({ hasText: /Last run: \S+ \S+ · (delivered|failed)/ })
      .waitFor();
    assert.ok((await api.get(`/exports/scheduled?tenantId=${team.id}`, owner)).body.scheduled[0].lastRunAt, 'run at the hub');
    await ctx.close();
  });

  test('a viewer has no Export entry and the page says why', async () => {
    const { ctx, page: v } = await signedIn(browser, hub.url, viewer);
    await v.getByRole('heading', { name: 'Detections' }).waitFor();
    await nav(v).getByRole('link', { name: 'Alerts' }).waitFor();
    assert.equal(await nav(v).getByRole('link', { name: 'Export' }).count(), 0);
    assert.equal(await nav(page).getByRole('link', { name: 'Export' }).count(), 1, 'members have it');
    await v.goto('/export');
    await v.getByText('Only members of the team export detections.').waitFor();
    await ctx.close();
  });

  test('no page broke the Content-Security-Policy', async () => {
    await memberCtx.close();
    assert.deepEqual(cspViolations, [], 'CSP violations');
  });
});
