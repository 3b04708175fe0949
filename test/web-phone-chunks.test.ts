/**
 * The phone satellite's pure parts (web/src/satellite, issue 38): the chunker resamples whatever
 * rate the browser's audio runs at to 48 kHz and cuts back-to-back 3-second chunks; the WAV it
 * encodes is one the hub's own reader takes as a chunk.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Chunker, type Chunk } from '../web/src/satellite/chunker.ts';
import { CHUNK_SAMPLES, encodeWav, rms, toBase64 } from '../web/src/satellite/wav.ts';
import { checkChunkWav, decodeWav } from '../src/protocol/wav.ts';
import { decodeBase64 } from '../src/protocol/messages.ts';

/** `seconds` of a sine at `hz`, sampled at `rate`, fed in blocks of 4096 as a ScriptProcessor does; the clock moves with the audio. */
function feed(rate: number, hz: number, seconds: number): Chunk[] {
  const chunks: Chunk[] = [];
  let clock = Date.parse('2026-05-01T05:00:00Z');
  const c = new Chunker(
    rate,
    (ch) => chunks.push({ samples: ch.samples.slice(), recordedAt: ch.recordedAt }),
    () => clock,
  );
  const total = Math.round(rate * seconds);
  for (let at = 0; at < total; at += 4096) {
    const n = Math.min(4096, total - at);
    const block = new Float32Array(n).map((_, i) => 0.5 * Math.sin((2 * Math.PI * hz * (at + i)) / rate));
    clock += (n / rate) * 1000;
    c.push(block);
  }
  return chunks;
}

/** Upward zero crossings per second of 48 kHz samples: the sine's frequency. */
function frequency(samples: Float32Array): number {
  let up = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i - 1] < 0 && samples[i] >= 0) up++;
  return up / (samples.length / 48_000);
}

for (const rate of [44_100, 48_000]) {
  test(`${rate} Hz in: 3-second chunks at 48 kHz, back to back, the pitch kept`, () => {
    const chunks = feed(rate, 2000, 10);
    assert.equal(chunks.length, 3);
    for (const ch of chunks) {
      assert.equal(ch.samples.length, CHUNK_SAMPLES);
      assert.ok(Math.abs(frequency(ch.samples) - 2000) <= 1, `2 kHz stays 2 kHz, got ${frequency(ch.samples)}`);
      assert.ok(Math.abs(rms(ch.samples) - 0.5 / Math.SQRT2) < 0.01);
    }
    const starts = chunks.map((ch) => ch.recordedAt.getTime());
    assert.deepEqual(
      starts.slice(1).map((t, i) => t - starts[i]),
      [3000, 3000],
    );
    assert.ok(Math.abs(starts[0] - Date.parse('2026-05-01T05:00:00Z')) < 100, 'the first chunk starts when the audio did');
  });
}

test('the WAV is a chunk the hub takes, its base64 the strict kind the hub decodes', () => {
  const [chunk] = feed(48_000, 1000, 3);
  const wav = encodeWav(chunk.samples, 6);
  const buf = Buffer.from(wav);
  assert.equal(checkChunkWav(buf, 3000).ok, true);
  const decoded = decodeWav(buf);
  assert.equal(decoded.sampleRate, 48_000);
  // +6 dB of gain doubles the level (0.5 peak → 1.0, clipped at full scale).
  assert.ok(Math.abs(Math.max(...decoded.samples.slice(0, 4800)) / 32767 - 1) < 0.01);
  assert.deepEqual(decodeBase64(toBase64(wav)), buf);
});
