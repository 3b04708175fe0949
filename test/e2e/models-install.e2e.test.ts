/**
 * Installing a model from the dashboard (issue 31), end to end in headless Chromium against a real
 * hub: a hub admin opens "Install a model" from the admin page, reads the known families (licence,
 * "checksum: give the publisher's"), takes a BirdNET v2.4 variant's details, points the URLs at a
 * local server serving the built-in ONNX file, installs it with its checksum and watches it reach
 * "done"; the model is listed, and a detection it made credits BirdNET on its page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeDetection, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { BUILTIN_LABELS_PATH, BUILTIN_MODEL_PATH } from '../../src/infra/classifier/onnx.ts';

const root = path.resolve(import.meta.dirname, '../..');
const MODEL = fs.readFileSync(BUILTIN_MODEL_PATH);
const LABELS = fs.readFileSync(BUILTIN_LABELS_PATH);
const SHA = crypto.createHash('sha256').update(MODEL).digest('hex');

describe('install a model (e2e)', { skip, timeout: 180_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let files: http.Server;
  let filesUrl: string;
  let api: ReturnType<typeof client>;
  let hubAdmin: TestUser;
  let team: TestTeam;

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    files = http.createServer((req, res) => {
      if (req.url === '/birdnet.onnx') return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(MODEL);
      if (req.url === '/labels.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end(LABELS);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true, name: 'Hanna Hub' });
    team = await f.team(hubAdmin);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    files?.closeAllConnections();
    await new Promise((r) => files?.close(r));
    await hub?.close();
  });

  test('the known families are listed, an install from a URL reaches done, and the model and its credit appear', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, hubAdmin, { viewport: { width: 1280, height: 900 } });
    await page.getByTestId('nav-admin').click();
    await page.getByTestId('install-model-link').click();
    await page.getByRole('heading', { name: 'Install a model' }).waitFor();

    const known = page.getByRole('table', { name: 'Known model families' });
    const fp32 = known.getByTestId('known-birdnet-v2.4-fp32');
    await fp32.getByRole('link', { name: 'CC BY-NC-SA 4.0' }).waitFor();
    await fp32.getByText('non-commercial use only').waitFor();
    await fp32.getByText("checksum: give the publisher's").waitFor();
    await known.getByTestId('known-perch-v2-savedmodel').getByRole('link', { name: 'Apache 2.0' }).waitFor();
    await known.getByTestId('known-perch-v2-savedmodel').getByText('5s-32k').waitFor();
    await known
      .getByTestId('known-birdnet-v3.0-preview3.1-fp16')
      .getByRole('link', { name: 'CC BY-SA 4.0 and the BirdNET+ terms of use' })
      .waitFor();

    // "Use this file" fills the form from the catalog; the test then serves the file itself.
    await fp32.getByRole('button', { name: 'Use this file' }).click();
    const form = page.getByRole('form', { name: 'Install from a URL' });
    const url = form.getByLabel('Model file URL (.onnx)');
    assert.equal(await url.inputValue(), 'https://huggingface.co/tphakala/BirdNET-v2.4/resolve/main/BirdNET_v2.4_fp32.onnx');
    assert.equal(await form.getByLabel('Family').inputValue(), 'birdnet-v2.4');
    await url.fill(`${filesUrl}/birdnet.onnx`);
    await form.getByLabel('Labels file URL').fill(`${filesUrl}/labels.txt`);
    await form.getByLabel('SHA-256 of the model file').fill(SHA);
    await form.getByLabel('Name').fill('Browser install');
    await form.getByRole('button', { name: 'Install' }).click();

    const progress = form.getByTestId('install-progress');
    await progress.and(page.locator('[data-state="done"]')).waitFor();
    await progress.getByText('Browser install is installed and listed below.').waitFor();
    const row = page.getByRole('table', { name: 'Installed models' }).getByRole('row', { name: /Browser install/ });
    await row.getByText(/^Powered by BirdNET/).waitFor();
    await row.getByText(`${SHA.slice(0, 12)}…`).waitFor();

    const model = (await api.get('/admin/models', hubAdmin)).body.models.find((m: any) => m.name === 'Browser install');
    assert.equal(model.knownFamily, 'birdnet-v2.4');
    const detection = await makeDetection(hub, { team, modelId: model.id });
    await page.goto(`/detections/${detection}`);
    await page.getByTestId('model-attribution').getByText('Powered by BirdNET (birdnet.cornell.edu)').waitFor();
    await ctx.close();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspViolations, [], 'CSP violations');
  });
});
