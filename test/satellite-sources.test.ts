/**
 * The reference satellite's real audio sources (issue 23 "Real audio in"): files in any format
 * through ffmpeg (generated here by ffmpeg at 44.1 kHz stereo and 32 kHz), a sound card through
 * a fake `arecord` on the PATH (one that streams, one that dies and is restarted with back-off),
 * and a chunk of a real file reaching a hub under test and stored.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHUNK_SAMPLES, SAMPLE_RATE, decodeWav, makeWav } from '../src/protocol/wav.ts';
import { openSource, recordingTimeOfName, type ChunkSource, type SourceChunk } from '../src/satellite/sources.ts';
import { referenceSatellite } from './helpers/reference-satellite.ts';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { waitFor } from './helpers/wait.ts';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-sources-'));
  dirs.push(d);
  return d;
}
const toStop: Array<{ stop(): Promise<unknown> }> = [];
after(async () => {
  for (const s of toStop) await s.stop().catch(() => {});
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Every chunk of a finite source, polling while it decodes; rejects with the source's own error. */
async function drain(src: ChunkSource): Promise<SourceChunk[]> {
  const out: SourceChunk[] = [];
  const ended = await waitFor(
    'the source to end',
    () => {
      try {
        for (let c = src.next(); c !== 'waiting'; c = src.next()) {
          if (c === null) return { failed: null };
          out.push(c);
        }
        return null;
      } catch (err) {
        return { failed: err };
      }
    },
    { intervalMs: 10 },
  );
  if (ended.failed) throw ended.failed;
  return out;
}

/** A tone's frequency from its zero crossings (the samples up to `length`). */
function frequency(samples: Int16Array, length = samples.length): number {
  let crossings = 0;
  for (let i = 1; i < length; i++) if (samples[i - 1] < 0 !== samples[i] < 0) crossings++;
  return crossings / 2 / (length / SAMPLE_RATE);
}

/** Samples before the trailing silence (the padding of the last chunk). */
function audibleLength(samples: Int16Array): number {
  let n = samples.length;
  while (n > 0 && Math.abs(samples[n - 1]) < 8) n--;
  return n;
}

