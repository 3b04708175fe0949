/**
 * Publishing recordings on the Export page (issue 34 item 4), end to end in headless Chromium:
 * while the team does not publish, the option is disabled and says why; once an admin turns on
 * publish_audio, a Darwin Core download asks for it and its multimedia line names a public link
 * that plays without credentials; the admin's "Published recordings" list shows it, Revoke ends
 * it (404) and Revoke all ends the rest. A member sees the option but not the list.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import yauzl from 'yauzl';
import { startHub, type Hub } from '../helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { makeWav } from '../../src/protocol/wav.ts';

const root = path.resolve(import.meta.dirname, '../..');

function entry(buf: Buffer, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName !== name) return zip.readEntry();
        zip.openReadStream(e, (se, stream) => {
          if (se || !stream) return reject(se);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        });
      });
      zip.on('end', () => reject(new Error(`${name} not in the zip`)));
      zip.readEntry();
    });
  });
}

describe('published recordings on the Export page (e2e)', { skip, timeout: 240_000 }, () => {
  let hub: Hub;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let member: TestUser;
  let team: TestTeam;
  let page: Page;
  let memberPage: Page;
  const wavs: Buffer[] = [];
  /** A plain GET of a file's link from outside: no cookie, no redirects followed. */
  const fetchLink = (link: string) => fetch(link.replace('http://chorus.test', hub.url), { redirect: 'manual' });

  before(async () => {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, stdio: 'inherit' });
    assert.equal(build.status, 0, 'the dashboard builds');
    hub = await startHub();
    const f = factories(hub);
    api = client(hub.url);
    owner = await f.user({ name: 'Olga Owner' });
    team = await f.team(owner, 'Reed Bed Club');
    member = await f.member(team, 'member', { name: 'Mia Member' });
    const sat = await makeSatellite(hub, team, owner, 'Reed Mic');
    const now = hub.clock.now().getTime();
    for (const [i, minutes] of [10, 20].entries()) {
      wavs.push(makeWav(new Int16Array(4800).map((_, k) => Math.round(Math.sin(k / (3 + i)) * 8000))));
      const chunk = await makeChunk(hub, { satellite: sat, audio: wavs[i], at: new Date(now - minutes * 60_000) });
      await makeDetection(hub, { chunk, at: chunk.at, verificationStatus: 'confirmed' });
    }
    browser = await launchChromium();
    ({ page } = await signedIn(browser, hub.url, owner, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' }));
    ({ page: memberPage } = await signedIn(browser, hub.url, member, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' }));
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
  });

  test('while the team does not publish, the option is disabled and says why; the list is empty', async () => {
    await page.goto(`${hub.url}/export?what=dwca`);
    await page.getByRole('heading', { name: 'Export', exact: true }).waitFor();
    const option = page.getByRole('checkbox', { name: 'Publish the recordings as public links' });
    await option.waitFor();
    assert.equal(await option.isDisabled(), true);
    await page.getByText('This team does not publish recordings', { exact: false }).waitFor();
    assert.doesNotMatch((await page.getByRole('link', { name: 'Download', exact: true }).getAttribute('href')) ?? '', /publishAudio/);
    await page.getByRole('heading', { name: 'Published recordings' }).waitFor();
    await page.getByText('No recordings are published.', { exact: false }).waitFor();
  });

  test('with publish_audio on, the Darwin Core download publishes links that play without credentials', async () => {
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { publish_audio: true }, owner)).status, 200);
    await page.reload();
    const option = page.getByRole('checkbox', { name: 'Publish the recordings as public links' });
    await page.getByText('fetch media without signing in', { exact: false }).waitFor();
    assert.equal(await option.isDisabled(), false);
    await option.check();
    const link = page.getByRole('link', { name: 'Download', exact: true });
    assert.match((await link.getAttribute('href')) ?? '', /^\/api\/export\/observation\?.*publishAudio=1/);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const multimedia = await entry(fs.readFileSync((await download.path())!), 'multimedia.txt');
    const [head, ...lines] = multimedia
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.equal(lines.length, 2);
    const identifiers = lines.map((l) => l[head.indexOf('identifier')]);
    for (const id of identifiers) {
      assert.match(id, /^http:\/\/chorus\.test\/api\/public\/audio\/[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}\.wav$/);
      const res = await fetchLink(id);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'audio/wav');
    }

    // The admin's list shows both; Revoke ends one at once.
    await page.reload();
    const rows = page.getByTestId('published-row');
    await page.getByTestId('published-total').filter({ hasText: '2 published recordings' }).waitFor();
    assert.equal(await rows.count(), 2);
    assert.match((await rows.first().textContent()) ?? '', /European Robin/);
    const first = (await rows.first().getByTestId('published-link').getAttribute('href'))!;
    assert.ok(identifiers.includes(first), 'the list links what the file names');
    await rows.first().getByRole('button', { name: 'Revoke' }).click();
    await page.getByTestId('published-total').filter({ hasText: '1 published recording' }).waitFor();
    assert.equal((await fetchLink(first)).status, 404);
    const second = identifiers.find((i) => i !== first)!;
    assert.equal((await fetchLink(second)).status, 200);

    // Revoke all asks once more, then ends the rest.
    await page.getByRole('button', { name: 'Revoke all' }).click();
    await page.getByText('Revoke 1 link?', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Revoke all' }).click();
    await page.getByText('No recordings are published.', { exact: false }).waitFor();
    assert.equal((await fetchLink(second)).status, 404);
    assert.deepEqual(cspViolations, [], 'no Content Security Policy violations');
  });

  test('a member sees the option but not the list of published recordings', async () => {
    await memberPage.goto(`${hub.url}/export?what=inaturalist`);
    await memberPage.getByRole('checkbox', { name: 'Publish the recordings as public links' }).waitFor();
    await memberPage.getByTestId('export-total').waitFor();
    assert.equal(await memberPage.getByRole('heading', { name: 'Published recordings' }).count(), 0);
  });
});
