/**
 * A phone or laptop as a satellite (issue 38, point 1), in Chromium with a fake microphone that
 * plays a WAV file and a granted position: a member opens /record, names the device, starts
 * recording; chunks arrive at the hub with the position; the broker connection is cut (through a
 * TCP proxy in front of the embedded broker's WebSocket listener: Playwright's offline mode leaves
 * open WebSockets alone) for a minute of recording, the page shows the chunks waiting in its
 * IndexedDB outbox, also across a reload of the page; back online, every chunk is stored exactly once and in order, the satellite
 * shows in the Fleet, live listening hears it, and a detection of one of its chunks appears on the page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import WebSocket from 'ws';
import { startHub, type Hub } from '../helpers/hub.ts';
import { cspViolations, launchChromium, signedIn, skip } from '../helpers/browser.ts';
import { factories, type TestTeam, type TestUser } from '../helpers/factories.ts';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/wait.ts';
import { SESSION_COOKIE } from '../../src/core/cookies.ts';
import { startTcpProxy, type TcpProxy } from '../../bench/tcp-proxy.ts';
import { makeWav } from '../../src/protocol/wav.ts';
import { renderChunk, SPECIES_LABELS } from '../../src/satellite/soundscape.ts';

/** Chunks recorded while the broker is out of reach: a minute of audio. */
const OFFLINE_CHUNKS = 20;
const CUCKOO = SPECIES_LABELS[0];
const POSITION = { latitude: 52.52, longitude: 13.405 };