/** ffmpeg generates a sine file: `seconds` long at `rate` Hz with `channels`. */
function sineFile(dir: string, name: string, o: { hz: number; rate: number; channels: number; seconds: number }): string {
  const file = path.join(dir, name);
  execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=${o.hz}:sample_rate=${o.rate}:duration=${o.seconds}`,
    '-ac',
    String(o.channels),
    file,
  ]);
  return file;
}

test("a field recorder's file name gives the recording's start (UTC); a name without a real time gives none", () => {
  assert.equal(recordingTimeOfName('20240501_053000.WAV')?.toISOString(), '2024-05-01T05:30:00.000Z');
  assert.equal(recordingTimeOfName('SITE1_20240501_053000.flac')?.toISOString(), '2024-05-01T05:30:00.000Z');
  assert.equal(recordingTimeOfName('20240230_053000.WAV'), null, 'no 30 February');
  assert.equal(recordingTimeOfName('20240501_256000.WAV'), null, 'no hour 25');
  assert.equal(recordingTimeOfName('dawn.wav'), null);
  assert.equal(recordingTimeOfName('120240501_053000.wav'), null, 'nine digits are not a date');
});

describe('files through ffmpeg', () => {
  const cases = [
    { name: 'cd.wav', rate: 44_100, channels: 2, hz: 1000, tolerance: 0 },
    { name: 'cd.flac', rate: 44_100, channels: 2, hz: 1500, tolerance: 0 },
    // MP3 adds the encoder's delay and padding (a few ms) around the audio.
    { name: 'cd.mp3', rate: 44_100, channels: 2, hz: 2000, tolerance: 0.06 },
    { name: 'radio.wav', rate: 32_000, channels: 1, hz: 3000, tolerance: 0 },
  ];
  for (const c of cases) {
    test(`${c.name} at ${c.rate / 1000} kHz ${c.channels === 2 ? 'stereo' : 'mono'}: 48 kHz mono chunks of the right length, the tone kept`, async () => {
      const dir = tmp();
      const seconds = 7.5;
      const file = sineFile(dir, c.name, { hz: c.hz, rate: c.rate, channels: c.channels, seconds });
      const src = openSource(file);
      assert.match(src.description, /through ffmpeg/);
      const chunks = await drain(src);
      assert.equal(chunks.length, 3, '7.5 s make three 3-second chunks, the last padded');
      for (const ch of chunks) assert.equal(ch.samples.length, CHUNK_SAMPLES);
      assert.deepEqual(
        chunks.map((ch) => ch.origin),
        [`${c.name} @ 0 s`, `${c.name} @ 3 s`, `${c.name} @ 6 s`],
      );
      const audible = 2 * CHUNK_SAMPLES + audibleLength(chunks[2].samples);
      const expected = seconds * SAMPLE_RATE;
      assert.ok(
        Math.abs(audible - expected) <= expected * c.tolerance + 50,
        `${audible} samples of audio, ${expected} expected (48 kHz: resampled, not played at the file's rate)`,
      );
      for (const ch of chunks.slice(0, 2)) {
        const f = frequency(ch.samples);
        assert.ok(Math.abs(f - c.hz) < c.hz * 0.005, `tone at ${f.toFixed(1)} Hz, ${c.hz} Hz expected`);
      }
      assert.ok(Math.abs(frequency(chunks[2].samples, CHUNK_SAMPLES / 2) - c.hz) < c.hz * 0.01);
      assert.equal(src.health?.().state, 'ended');
    });
  }

  test('a 48 kHz mono WAV skips ffmpeg; a folder mixes both, in name order; a broken file fails with ffmpeg’s words', async () => {
    const dir = tmp();
    const direct = path.join(dir, 'a.wav');
    fs.writeFileSync(direct, makeWav(new Int16Array(CHUNK_SAMPLES).fill(7)));
    assert.doesNotMatch(openSource(direct).description, /ffmpeg/);
    sineFile(dir, 'b.flac', { hz: 1000, rate: 44_100, channels: 2, seconds: 3 });
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not audio');
    const folder = openSource(dir);
    assert.match(folder.description, /2 audio files.*through ffmpeg/);
    const chunks = await drain(folder);
    assert.deepEqual(
      chunks.map((c) => c.origin),
      ['a.wav @ 0 s', 'b.flac @ 0 s'],
    );
    assert.equal(chunks[0].samples[100], 7, 'the 48 kHz WAV decoded by ffmpeg keeps its samples');

    const broken = path.join(dir, 'broken.mp3');
    fs.writeFileSync(broken, 'this is not an mp3 at all');
    const bad = openSource(broken);
    await assert.rejects(drain(bad), /broken\.mp3: ffmpeg exited with code \d+: .+/);
    assert.equal(bad.health?.().state, 'failed');
    assert.throws(() => openSource(path.join(dir, 'missing.flac')), /no such file or folder/);
    assert.throws(() => openSource('alsa:'), /needs a device/);
  });
});

/**
 * A fake `arecord` on the PATH. It writes its arguments and start time to `log`, then, per
 * start (counted in `count`): for the first `failures` starts, half a chunk of audio and an
 * ALSA error on stderr with exit code 1; after that, 3-second chunks of a 440 Hz tone (faster
 * than real time) until killed.
 */
function fakeArecord(failures: number): { bin: string; log: string; env: NodeJS.ProcessEnv } {
  const bin = tmp();
  const log = path.join(bin, 'starts.log');
  const count = path.join(bin, 'count');
  const script = `#!/usr/bin/env node
const fs = require('node:fs');
let n = 0;
try { n = Number(fs.readFileSync(${JSON.stringify(count)}, 'utf8')); } catch {}
fs.writeFileSync(${JSON.stringify(count)}, String(n + 1));
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ at: Date.now(), args: process.argv.slice(2) }) + '\\n');
const chunk = Buffer.alloc(${CHUNK_SAMPLES * 2});
for (let i = 0; i < ${CHUNK_SAMPLES}; i++) chunk.writeInt16LE(Math.round(8000 * Math.sin(2 * Math.PI * 440 * i / 48000)), i * 2);
if (n < ${failures}) {
  process.stdout.write(chunk.subarray(0, chunk.length / 2), () => {
    process.stderr.write('arecord: main:831: audio open error: Device or resource busy\\n');
    process.exit(1);
  });
} else {
  const send = () => process.stdout.write(chunk);
  send();
  setInterval(send, 150);
}
`;
  fs.writeFileSync(path.join(bin, 'arecord'), script, { mode: 0o755 });
  return { bin, log, env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } };
}

