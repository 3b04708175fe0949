/**
 * "Similar calls" on a detection's page (issue 35 point 4), end to end in headless Chromium: the
 * team's nearest recordings are listed most similar first with species, similarity, votes,
 * satellite and time; a play button loads that recording into the player (and the hub serves
 * it); "label all like this" lists the proposed votes, casts only those left ticked, and the
 * list shows the new votes. A viewer sees the list but no labelling. No CSP violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestUser } from '../helpers/factories.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { makeWav } from '../../src/protocol/wav.ts';
import { createDetectionsRepo } from '../../src/modules/detections/repo.ts';

const root = path.resolve(import.meta.dirname, '../..');
const MODEL = 'birdnet-like';

/** A 16-value unit vector at `deg` degrees from the first axis: its cosine to the source's is cos(deg). */
const atAngle = (deg: number) => {
  const v = new Float32Array(16);
  v[0] = Math.cos((deg * Math.PI) / 180);
  v[1] = Math.sin((deg * Math.PI) / 180);
  return v;
};

describe('similar calls on the detection page (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let member: TestUser;
  let viewer: TestUser;
  let source: string;
  const ids: Record<string, string> = {};
  const chunks: Record<string, string> = {};

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    const f = factories(hub);
    const owner = await f.user({ name: 'Olga Owner' });
    const team = await f.team(owner, 'Hedge Listeners');
    member = await f.member(team, 'member', { name: 'Mia Member' });
    viewer = await f.member(team, 'viewer', { name: 'Vera Viewer' });
    const sat = await makeSatellite(hub, team, owner, 'Hedge Mic');
    const repo = createDetectionsRepo(hub.infra.db);
    const now = hub.clock.now().getTime();
    const rows: Array<[string, number, string, string]> = [
      ['source', 0, 'eurrob1', 'European Robin'],
      ['robin12', 12, 'eurrob1', 'European Robin'],
      ['wren20', 20, 'winwre4', 'Eurasian Wren'],
      ['robin25', 25, 'eurrob1', 'European Robin'],
      ['robin70', 70, 'eurrob1', 'European Robin'],
    ];
    for (const [i, [name, deg, code, common]] of rows.entries()) {
      const wav = makeWav(new Int16Array(4800).map((_, k) => Math.round(Math.sin(k / (3 + i)) * 8000)));
      const chunk = await makeChunk(hub, { satellite: sat, audio: wav, at: new Date(now - (i + 1) * 600_000) });
      const id = await makeDetection(hub, { chunk, at: chunk.at, code, commonName: common, modelId: MODEL, confidence: 0.9 - i * 0.05 });
      await hub.infra.db.tx((tx) =>
        repo.insertEmbeddings(tx, [{ detectionId: id, tenantId: team.id, modelId: MODEL, vector: atAngle(deg) }]),
      );
      ids[name] = id;
      chunks[name] = chunk.id;
    }
    source = ids.source;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  async function open(page: Page) {
    await page.getByRole('heading', { name: 'Detections' }).waitFor();
    await page.goto(`/detections/${source}`);
    await page.getByRole('heading', { name: 'Similar calls' }).waitFor();
    const list = page.getByTestId('similar-list');
    await list.waitFor({ timeout: 30_000 });
    return list;
  }

  test('the nearest calls are listed, and a play button plays that recording', async () => {
    const { page } = await signedIn(browser, hub.url, member, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    const list = await open(page);
    const rows = list.getByTestId('similar-row');
    assert.deepEqual(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-id'))), [
      ids.robin12,
      ids.wren20,
      ids.robin25,
      ids.robin70,
    ]);
    const first = rows.first();
    assert.match(await first.innerText(), /European Robin/);
    assert.match(await first.innerText(), /Hedge Mic/);
    assert.equal((await first.getByTestId('similarity').innerText()).trim(), '98%'); // cos 12° = 0.978
    assert.match(await first.getByTestId('votes').innerText(), /✓ 0 · ✗ 0 · \? 0/);

    const served = page.waitForResponse((r) => r.url().includes(`/api/audio/${chunks.wren20}`));
    await rows
      .nth(1)
      .getByRole('button', { name: /^Play Eurasian Wren/ })
      .click();
    assert.equal((await served).status() < 400, true, 'the hub serves the recording');
    const src = await page.getByTestId('similar-player').getAttribute('src');
    assert.ok(src?.endsWith(`/api/audio/${chunks.wren20}`), `player src ${src}`);
    assert.equal(await rows.nth(1).getByRole('button').getAttribute('aria-pressed'), 'true');
    await page.context().close();
  });

  test('label all like this: the proposals are reviewed, and only the ticked ones are voted', async () => {
    const { page } = await signedIn(browser, hub.url, member, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    await open(page);
    const box = page.getByTestId('label-all');
    await box.getByLabel('Minimum similarity (%)').fill('85');
    await box.getByRole('button', { name: 'Propose votes' }).click();
    const proposals = box.getByTestId('proposals');
    await proposals.waitFor();
    // Robins at 12° and 25° (0.98, 0.91); the wren is another species, the robin at 70° too far.
    const items = proposals.getByRole('checkbox');
    assert.equal(await items.count(), 2);
    const none = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detection_votes');
    assert.equal(none.n, 0, 'proposing casts nothing');
    // The person drops the second one: it is not voted.
    await items.nth(1).uncheck();
    await box.getByRole('button', { name: 'Cast 1 vote' }).click();
    await box.getByTestId('label-result').waitFor();
    assert.match(await box.getByTestId('label-result').innerText(), /1 vote cast; 0 skipped/);
    const votes = await hub.sql.query<{ detection_id: string; vote: string }>('SELECT detection_id, vote FROM detection_votes');
    assert.deepEqual(
      votes.map((v) => [v.detection_id, v.vote]),
      [[ids.robin12, 'confirm']],
    );
    // The list reads the votes again.
    const robin12 = page.locator(`[data-testid="similar-row"][data-id="${ids.robin12}"]`);
    await page.waitForFunction(
      (sel) => document.querySelector(sel)?.textContent?.includes('✓ 1'),
      `[data-testid="similar-row"][data-id="${ids.robin12}"] [data-testid="votes"]`,
    );
    assert.match(await robin12.getByTestId('votes').innerText(), /✓ 1/);
    await page.context().close();
  });

  test('a viewer sees the similar calls but cannot label them; no CSP violation', async () => {
    const { page } = await signedIn(browser, hub.url, viewer, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
    const list = await open(page);
    assert.equal(await list.getByTestId('similar-row').count(), 4);
    assert.equal(await page.getByTestId('label-all').count(), 0);
    await page.context().close();
    assert.deepEqual(cspViolations, []);
  });
});
