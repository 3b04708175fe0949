/**
 * GET /audio/:chunkId/spectrogram.png (issue 5): a PNG of the whole chunk, time left to right,
 * 0 Hz at the bottom to x-spectrogram-max-hz at the top; width, height and maxHz bounded (400
 * outside); Viewer+ of the chunk's team.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PNG } from 'pngjs';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { newId } from '../src/core/crypto.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { renderSpectrogram } from '../src/modules/audio/spectrogram.ts';

const RATE = 48_000;

/** A 3-second chunk: a sine at `hz` over faint noise (seeded, so the test is repeatable). */
function toneWav(hz: number, amplitude = 0.5): Buffer {
  const s = new Int16Array(3 * RATE);
  let seed = 7;
  for (let i = 0; i < s.length; i++) {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    const noise = (seed / 0x7fffffff - 0.5) * 0.002;
    s[i] = Math.round(32767 * (amplitude * Math.sin((2 * Math.PI * hz * i) / RATE) + noise));
  }
  return makeWav(s);
}

/** Mean brightness (sum of R, G, B) of each pixel row. */
function rowBrightness(png: Buffer): { width: number; height: number; rows: number[] } {
  const img = PNG.sync.read(png);
  const rows: number[] = [];
  for (let y = 0; y < img.height; y++) {
    let sum = 0;
    for (let x = 0; x < img.width; x++) {
      const o = (y * img.width + x) * 4;
      sum += img.data[o] + img.data[o + 1] + img.data[o + 2];
    }
    rows.push(sum / img.width);
  }
  return { width: img.width, height: img.height, rows };
}

const brightestRow = (rows: number[]) => rows.indexOf(Math.max(...rows));

describe('spectrogram', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let viewer: TestUser;
  let otherOwner: TestUser;
  let team: TestTeam;
  let toneChunk: string;

  /** A stored chunk (object and row) of a new satellite of the team. */
  const storedChunk = async (wav: Buffer) => (await makeChunk(hub, { team, audio: wav })).id;

  const png = async (path: string, as: TestUser) => {
    const res = await fetch(`${hub.url}/api${path}`, { headers: { authorization: `Bearer ${as.token}` } });
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  };

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    const owner = await f.user();
    team = await f.team(owner);
    viewer = await f.member(team, 'viewer');
    otherOwner = await f.user();
    await f.team(otherOwner);
    toneChunk = await storedChunk(toneWav(3000));
  });
  after(() => hub.close());

  test('a PNG of 600 x 256 by default, with the frequency range and duration in headers', async () => {
    const { res, body } = await png(`/audio/${toneChunk}/spectrogram.png`, viewer);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.ok(body.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'PNG signature');
    assert.equal(body.toString('latin1', 12, 16), 'IHDR');
    assert.equal(body.readUInt32BE(16), 600);
    assert.equal(body.readUInt32BE(20), 256);
    assert.equal(res.headers.get('x-spectrogram-min-hz'), '0');
    assert.equal(res.headers.get('x-spectrogram-max-hz'), '12000');
    assert.equal(res.headers.get('x-spectrogram-duration-ms'), '3000');
    assert.equal(res.headers.get('x-spectrogram-sample-rate'), '48000');
  });

  test('a tone shows as the brightest row at its frequency', async () => {
    for (const [hz, query, maxHz, height] of [
      [3000, '', 12_000, 256],
      [3000, '?height=100&width=200', 12_000, 100],
      [9000, '?maxHz=24000&height=480', 24_000, 480],
    ] as const) {
      const chunk = hz === 3000 ? toneChunk : await storedChunk(toneWav(hz));
      const { res, body } = await png(`/audio/${chunk}/spectrogram.png${query}`, viewer);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-spectrogram-max-hz'), String(maxHz));
      const img = rowBrightness(body);
      assert.equal(img.height, height);
      // Row 0 is the top (maxHz); the tone sits at (1 - hz/maxHz) of the height.
      const want = (1 - hz / maxHz) * height;
      const got = brightestRow(img.rows);
      assert.ok(
        Math.abs(got + 0.5 - want) <= 1.5,
        `tone of ${hz} Hz at row ${got}, expected about ${want.toFixed(1)} (${query || 'defaults'})`,
      );
      const median = [...img.rows].sort((a, b) => a - b)[Math.floor(height / 2)];
      assert.ok(img.rows[got] > 4 * median, `the tone row stands out: ${img.rows[got]} vs median ${median}`);
    }
  });

  test('silence stays dark', () => {
    const { rows } = rowBrightness(renderSpectrogram(makeWav(3 * RATE), { width: 120, height: 64, maxHz: 12_000 }).png);
    assert.ok(Math.max(...rows) < 30, `silence is near black: ${Math.max(...rows)}`);
  });

  test('width, height and maxHz outside their bounds answer 400', async () => {
    for (const q of [
      'width=10',
      'width=5000',
      'height=8',
      'height=2000',
      'maxHz=100',
      'maxHz=30000',
      'width=abc',
      'width=1.5',
      'colour=red',
    ]) {
      assertError(await api.get(`/audio/${toneChunk}/spectrogram.png?${q}`, viewer), 400, 'VALIDATION_FAILED');
    }
  });

  test('another team, an unknown chunk and anonymous callers are refused', async () => {
    assertError(await api.get(`/audio/${toneChunk}/spectrogram.png`, otherOwner), 404, 'NOT_FOUND');
    assertError(await api.get(`/audio/${newId()}/spectrogram.png`, viewer), 404, 'NOT_FOUND');
    assertError(await api.get(`/audio/${toneChunk}/spectrogram.png`, null), 401, 'UNAUTHENTICATED');
  });
});