function starts(log: string): Array<{ at: number; args: string[] }> {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Runs `fn` with PATH led by the fake's folder (the source spawns `arecord` by name). */
async function withPath<T>(env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> {
  const before = process.env.PATH;
  process.env.PATH = env.PATH;
  try {
    return await fn();
  } finally {
    process.env.PATH = before;
  }
}

describe('alsa:DEVICE through arecord', () => {
  test('arecord streams raw PCM: 48 kHz mono chunks, the device and format asked for', async () => {
    const fake = fakeArecord(0);
    await withPath(fake.env, async () => {
      const src = openSource('alsa:default');
      toStop.push({ stop: () => src.stop!() });
      assert.equal(src.next(), 'waiting', 'a live source has nothing before the first chunk');
      const got: SourceChunk[] = [];
      await waitFor('three chunks from arecord', () => {
        const c = src.next();
        if (c && c !== 'waiting') got.push(c);
        return got.length >= 3;
      });
      await src.stop!();
      assert.deepEqual(starts(fake.log)[0].args, ['-q', '-D', 'default', '-t', 'raw', '-f', 'S16_LE', '-c', '1', '-r', '48000']);
      for (const c of got) {
        assert.equal(c.samples.length, CHUNK_SAMPLES);
        assert.ok(Math.abs(frequency(c.samples) - 440) < 2);
      }
      assert.match(got[0].origin, /^alsa:default @ 0 s$/);
      assert.equal(src.health!().state, 'running');
      assert.equal(src.health!().failures, 0);
    });
  });

  test('an arecord that dies is restarted with back-off, each failure reported, and recovery too', async () => {
    const fake = fakeArecord(3);
    await withPath(fake.env, async () => {
      const src = openSource('alsa:hw:1,0', { restartMs: 100, maxRestartMs: 1000 });
      toStop.push({ stop: () => src.stop!() });
      const failures: string[] = [];
      const recovered: string[] = [];
      src.start!({ failed: (m) => failures.push(m), recovered: (m) => recovered.push(m) });
      const got: SourceChunk[] = [];
      await waitFor('recovery after three failures', () => {
        const c = src.next();
        if (c && c !== 'waiting') got.push(c);
        return recovered.length === 1 && got.length >= 4;
      });
      await src.stop!();
      const s = starts(fake.log);
      assert.equal(s.length, 4, 'three failed starts and the one that works');
      assert.ok(s.every((x) => x.args.includes('hw:1,0')));
      const gaps = s.slice(1).map((x, i) => x.at - s[i].at);
      // Lower bounds only: a busy machine makes gaps longer, never shorter.
      [100, 200, 400].forEach((min, i) => assert.ok(gaps[i] >= min - 10, `gap ${i + 1}: ${gaps[i]} ms, back-off ${min} ms`));
      assert.equal(failures.length, 3);
      assert.match(
        failures[0],
        /alsa:hw:1,0: arecord exited with code 1: arecord: main:831: audio open error: Device or resource busy; restarting in 0\.1 s/,
      );
      assert.match(failures[2], /restarting in 0\.4 s/);
      assert.match(recovered[0], /audio flows again/);
      const h = src.health!();
      assert.equal(h.restarts, 3);
      assert.equal(h.failures, 3);
      assert.match(h.lastError!, /Device or resource busy/);
      // Each dying process left half a chunk: padded, as a file's last piece, so nothing is lost silently.
      assert.equal(got.filter((c) => audibleLength(c.samples) === CHUNK_SAMPLES / 2).length, 3);
    });
  });

  test('a missing arecord is a failure that says how to install it', async () => {
    const empty = tmp();
    await withPath({ PATH: empty }, async () => {
      const src = openSource('alsa:default', { restartMs: 60_000 });
      const failures: string[] = [];
      src.start!({ failed: (m) => failures.push(m), recovered: () => {} });
      await waitFor('the failure', () => failures.length === 1);
      await src.stop!();
      assert.match(failures[0], /arecord not found: install it \(Debian: apt-get install alsa-utils\)/);
      assert.equal(src.health!().state, 'restarting');
    });
  });
});

describe('real audio reaches a hub', () => {
  let hub: Hub;
  let owner: TestUser;
  let team: TestTeam;
  before(async () => {
    hub = await startHub();
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
  });
  after(async () => {
    await hub?.close();
  });

  async function satellite(source: ChunkSource, o: { chunkIntervalMs: number }) {
    const sat = await referenceSatellite({
      hubUrl: hub.url,
      token: owner.token,
      tenantId: team.id,
      dir: tmp(),
      name: 'Sources',
      source,
      ...o,
    });
    toStop.push(sat);
    await sat.start();
    return sat;
  }

  test('a FLAC file at 44.1 kHz stereo: its chunks are stored by the hub as 48 kHz mono with the tone kept', async () => {
    const file = sineFile(tmp(), 'dawn.flac', { hz: 2000, rate: 44_100, channels: 2, seconds: 6 });
    const sat = await satellite(openSource(file), { chunkIntervalMs: 20 });
    await waitFor('both chunks acked', () => sat.sourceEnded && sat.outbox.pending().length === 0);
    await sat.stop();
    assert.equal(sat.ackedCount, 2);
    const rows = await hub.sql.query<{ id: string; storage_key: string }>(
      'SELECT id, storage_key FROM chunks WHERE satellite_id = $1 ORDER BY recorded_at',
      [sat.id],
    );
    assert.equal(rows.length, 2);
    const stored = decodeWav((await hub.infra.storage.get(rows[0].storage_key))!, { expect48kMono: true });
    assert.equal(stored.samples.length, CHUNK_SAMPLES);
    assert.ok(Math.abs(frequency(stored.samples) - 2000) < 10);
  });

  test('a dying arecord: the hub sees state error at once, then recording once audio flows again', async () => {
    const fake = fakeArecord(2);
    await withPath(fake.env, async () => {
      // The first back-off is long enough for the test to read the error state on the hub.
      const src = openSource('alsa:default', { restartMs: 1500, maxRestartMs: 1500 });
      const stateOnHub = async () =>
        (await hub.sql.query<{ state: string | null }>('SELECT state FROM satellites WHERE id = $1', [sat.id]))[0]?.state;
      const errors: string[] = [];
      const sat = await satellite(src, { chunkIntervalMs: 100 });
      sat.on('source-error', (m: string) => errors.push(m));
      await waitFor('state error on the hub', async () => (await stateOnHub()) === 'error');
      assert.equal(sat.state, 'error');
      assert.match(errors[0], /audio open error/);
      assert.ok(sat.journal.tail(50).some((l: string) => /source failed: alsa:default: arecord exited with code 1/.test(l)));
      const recovered = new Promise((resolve) => sat.once('source-recovered', resolve));
      await waitFor('the second failure', () => sat.sourceHealth?.failures === 2);
      // Its back-off runs 1.5 s: the padded piece the process left is recorded meanwhile.
      await waitFor('the second padded piece recorded', () => sat.recordedCount >= 2);
      assert.equal(sat.state, 'error', 'still error while the source restarts, though its padded pieces are recorded');
      await recovered;
      const acked = sat.ackedCount;
      await waitFor('chunks stored after recovery', () => sat.ackedCount >= acked + 2);
      assert.equal(sat.state, 'recording');
      await sat.heartbeat();
      await waitFor('state recording on the hub', async () => (await stateOnHub()) === 'recording');
      assert.equal(sat.sourceHealth?.restarts, 2);
      await sat.stop();
    });
  });
});