describe('a browser records as a satellite and survives going offline', { skip, timeout: 300_000 }, () => {
  let hub: Hub;
  let proxy: TcpProxy;
  let browser: Browser;
  let owner: TestUser;
  let team: TestTeam;
  let dir: string;

  before(async () => {
    const wsPort = await freePort();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: wsPort });
    hub = await startHub({ env: { MQTT_WS_PORT: String(wsPort), MQTT_WS_PUBLIC_URL: `ws://127.0.0.1:${proxy.port}/mqtt` } });
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    // The fake microphone loops this file: one 3-second chunk of the synthetic soundscape with a
    // cuckoo, which the hub's built-in model recognises by the energy in its band wherever the
    // page's chunks cut the loop.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-phone-'));
    const wav = path.join(dir, 'cuckoo.wav');
    fs.writeFileSync(wav, makeWav(renderChunk({ species: [CUCKOO], seed: 40 })));
    browser = await launchChromium([
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      // The audio file flag (--use-file-for-fake-device-in-media-stream is the video one: with it the microphone beeps).
      `--use-file-for-fake-audio-capture=${wav}`,
      '--autoplay-policy=no-user-gesture-required',
    ]);
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await hub?.close();
    await proxy?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const chunksOf = (satelliteId: string) =>
    hub.sql.query<{ id: string; recorded_at: Date; latitude: number | null; longitude: number | null }>(
      'SELECT id, recorded_at, latitude, longitude FROM chunks WHERE satellite_id = $1 ORDER BY recorded_at',
      [satelliteId],
    );

  test('record, go offline for a minute, come back: every chunk stored once, a detection shown', async () => {
    const { ctx, page } = await signedIn(browser, hub.url, owner, {
      permissions: ['geolocation', 'microphone'],
      geolocation: POSITION,
      viewport: { width: 390, height: 844 },
    });
    try {
      await page.waitForURL('**/detections');
      await page.goto('/fleet');
      await page.getByTestId('fleet-record-here').click();
      await page.waitForURL('**/record');
      await page.getByLabel('Name of this device').fill('Garden phone');
      await page.getByRole('button', { name: 'Make this device a satellite' }).click();
      const connection = page.getByTestId('record-connection');
      await waitFor('the page connected to the broker', async () => (await connection.getAttribute('data-connected')) === 'yes');
      const sat = await hub.sql.one<{ id: string; device_id: string }>('SELECT id, device_id FROM satellites WHERE tenant_id = $1', [
        team.id,
      ]);
      assert.match(sat.device_id, /^browser-/);

      await page.getByRole('button', { name: 'Start recording' }).click();
      await waitFor('two chunks stored', async () => (await chunksOf(sat.id)).length >= 2, { timeoutMs: 30_000 });
      const first = (await chunksOf(sat.id))[0];
      assert.equal(first.latitude, POSITION.latitude);
      assert.equal(first.longitude, POSITION.longitude);
      const heartbeat = await waitFor('a heartbeat of the mobile stream', () =>
        hub.sql.maybeOne<{ stream: string; state: string }>(`SELECT stream, state FROM satellites WHERE id = $1 AND state = 'recording'`, [
          sat.id,
        ]),
      );
      assert.equal(heartbeat.stream, 'mobile');

      // Offline: the broker is out of reach; recording goes on into the outbox.
      proxy.cut();
      await waitFor('the page noticed the lost connection', async () => (await connection.getAttribute('data-connected')) === 'no', {
        timeoutMs: 60_000,
      });
      const storedBefore = (await chunksOf(sat.id)).length;
      const queue = page.getByTestId('record-queue');
      const recordedCount = async () => Number(await page.getByTestId('record-recorded').textContent());
      const half = OFFLINE_CHUNKS / 2;
      await waitFor(`${half} chunks waiting in the outbox`, async () => Number(await queue.textContent()) >= half, {
        timeoutMs: (half + 10) * 3000,
      });

      // The outbox survives a reload: the page comes back as the same satellite with the chunks still waiting.
      await page.getByRole('button', { name: 'Stop recording' }).click();
      const recordedFirst = await recordedCount();
      const waiting = Number(await queue.textContent());
      await page.reload();
      await page.getByRole('button', { name: 'Start recording' }).waitFor();
      await waitFor('the reloaded page shows the waiting chunks', async () => Number(await queue.textContent()) === waiting);
      assert.equal((await connection.getAttribute('data-connected')) ?? 'no', 'no');
      await page.getByRole('button', { name: 'Start recording' }).click();
      await waitFor(`${OFFLINE_CHUNKS} chunks waiting in the outbox`, async () => Number(await queue.textContent()) >= waiting + half, {
        timeoutMs: (half + 10) * 3000,
      });
      assert.equal((await chunksOf(sat.id)).length, storedBefore, 'nothing reached the hub while offline');

      // Back online: the outbox drains oldest first.
      proxy.restore();
      await waitFor('the page reconnected', async () => (await connection.getAttribute('data-connected')) === 'yes', { timeoutMs: 30_000 });
      // Live listening, as the dashboard's player asks for it: the page's chunks reach the listener.
      const cookie = (await ctx.cookies()).find((c) => c.name === SESSION_COOKIE)!;
      const live = new WebSocket(
        `${hub.url.replace(/^http/, 'ws')}/ws/events?${new URLSearchParams({ tenantId: team.id, listenSatelliteId: sat.id })}`,
        { headers: { cookie: `${cookie.name}=${cookie.value}` } },
      );
      try {
        const frame = await new Promise<{ satelliteId: string; audio: string }>((resolve, reject) => {
          live.on('message', (data) => {
            const f = JSON.parse(data.toString()) as { type: string; satelliteId: string; audio: string };
            if (f.type === 'live-audio') resolve(f);
          });
          live.on('error', reject);
          setTimeout(() => reject(new Error('no live audio within 30 s')), 30_000).unref();
        });
        assert.equal(frame.satelliteId, sat.id);
        const wav = Buffer.from(frame.audio, 'base64');
        assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
        assert.equal(wav.readUInt32LE(24), 48_000);
      } finally {
        live.close();
      }

      await page.getByRole('button', { name: 'Stop recording' }).click();
      const recorded = recordedFirst + (await recordedCount());
      await waitFor('the outbox is empty', async () => (await queue.textContent()) === '0', { timeoutMs: 120_000 });

      const rows = await chunksOf(sat.id);
      assert.equal(rows.length, recorded, 'every chunk the page recorded is stored');
      assert.equal(new Set(rows.map((r) => r.id)).size, rows.length, 'no chunk stored twice');
      assert.equal(
        await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM satellites WHERE tenant_id = $1', [team.id]).then((r) => r.n),
        1,
      );
      // In order, back to back: each chunk starts one chunk (3 s) after the one before, on the
      // audio's own time line; the one longer step is the pause of the reload (a lost chunk
      // would be another).
      const steps = rows.slice(1).map((r, i) => new Date(r.recorded_at).getTime() - new Date(rows[i].recorded_at).getTime());
      assert.ok(
        steps.every((step) => step >= 2990),
        `no chunk overlaps the one before: ${steps.join(', ')}`,
      );
      assert.ok(steps.filter((step) => step > 4500).length <= 1, `no chunk missing: ${steps.join(', ')}`);
      assert.ok(recorded >= storedBefore + OFFLINE_CHUNKS);

      // The hub's model hears the cuckoo in its chunks; the `detection` message reaches the page.
      await page.getByTestId('record-detections').getByText('Common Cuckoo').first().waitFor({ timeout: 60_000 });

      // It is in the Fleet like any satellite.
      await page.goto('/fleet');
      await page.getByTestId('satellite-row').filter({ hasText: 'Garden phone' }).waitFor();
      assert.deepEqual(cspViolations, []);
    } finally {
      await ctx.close();
    }
  });
});
