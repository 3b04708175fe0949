/**
 * One call, several recorders in the dashboard (issue 35 point 3), in headless Chromium against a
 * real hub: a team admin turns the setting on from the team settings page; two satellites 100 m
 * apart hear one robin; the Detections page lists it once, marked "Heard by 2 recorders", and its
 * detail page lists both recordings, each with a player whose audio the hub serves.
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
import { classifyChunk } from '../helpers/inference.ts';
import { makeWav } from '../../src/protocol/wav.ts';
import type { Prediction } from '../../src/infra/classifier/types.ts';

const root = path.resolve(import.meta.dirname, '../..');
const ROBIN = 'Erithacus rubecula_European Robin';

describe('one call, several recorders (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    api = client(hub.url);
    owner = await factories(hub).user({ name: 'Olga Owner' });
    team = await factories(hub).team(owner);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  /** A chunk of `sat` at `at` in which the model hears a robin at `confidence`. */
  async function robin(sat: { id: string }, at: Date, confidence: number, position: { latitude: number; longitude: number }) {
    const made = await makeChunk(hub, { satellite: { id: sat.id, tenantId: team.id }, at, audio: makeWav(144_000), ...position });
    await classifyChunk(hub, made, {
      settings: hub.services.settings,
      loadClassifier: async () => ({
        classify: async () => [
          {
            label: ROBIN,
            scientificName: 'Erithacus rubecula',
            commonName: 'European Robin',
            index: 0,
            logit: 0,
            confidence,
          } as Prediction,
        ],
      }),
    });
  }

  test('turn it on in the team settings; one robin heard by two recorders is one row with both recordings', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    try {
      await page.waitForURL('**/detections');
      await page.goto('/team');
      const row = page.getByTestId('setting-observation_merge_enabled');
      await row.getByText('One call, several recorders').waitFor();
      await row.getByTestId('value').filter({ hasText: 'false' }).waitFor();
      await row.getByRole('switch').check();
      await row.getByRole('button', { name: 'Save' }).click();
      await row.getByTestId('value').filter({ hasText: 'true' }).waitFor();
      await page.getByTestId('setting-observation_merge_distance_m').getByText('250 m').first().waitFor();
      assert.equal((await api.get(`/settings/tenant?tenantId=${team.id}`, owner)).body.observation_merge_enabled, true);

      const a = await makeSatellite(hub, team, null, 'Orchard');
      const b = await makeSatellite(hub, team, null, 'Meadow');
      const at = new Date(hub.clock.now().getTime() - 10 * 60_000);
      await robin(a, at, 0.62, { latitude: 52.52, longitude: 13.405 });
      await robin(b, new Date(at.getTime() + 800), 0.91, { latitude: 52.5209, longitude: 13.405 });

      await page.goto('/detections');
      const rows = page.getByTestId('detection');
      await rows.first().waitFor();
      assert.equal(await rows.count(), 1, 'one row for the call');
      await rows.first().getByTestId('recorders').filter({ hasText: 'Heard by 2 recorders' }).waitFor();
      assert.match((await rows.first().textContent()) ?? '', /Meadow/, 'the more confident recording leads');

      await rows.first().getByRole('link', { name: 'European Robin' }).click();
      await page.getByRole('heading', { name: 'Recordings of this call' }).waitFor();
      const recordings = page.getByTestId('recording');
      assert.equal(await recordings.count(), 2);
      assert.match((await recordings.nth(0).textContent()) ?? '', /Meadow.*listed/);
      assert.match((await recordings.nth(1).textContent()) ?? '', /Orchard/);
      for (const i of [0, 1]) {
        const src = await recordings.nth(i).locator('audio').getAttribute('src');
        const res = await page.request.get(src!);
        assert.equal(res.status(), 200, 'each recording plays');
        assert.equal(res.headers()['content-type'], 'audio/wav');
      }
      // The other recording's page lists the same observation. The heading is on both pages, so the
      // new page is waited for by its address and its second recording, not by the heading.
      const before = page.url();
      await recordings.nth(1).getByRole('link', { name: 'Orchard' }).click();
      await page.waitForURL((url) => url.toString() !== before);
      await page.getByRole('heading', { name: 'Recordings of this call' }).waitFor();
      await page.getByTestId('recording').nth(1).waitFor();
      assert.equal(await page.getByTestId('recording').count(), 2);
      assert.deepEqual(cspViolations, [], 'CSP violations');
    } finally {
      await ctx.close();
    }
  });
});
