/**
 * The range filter in the dashboard (issue 35 point 1), in headless Chromium against a real hub: a
 * hub admin uploads a range model from Admin → Classifier models with the kind "Range model" and
 * sees it listed as one; a member of the team sees the south satellite's blackbird flagged "Out of
 * range" on the Detections page, narrows the list to out-of-range detections with the filter, and
 * reads what is expected at the north satellite this week on its page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { audioBody, RawSatellite } from '../helpers/raw-satellite.ts';
import { waitFor } from '../helpers/wait.ts';
import { fixedLogitsModel, rangeModel } from '../helpers/onnx-models.ts';

const root = path.resolve(import.meta.dirname, '../..');
const LABELS = 'Turdus merula_Eurasian Blackbird\nParus major_Great Tit\n';

describe('range filter (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  const satellites: RawSatellite[] = [];

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true, name: 'Hanna Hub' });
    owner = await f.user({ name: 'Olga Owner' });
    team = await f.team(owner);
    browser = await launchChromium();
  });

  after(async () => {
    for (const s of satellites) await s.close();
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('upload a range model, see an out-of-range detection flagged and filtered, and what a satellite expects this week', async () => {
    // The hub admin uploads the range model from the dashboard.
    const admin = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 } });
    await admin.page.getByTestId('nav-admin').click();
    await admin.page.getByRole('heading', { name: 'Classifier models' }).waitFor();
    const form = admin.page.getByRole('form', { name: 'Upload a model' });
    await form.getByLabel('Name').fill('BirdNET range (test)');
    await form.getByLabel('Kind').selectOption('range');
    await form.getByLabel('ONNX file').setInputFiles({ name: 'range.onnx', mimeType: 'application/octet-stream', buffer: rangeModel() });
    await form.getByLabel('Labels file').setInputFiles({ name: 'labels.txt', mimeType: 'text/plain', buffer: Buffer.from(LABELS) });
    await form.getByRole('button', { name: 'Upload' }).click();
    await form.getByRole('status').waitFor();
    const row = admin.page.getByRole('table', { name: 'Classifier models' }).getByRole('row', { name: /BirdNET range \(test\)/ });
    await row.getByTestId('model-kind-range').waitFor();
    await row.getByText('latitude, longitude, week').waitFor();
    // No "Make default" for a range model.
    assert.equal(await row.getByRole('button', { name: 'Make default' }).count(), 0);
    await admin.ctx.close();
    const listed = (await api.get('/admin/models', hubAdmin)).body.models;
    assert.equal(listed.find((m: any) => m.name === 'BirdNET range (test)').kind, 'range');

    // The team's classifier hears both species; a satellite north of 50° and one south of it.
    const form2 = new FormData();
    form2.set('name', 'Both');
    form2.set('model', new Blob([new Uint8Array(fixedLogitsModel({ inputSamples: 144_000, logits: [4, 4] }))]), 'model.onnx');
    form2.set('labels', new Blob([LABELS]), 'labels.txt');
    const up = await fetch(`${hub.url}/api/admin/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hubAdmin.token}` },
      body: form2,
    });
    assert.equal(up.status, 201);
    const classifier = (await up.json()) as { id: string };
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { inference_model: classifier.id }, owner)).status, 200);
    const north = await RawSatellite.register(hub, owner, team, 'North garden', { latitude: 52.09, longitude: 5.12 });
    const south = await RawSatellite.register(hub, owner, team, 'Cape garden', { latitude: -33.9, longitude: 18.4 });
    satellites.push(north, south);
    let n = 0;
    for (const sat of [north, south]) {
      const body = audioBody(sat, {
        latitude: undefined,
        longitude: undefined,
        recordedAt: new Date(Date.now() - ++n * 3_600_000).toISOString(),
      });
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
    }
    await waitFor(
      'four detections',
      async () => (await hub.sql.query('SELECT id FROM detections WHERE tenant_id = $1', [team.id])).length === 4,
    );

    const { ctx, page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 } });
    // Signed in once the app's navigation shows; then the page is opened by its address.
    await page.getByTestId('nav-stats').waitFor();
    await page.goto(`${hub.url}/detections`);
    const list = page.getByRole('list', { name: 'Detections' });
    await list.getByTestId('detection').nth(3).waitFor();
    const flagged = list.getByTestId('detection').filter({ has: page.getByTestId('out-of-range') });
    assert.equal(await flagged.count(), 1);
    await flagged.getByText('Eurasian Blackbird').waitFor();
    await flagged.getByText('Cape garden').waitFor();
    assert.match((await flagged.getByTestId('out-of-range').getAttribute('title')) ?? '', /0\.001/);

    // The filter: out of range only.
    await page.getByText('Filters').click();
    await page.getByLabel('Range').selectOption('true');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/outOfRange=true/);
    await waitFor('one row', async () => (await list.getByTestId('detection').count()) === 1);
    await list.getByTestId('out-of-range').waitFor();

    // The north satellite's page: what is expected there this week.
    await page.goto(`${hub.url}/fleet/${north.id}`);
    const expected = page.getByTestId('expected-species');
    await expected.getByRole('heading', { name: 'Expected here this week' }).waitFor();
    await expected.getByText(/Week \d+ of 48/).waitFor();
    await expected.getByTestId('expected-list').getByText('Eurasian Blackbird').waitFor();
    assert.deepEqual(cspViolations, [], 'CSP violations');
    await ctx.close();
  });
});
