/**
 * The first hour of a birder (issue 23), in Chromium against a hub serving the built dashboard:
 * the sign-in page offers registration, a person without a team lands on "Create your team", an
 * empty fleet offers "Add a satellite", and the command the page shows, run for real, brings the
 * first detection to the Detections page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { launchChromium, newWatchedContext, signedIn, skip } from '../helpers/browser.ts';
import { factories } from '../helpers/factories.ts';
import { RawSatellite } from '../helpers/raw-satellite.ts';
import { SPECIES } from '../../src/satellite/soundscape.ts';
import { freePort } from '../helpers/ports.ts';

const root = path.resolve(import.meta.dirname, '../..');

/** Runs a shell command line in the project directory, as a person pastes it; resolves with its exit and output. */
function run(line: string, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', line], { cwd: root, env: { ...process.env, NODE_ENV: 'test' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${line} did not end within ${timeoutMs} ms\n${out}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('the first hour (e2e)', { skip, timeout: 240_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let publicUrl: string;

  before(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    hub = await startHub({ port, env: { CHORUS_PUBLIC_URL: publicUrl } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
  });

  test('the sign-in page links to registration while self-registration is on', async () => {
    const ctx = await newWatchedContext(browser, { baseURL: hub.url });
    const page = await ctx.newPage();
    await page.goto('/sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL('**/register');
    await ctx.close();
  });

  test('first sign-in → create your team → add a satellite → the shown command → the first detection', async () => {
    const person = await factories(hub).user({ name: 'Robin Birder' });
    const { ctx, page } = await signedIn(browser, hub.url, person);
    await page.getByRole('heading', { name: 'Create your team' }).waitFor();
    await page.getByRole('link', { name: 'Create your team' }).click();
    await page.getByLabel('Team name').fill('Garden birds');
    await page.getByRole('button', { name: 'Create team' }).click();
    // The next step after creating the team is adding its first satellite (issue 36).
    await page.waitForURL('**/fleet');
    const team = await hub.sql.one<{ id: string }>(`SELECT id FROM tenants WHERE name = 'Garden birds'`);

    await page.getByRole('heading', { name: 'Add your first satellite' }).waitFor();
    await page.getByRole('button', { name: 'Create a satellite key' }).click();
    await page.getByTestId('satellite-command').first().waitFor();
    const commands = await page.getByTestId('satellite-command').allTextContents();
    assert.equal(commands.length, 3);
    const escaped = publicUrl.replace(/[.]/g, '\\.');
    assert.match(commands[0], new RegExp(`^npx chorus satellite --hub ${escaped} --token \\S+ --tenant ${team.id}$`));
    assert.match(commands[1], / --source alsa:default$/);
    const key = await hub.sql.one<{ role: string }>('SELECT role FROM api_keys WHERE tenant_id = $1', [team.id]);
    assert.equal(key.role, 'member', 'a satellite key may register satellites');

    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-first-hour-'));
    const result = await run(`${commands[0]} --chunks 3 --interval-ms 200 --timeout 90 --data ${data}`, 150_000);
    assert.equal(result.code, 0, result.out);
    assert.match(result.out, /3 chunks acked stored/);

    await page.goto('/detections');
    await page.getByTestId('detection').first().waitFor({ timeout: 60_000 });
    await ctx.close();
  });
  test('settings read as people read: labels, descriptions, units; selects, switches, ranges and a schedule editor', async () => {
    const f = factories(hub);
    const owner = await f.user({ name: 'Sam Settings' });
    const team = await f.team(owner);
    const { ctx, page } = await signedIn(browser, hub.url, owner);
    await page.waitForURL('**/detections');
    await page.goto('/team');
    const profile = page.getByTestId('setting-recording_profile');
    await profile.getByText('When the satellite records').waitFor();
    assert.match((await profile.locator('code').textContent()) ?? '', /^recording_profile$/);
    await profile.getByLabel('Recording profile').selectOption('scheduled');
    await profile.getByRole('button', { name: 'Save' }).click();
    await profile.getByTestId('value').filter({ hasText: 'scheduled' }).waitFor();

    const drop = page.getByTestId('setting-drop_anthropogenic_at_satellite');
    await drop.getByText('Drop chunks classified as anthropogenic noise').waitFor();
    await drop.getByRole('switch').uncheck();
    await drop.getByRole('button', { name: 'Save' }).click();
    await drop.getByTestId('value').filter({ hasText: 'false' }).waitFor();

    // Out of range: refused at the field with the range, and nothing is sent.
    const hb = page.getByTestId('setting-heartbeat_interval_sec');
    await hb.getByText('From 10 to 3600 s').waitFor();
    await hb.getByLabel('Heartbeat interval').fill('5');
    await hb.getByRole('button', { name: 'Save' }).click();
    await hb.getByText('Must be between 10 and 3600 s').waitFor();

    const schedule = page.getByTestId('setting-recording_schedule');
    await schedule.getByRole('button', { name: 'Add a window' }).click();
    await schedule.getByLabel('Relative to').selectOption('sunrise');
    await schedule.getByLabel('Start (minutes from the event)').fill('60');
    await schedule.getByLabel('End (minutes from the event)').fill('30');
    await schedule.getByRole('button', { name: 'Save' }).click();
    await schedule.getByText('Window 1: start must come before end').waitFor();
    await schedule.getByLabel('Start (minutes from the event)').fill('-45');
    await schedule.getByRole('button', { name: 'Save' }).click();
    await schedule.getByTestId('value').filter({ hasText: 'sunrise' }).waitFor();

    const eff = await fetch(`${hub.url}/api/settings/effective?tenantId=${team.id}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    const entries: { key: string; own: unknown }[] = (await eff.json()).settings;
    const own = (k: string) => entries.find((e) => e.key === k)?.own;
    assert.equal(own('recording_profile'), 'scheduled');
    assert.equal(own('drop_anthropogenic_at_satellite'), false);
    assert.equal(own('heartbeat_interval_sec'), null, 'the refused value was never sent');
    assert.deepEqual(own('recording_schedule'), [{ reference: 'sunrise', start: -45, end: 30 }]);
    await ctx.close();
  });
  test('review without surprises: new detections wait behind an "N new" bar; confidence in percent; an empty window refused at the field', async () => {
    const f = factories(hub);
    const owner = await f.user({ name: 'Rita Reviewer' });
    const team = await f.team(owner);
    const sat = await RawSatellite.register(hub, owner, team, 'Hedge');
    const at = (minutesAgo: number) => new Date(hub.clock.now().getTime() - minutesAgo * 60_000);
    const detectionOf = async (chunkId: string) =>
      (await hub.sql.one<{ id: string }>('SELECT id FROM detections WHERE chunk_id = $1 LIMIT 1', [chunkId])).id;
    const first = await sat.publishChunk({ species: [SPECIES[4]!.label], seed: 11, recordedAt: at(30) });
    await sat.publishChunk({ species: [SPECIES[0]!.label], seed: 12, recordedAt: at(20) });

    const { ctx, page } = await signedIn(browser, hub.url, owner);
    await page.waitForURL('**/detections');
    const rows = page.getByTestId('detection');
    await rows.nth(1).waitFor();
    // Review the second card (the older one): focus it, as j/k or a click does.
    const older = await detectionOf(first.chunkId);
    await page.locator(`[data-id="${older}"]`).focus();

    const late = await sat.publishChunk({ species: [SPECIES[2]!.label], seed: 13, recordedAt: at(1) });
    await page.getByTestId('new-bar').filter({ hasText: '1 new' }).waitFor();
    assert.equal(await rows.count(), 2, 'the new card waits; the list did not shift');
    assert.equal(await rows.nth(1).getAttribute('data-id'), older);
    await page.keyboard.press('c');
    await rows.nth(1).getByText('Your vote: Confirm').waitFor();
    const vote = await hub.sql.one<{ detection_id: string }>('SELECT detection_id FROM detection_votes WHERE user_id = $1', [owner.id]);
    assert.equal(vote.detection_id, older, 'the vote landed on the card under review');

    await page.getByTestId('new-bar').click();
    await rows.nth(2).waitFor();
    assert.equal(await rows.first().getAttribute('data-id'), await detectionOf(late.chunkId));

    // Confidence is entered as a percentage; a window that cannot match is refused at the field.
    await page.getByText('Filters').click();
    await page.getByLabel('Minimum confidence (%)').fill('50');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/minConfidence=0\.5/);
    await page.getByLabel('From').fill('2026-05-02T10:00');
    await page.getByLabel('Until').fill('2026-05-01T10:00');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Until must be later than From').waitFor();
    assert.doesNotMatch(page.url(), /start=/);

    // The detail page votes too.
    const lateId = await detectionOf(late.chunkId);
    await page.goto(`/detections/${lateId}`);
    const votes = page.getByTestId('detail-votes');
    await votes.getByRole('button', { name: 'Reject' }).click();
    await votes.getByRole('button', { name: 'Reject', pressed: true }).waitFor();
    const stored = await hub.sql.one<{ vote: string }>('SELECT vote FROM detection_votes WHERE detection_id = $1 AND user_id = $2', [
      lateId,
      owner.id,
    ]);
    assert.equal(stored.vote, 'reject');
    await sat.close();
    await ctx.close();
  });
});
