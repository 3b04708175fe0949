/**
 * The reference satellite's parts without a hub: WAV encoding, the synthetic soundscape, the
 * sources, the durable outbox (order, caps, restarts), the silence gate and config handling.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../src/core/clock.ts';
import type { SatelliteClock } from '../src/satellite/clock.ts';
import { applyGain, rms, toInt16 } from '../src/satellite/signal.ts';
import { SPECIES, SPECIES_LABELS, chunkPlan, renderChunk, soundscapeChunk } from '../src/satellite/soundscape.ts';
import { bandShare } from './helpers/spectrum.ts';
import { cutChunks, openSource, syntheticSource, wavFileSource, wavFolderSource } from '../src/satellite/sources.ts';
import { MB, Outbox, type OutboxCaps } from '../src/satellite/outbox.ts';
import { SilenceGate, loadFilterStats, saveFilterStats, emptyFilterStats } from '../src/satellite/gate.ts';
import { DEFAULT_CONFIG, Journal, isRecordingTime, mergeConfig } from '../src/satellite/client.ts';
import { logResponse } from '../src/satellite/journal.ts';
import { AUDIO_PACKET_MAX_BYTES, LOG_RESPONSE_MAX_BYTES } from '../src/protocol/limits.ts';
import { CHUNK_SAMPLES, CHUNK_WAV_BYTES, checkChunkWav, decodeWav, makeWav } from '../src/protocol/wav.ts';
import { satelliteConfig } from '../src/modules/settings/satellite-config.ts';

const tmpDirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-sat-unit-'));
  tmpDirs.push(d);
  return d;
}
after(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('wav', () => {
  test('encode → decode round trip; canonical 44-byte header; the hub accepts it', () => {
    const samples = new Int16Array(CHUNK_SAMPLES);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(Math.sin(i / 7) * 12_000) - (i % 3);
    samples[0] = -32768;
    samples[1] = 32767;
    const wav = makeWav(samples);
    assert.equal(wav.length, CHUNK_WAV_BYTES);
    assert.equal(wav.toString('ascii', 0, 4), 'RIFF');
    assert.equal(wav.readUInt32LE(4), wav.length - 8);
    assert.equal(wav.readUInt16LE(20), 1, 'PCM');
    assert.equal(wav.readUInt16LE(22), 1, 'mono');
    assert.equal(wav.readUInt32LE(24), 48_000);
    assert.equal(wav.readUInt16LE(34), 16);
    const back = decodeWav(wav, { expect48kMono: true });
    assert.deepEqual({ rate: back.sampleRate, ch: back.channels, bits: back.bitsPerSample }, { rate: 48_000, ch: 1, bits: 16 });
    assert.deepEqual(back.samples, samples);
    assert.equal(checkChunkWav(wav, 3000).ok, true, 'the ingester validates it as a 3-second chunk');
  });

  test('decode skips foreign chunks and refuses what the sources cannot use', () => {
    const plain = makeWav(new Int16Array([1, -2, 3]));
    const list = Buffer.alloc(8 + 5 + 1);
    list.write('LIST', 0, 'ascii');
    list.writeUInt32LE(5, 4);
    const withList = Buffer.concat([plain.subarray(0, 36), list, plain.subarray(36)]);
    withList.writeUInt32LE(withList.length - 8, 4);
    assert.deepEqual([...decodeWav(withList).samples], [1, -2, 3]);
    assert.throws(() => decodeWav(Buffer.from('not a wav at all')), /RIFF/);
    const at44k = makeWav(new Int16Array(10), { sampleRate: 44_100 });
    assert.equal(decodeWav(at44k).sampleRate, 44_100);
    assert.throws(() => decodeWav(at44k, { expect48kMono: true }), /44100 Hz; 48000 Hz needed/);
  });

  test('rms is in full-scale units; gain clips', () => {
    assert.equal(rms(new Int16Array(100)), 0);
    assert.ok(Math.abs(rms(toInt16(new Float64Array(1000).fill(0.5))) - 0.5) < 1e-4);
    const loud = applyGain(new Int16Array([20_000, -20_000, 100]), 20);
    assert.deepEqual([...loud], [32767, -32768, 1000]);
  });
});

describe('synthetic soundscape', () => {
  test('five European species in BirdNET label form, bands disjoint', () => {
    assert.equal(SPECIES.length, 5);
    for (const s of SPECIES) {
      assert.match(s.label, /^[A-Z][a-z]+ [a-z]+_[A-Z][A-Za-z ]+$/);
      assert.equal(s.label, `${s.scientificName}_${s.commonName}`);
    }
    assert.ok(SPECIES_LABELS.includes('Turdus merula_Eurasian Blackbird'));
    assert.ok(SPECIES_LABELS.includes('Parus major_Great Tit'));
    const bands = [...SPECIES].map((s) => s.bandHz).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < bands.length; i++) assert.ok(bands[i][0] - bands[i - 1][1] >= 400, `bands ${i - 1} and ${i} are apart`);
  });

  test('deterministic: chunk i of a seed is the same whatever came before; seeds differ', () => {
    const a = soundscapeChunk(42, 7);
    const src = syntheticSource({ seed: 42 });
    let seventh;
    for (let i = 0; i <= 7; i++) seventh = src.next();
    assert.deepEqual(seventh!.samples, a.samples);
    assert.deepEqual(seventh!.species, a.species);
    assert.deepEqual(soundscapeChunk(42, 7).samples, a.samples);
    assert.notDeepEqual(soundscapeChunk(43, 7).samples, a.samples);
    assert.notDeepEqual(soundscapeChunk(42, 8).samples, a.samples);
  });

  test('each species puts its energy in its own band and almost none in the others', () => {
    for (const s of SPECIES) {
      const samples = renderChunk({ species: [s.label], seed: 9 });
      assert.equal(samples.length, CHUNK_SAMPLES);
      const own = bandShare(samples, s.bandHz[0] - 50, s.bandHz[1] + 50);
      assert.ok(own > 0.95, `${s.label}: ${(own * 100).toFixed(1)} % in its band`);
      for (const other of SPECIES.filter((x) => x !== s)) {
        const leak = bandShare(samples, other.bandHz[0], other.bandHz[1]);
        assert.ok(leak < 0.01, `${s.label} leaks ${(leak * 100).toFixed(2)} % into ${other.label}`);
      }
      assert.ok(rms(samples) > 0.02, `${s.label} is well above the silence gate`);
    }
  });

  test('the mix: silent chunks under the default silence gate, every species appears, some chunks hold two', () => {
    const plans = Array.from({ length: 200 }, (_, i) => chunkPlan(1, i));
    const silent = plans.filter((p) => p.silent).length;
    assert.ok(silent >= 20 && silent <= 60, `${silent} silent of 200`);
    assert.ok(plans.some((p) => p.species.length === 2));
    for (const label of SPECIES_LABELS)
      assert.ok(
        plans.some((p) => p.species.includes(label)),
        label,
      );
    const firstSilent = plans.findIndex((p) => p.silent);
    const chunk = soundscapeChunk(1, firstSilent);
    assert.equal(chunk.silent, true);
    assert.ok(rms(chunk.samples) < DEFAULT_CONFIG.filterMinRms / 2, `silent rms ${rms(chunk.samples)}`);
    assert.ok(rms(chunk.samples) > 0, 'silence still has a little noise');
  });
});

describe('sources', () => {
  test('a WAV file is cut into 3-second chunks, the last padded with silence', () => {
    const dir = tmp();
    const samples = new Int16Array(CHUNK_SAMPLES * 2 + 1000).map((_, i) => (i % 100) - 50);
    const file = path.join(dir, 'a.wav');
    fs.writeFileSync(file, makeWav(samples));
    const src = wavFileSource(file);
    const got = [src.next(), src.next(), src.next(), src.next()];
    assert.equal(got[3], null);
    assert.deepEqual(
      got.slice(0, 3).map((c) => c!.samples.length),
      [CHUNK_SAMPLES, CHUNK_SAMPLES, CHUNK_SAMPLES],
    );
    assert.deepEqual(got[1]!.samples, samples.subarray(CHUNK_SAMPLES, 2 * CHUNK_SAMPLES));
    assert.deepEqual(got[2]!.samples.subarray(0, 1000), samples.subarray(2 * CHUNK_SAMPLES));
    assert.equal(got[2]!.samples[1000], 0);
    assert.equal(got[2]!.origin, 'a.wav @ 6 s');
    assert.equal(cutChunks(new Int16Array(0)).length, 0);
  });

  test('the direct WAV reader refuses 44.1 kHz (openSource sends such files through ffmpeg); a folder plays its files in name order', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'cd.wav'), makeWav(new Int16Array(100), { sampleRate: 44_100 }));
    assert.throws(() => wavFileSource(path.join(dir, 'cd.wav')), /44100 Hz; 48000 Hz needed/);
    const folder = path.join(dir, 'f');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'b.wav'), makeWav(new Int16Array(CHUNK_SAMPLES).fill(2)));
    fs.writeFileSync(path.join(folder, 'a.wav'), makeWav(new Int16Array(CHUNK_SAMPLES).fill(1)));
    fs.writeFileSync(path.join(folder, 'notes.txt'), 'ignored');
    const src = wavFolderSource(folder);
    assert.deepEqual([src.next()!.samples[0], src.next()!.samples[0], src.next()], [1, 2, null]);
    assert.match(openSource(folder).description, /2 audio files/);
    assert.match(openSource('synthetic').description, /synthetic/);
    assert.throws(() => openSource(path.join(dir, 'missing.wav')), /no such file or folder/);
  });
});

describe('outbox', () => {
  const wav = (fill: number, samples = 1000) => makeWav(new Int16Array(samples).fill(fill));
  const caps = (o: Partial<OutboxCaps>): OutboxCaps => ({ softBytes: 100 * MB, hardBytes: 200 * MB, maxAgeMs: 3600_000, ...o });
  const t0 = new Date('2030-05-01T05:00:00Z');

  async function fill(box: Outbox, n: number, clock?: ManualClock) {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { row } = await box.add({ recordedAt: new Date(t0.getTime() + i * 3000), wav: wav(i), durationMs: 3000, sampleRate: 48_000 });
      ids.push(row.chunkId);
      clock?.advance(3000);
    }
    return ids;
  }

  test('rows drain oldest-first; ack marks them; stats add up', async () => {
    // Read 60 s after the first chunk was recorded.
    const box = await Outbox.open(tmp(), { caps: caps({}), now: () => new Date(t0.getTime() + 60_000) });
    const ids = await fill(box, 4);
    assert.deepEqual(
      box.pending().map((r) => r.chunkId),
      ids,
    );
    assert.equal(await box.markAcked(ids[1]), true);
    assert.equal(await box.markAcked(ids[1]), false, 'a second ack changes nothing');
    assert.equal(await box.markError(ids[2], 'bad wav'), true);
    assert.deepEqual(
      box.pending().map((r) => r.chunkId),
      [ids[0], ids[3]],
    );
    assert.equal(box.get(ids[2])!.error, 'bad wav');
    const size = wav(0).length;
    const stats = await box.stats();
    assert.deepEqual(stats, {
      totalBytes: 4 * size,
      ackedBytes: size,
      unackedBytes: 3 * size,
      rowCount: 4,
      unackedCount: 3,
      diskBytes: 4 * size,
      refusedCount: 1,
      oldestUnsentAgeSeconds: 60,
    });
    assert.deepEqual(Buffer.compare((await box.readAudio(ids[3]))!, wav(3)), 0);
    assert.equal(await box.requeueErrors(3), 1);
    assert.deepEqual(
      box.pending().map((r) => r.chunkId),
      [ids[0], ids[2], ids[3]],
    );
  });

  test('survives a restart: rows, statuses and order come back; a half-written chunk does not count', async () => {
    const dir = tmp();
    const box = await Outbox.open(dir, { caps: caps({}) });
    const ids = await fill(box, 3);
    await box.markAcked(ids[0]);
    await box.markError(ids[2], 'refused');
    // A crash between the WAV and its row, and a torn temporary.
    fs.writeFileSync(path.join(dir, 'audio', '000000000099-orphan.wav'), wav(9));
    fs.writeFileSync(path.join(dir, 'rows', '000000000004-x.json.abcd.tmp'), '{');
    const again = await Outbox.open(dir, { caps: caps({}) });
    assert.deepEqual(
      again.list().map((r) => [r.chunkId, r.status]),
      [
        [ids[0], 'acked'],
        [ids[1], 'unacked'],
        [ids[2], 'error'],
      ],
    );
    assert.equal(again.get(ids[2])!.errorCount, 1);
    assert.equal(fs.existsSync(path.join(dir, 'audio', '000000000099-orphan.wav')), false, 'orphan removed');
    assert.deepEqual(
      fs.readdirSync(path.join(dir, 'rows')).filter((f) => f.endsWith('.tmp')),
      [],
    );
    const { row } = await again.add({ recordedAt: new Date(t0.getTime() + 99_000), wav: wav(5), durationMs: 3000, sampleRate: 48_000 });
    assert.ok(row.seq > 99, 'sequence numbers never go back, even past orphans');
    assert.deepEqual(
      again.pending().map((r) => r.chunkId),
      [ids[1], row.chunkId],
    );
  });

  test('soft cap evicts the oldest acked rows first and never unsent ones', async () => {
    const size = wav(0).length;
    const box = await Outbox.open(tmp(), { caps: caps({}) });
    const ids = await fill(box, 6);
    await box.markAcked(ids[1]);
    await box.markAcked(ids[3]);
    await box.markAcked(ids[4]);
    const evicted = await box.setCaps(caps({ softBytes: 4 * size }));
    assert.deepEqual(
      evicted.map((e) => [e.chunkId, e.reason, e.status]),
      [
        [ids[1], 'soft_cap', 'acked'],
        [ids[3], 'soft_cap', 'acked'],
      ],
    );
    // Over the soft cap with only unsent rows left: they stay.
    const more = await box.setCaps(caps({ softBytes: 1 }));
    assert.deepEqual(
      more.map((e) => e.chunkId),
      [ids[4]],
    );
    assert.deepEqual(
      box.list().map((r) => r.chunkId),
      [ids[0], ids[2], ids[5]],
    );
    assert.equal(box.evicted.soft_cap, 3);
  });

  test('hard cap drops the oldest rows of any status, keeping the newest', async () => {
    const size = wav(0).length;
    const box = await Outbox.open(tmp(), { caps: caps({ softBytes: 10 * size, hardBytes: 3 * size }) });
    const ids = await fill(box, 5);
    assert.deepEqual(
      box.list().map((r) => r.chunkId),
      ids.slice(2),
    );
    assert.equal(box.evicted.hard_cap, 2);
    assert.deepEqual((await box.stats()).rowCount, 3);
    assert.equal(fs.readdirSync(path.join(box.dir, 'audio')).length, 3, 'their audio files are gone too');
  });

  test('max age drops unsent rows recorded too long ago; acked rows stay', async () => {
    const clock = new ManualClock();
    clock.freeze(t0);
    const box = await Outbox.open(tmp(), { caps: caps({ maxAgeMs: 3600_000 }), now: () => clock.now() });
    const ids = await fill(box, 3, clock);
    await box.markAcked(ids[0]);
    clock.freeze(new Date(t0.getTime() + 3600_000 + 4500)); // ids[0] and ids[1] are older than an hour, ids[2] is not
    const evicted = await box.enforce();
    assert.deepEqual(
      evicted.map((e) => [e.chunkId, e.reason]),
      [[ids[1], 'max_age']],
    );
    assert.deepEqual(
      box.list().map((r) => r.chunkId),
      [ids[0], ids[2]],
    );
  });
});

describe('silence gate', () => {
  const quiet = soundscapeChunk(
    1,
    Array.from({ length: 50 }, (_, i) => i).find((i) => chunkPlan(1, i).silent)!,
  ).samples;
  const call = renderChunk({ species: ['Parus major_Great Tit'], seed: 3 });

  test('drops chunks under filterMinRms and counts them; filterEnabled false lets everything through', () => {
    const gate = new SilenceGate({ filterEnabled: true, filterMinRms: 0.003 });
    assert.equal(gate.check(quiet).pass, false);
    assert.equal(gate.check(call).pass, true);
    assert.deepEqual({ p: gate.stats.totalProcessed, s: gate.stats.totalSent, r: gate.stats.rejectedSilence }, { p: 2, s: 1, r: 1 });
    gate.configure({ filterEnabled: false, filterMinRms: 0.003 });
    assert.equal(gate.check(quiet).pass, true);
    gate.configure({ filterEnabled: true, filterMinRms: 0.9 });
    assert.equal(gate.check(call).reason, 'silence');
    assert.ok(gate.noiseFloorRms > 0 && gate.noiseFloorRms < rms(call));
  });

  test('counters persist across restarts', async () => {
    const file = path.join(tmp(), 'filter-stats.json');
    assert.deepEqual(loadFilterStats(file), emptyFilterStats());
    const gate = new SilenceGate({ filterEnabled: true, filterMinRms: 0.003 });
    gate.check(quiet);
    gate.check(call);
    await saveFilterStats(file, gate.stats);
    const again = new SilenceGate({ filterEnabled: true, filterMinRms: 0.003 }, loadFilterStats(file));
    again.check(call);
    assert.deepEqual({ p: again.stats.totalProcessed, s: again.stats.totalSent, r: again.stats.rejectedSilence }, { p: 3, s: 2, r: 1 });
  });
});

describe('config and journal', () => {
  test('the defaults before the first push are the hub registry defaults (config push rule 2)', () => {
    const hubDefaults = satelliteConfig({ hub: new Map() });
    assert.deepEqual(DEFAULT_CONFIG, hubDefaults);
  });

  test('a push is merged over the defaults; absent or mistyped fields keep the default', () => {
    const c = mergeConfig({ filterEnabled: false, filterMinRms: 'x', outboxHardSizeMb: 64, recordingProfile: { gain: 6 } });
    assert.equal(c.filterEnabled, false);
    assert.equal(c.filterMinRms, DEFAULT_CONFIG.filterMinRms);
    assert.equal(c.outboxHardSizeMb, 64);
    assert.equal(c.recordingProfile.gain, 6);
    assert.equal(c.recordingProfile.type, 'continuous');
    assert.equal(c.heartbeatIntervalSec, 30);
  });

  test('recording schedule: continuous always; absolute windows, also past midnight', () => {
    const at = (iso: string) => new Date(iso);
    const pos = { latitude: 52.1, longitude: 5.1 };
    assert.equal(isRecordingTime(DEFAULT_CONFIG.recordingProfile, at('2030-05-01T12:00:00Z'), pos), true);
    const night = {
      ...DEFAULT_CONFIG.recordingProfile,
      type: 'scheduled',
      schedule: [{ start: '22:00', end: '02:00', reference: 'absolute' as const }],
    };
    assert.equal(isRecordingTime(night, at('2030-05-01T23:00:00Z'), pos), true);
    assert.equal(isRecordingTime(night, at('2030-05-02T01:30:00Z'), pos), true);
    assert.equal(isRecordingTime(night, at('2030-05-02T12:00:00Z'), pos), false);
    const dawn = {
      ...DEFAULT_CONFIG.recordingProfile,
      type: 'dawn_dusk',
      schedule: [{ start: -30, end: 60, reference: 'sunrise' as const }],
    };
    assert.equal(isRecordingTime(dawn, at('2030-05-01T12:00:00Z'), pos), false);
    assert.equal(
      isRecordingTime(dawn, at('2030-05-01T12:00:00Z'), { latitude: null, longitude: null }),
      true,
      'without a position it records',
    );
  });

  test('the journal keeps the last lines for log requests', () => {
    const lines: string[] = [];
    const j = new Journal(
      () => new Date('2030-01-01T00:00:00Z'),
      (l) => lines.push(l),
      3,
    );
    for (let i = 0; i < 5; i++) j.write('info', `line ${i}`);
    assert.deepEqual(j.tail(2), ['2030-01-01T00:00:00.000Z info  line 3', '2030-01-01T00:00:00.000Z info  line 4']);
    assert.equal(j.tail(10).length, 3);
    assert.equal(lines.length, 5);
  });

  test('a log response fits the broker cap: the oldest lines go first (issue 33)', () => {
    const ids = { requestId: null, satelliteId: 's', tenantId: 't' };
    const long = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(4, '0')} ${'x'.repeat(300)}`);
    const body = logResponse(ids, long);
    assert.ok(Buffer.byteLength(JSON.stringify(body)) <= LOG_RESPONSE_MAX_BYTES);
    assert.ok(LOG_RESPONSE_MAX_BYTES < AUDIO_PACKET_MAX_BYTES, 'well inside the packet cap');
    assert.ok(body.lines.length > 100, `${body.lines.length} lines kept`);
    assert.equal(body.lines.at(-1), long.at(-1), 'the newest line is kept');
    assert.deepEqual(body.lines, long.slice(-body.lines.length));
    assert.equal(body.text, body.lines.join('\n'));
    const short = logResponse(ids, ['a', 'b']);
    assert.deepEqual(short.lines, ['a', 'b']);
  });
});

describe('clock', () => {
  test("the satellite's timers run on the injected clock: a frozen ManualClock fires them as it advances, in the order they fall due", () => {
    const manual = new ManualClock();
    manual.freeze(new Date('2030-01-01T00:00:00Z'));
    const clock: SatelliteClock = manual; // the hub's test clock is a satellite clock as it stands
    const fired: string[] = [];
    clock.after(1000, () => fired.push('1 s'));
    const cancel = clock.after(500, () => fired.push('cancelled'));
    clock.after(300, () => {
      fired.push('300 ms');
      clock.after(300, () => fired.push('300 ms after that'));
    });
    cancel();
    manual.advance(999);
    assert.deepEqual(fired, ['300 ms', '300 ms after that']);
    manual.advance(1);
    assert.deepEqual(fired, ['300 ms', '300 ms after that', '1 s']);
  });
});
