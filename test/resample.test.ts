/**
 * Resampling the chunks' 48 kHz audio for a 32 kHz model (issue 31, src/infra/classifier/resample.ts):
 * a tone in the pass band keeps its level, a tone above the new Nyquist frequency (16 kHz) is
 * removed instead of folding back into the band (20 kHz would alias to 12 kHz). Pure code: no hub.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { designResampler, refuseRates, resample } from '../src/infra/classifier/resample.ts';
import { resolveWindow } from '../src/infra/classifier/family.ts';
import { ModelError } from '../src/infra/classifier/types.ts';

const FROM = 48_000;
const TO = 32_000;

function tone(hz: number, seconds: number, amplitude = 0.5): Float32Array {
  const n = Math.round(FROM * seconds);
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / FROM + 0.3);
  return x;
}

/** Amplitude of the `hz` component of `y` (sampled at `rate`), away from the edges (a projection on sin and cos). */
function amplitudeAt(y: Float32Array, hz: number, rate: number): number {
  const from = 2000;
  const to = y.length - 2000;
  let c = 0;
  let s = 0;
  for (let i = from; i < to; i++) {
    c += y[i] * Math.cos((2 * Math.PI * hz * i) / rate);
    s += y[i] * Math.sin((2 * Math.PI * hz * i) / rate);
  }
  return (2 * Math.hypot(c, s)) / (to - from);
}

function rmsOf(y: Float32Array): number {
  let sum = 0;
  for (let i = 2000; i < y.length - 2000; i++) sum += y[i] * y[i];
  return Math.sqrt(sum / (y.length - 4000));
}

const db = (ratio: number) => 20 * Math.log10(ratio);

describe('resampling 48 kHz → 32 kHz', () => {
  test('the output has two samples for every three', () => {
    assert.equal(resample(new Float32Array(240_000), FROM, TO).length, 160_000);
    assert.equal(resample(new Float32Array(144_001), FROM, TO).length, 96_000);
  });

  test('a 1 kHz tone keeps its amplitude within 0.5 dB', () => {
    const y = resample(tone(1000, 1), FROM, TO);
    const level = db(amplitudeAt(y, 1000, TO) / 0.5);
    assert.ok(Math.abs(level) < 0.5, `1 kHz at ${level.toFixed(4)} dB`);
    // It is in fact flat to far better than that, up to the pass band's edge (14.4 kHz).
    for (const hz of [100, 1000, 5000, 10_000, 14_000]) {
      const l = db(amplitudeAt(resample(tone(hz, 0.5), FROM, TO), hz, TO) / 0.5);
      assert.ok(Math.abs(l) < 0.01, `${hz} Hz at ${l.toFixed(4)} dB`);
    }
  });

  test('a 20 kHz tone is attenuated by at least 60 dB: no alias at 12 kHz', () => {
    const y = resample(tone(20_000, 1), FROM, TO);
    const alias = db(amplitudeAt(y, 12_000, TO) / 0.5);
    const all = db(rmsOf(y) / (0.5 / Math.SQRT2));
    assert.ok(alias < -60, `the 12 kHz alias at ${alias.toFixed(1)} dB`);
    assert.ok(all < -60, `everything left at ${all.toFixed(1)} dB`);
  });

  test('the whole stop band (16-24 kHz) is at least 78 dB down', () => {
    let worst = -Infinity;
    for (let hz = 16_000; hz <= 23_900; hz += 250)
      worst = Math.max(worst, db(rmsOf(resample(tone(hz, 0.25), FROM, TO)) / (0.5 / Math.SQRT2)));
    assert.ok(worst < -78, `worst stop-band level ${worst.toFixed(1)} dB`);
  });

  test('the design is the one docs/model.md quotes', () => {
    const d = designResampler(FROM, TO);
    assert.deepEqual(
      { up: d.up, down: d.down, passHz: d.passHz, stopHz: d.stopHz, cutoffHz: d.cutoffHz, taps: d.taps, beta: Number(d.beta.toFixed(3)) },
      { up: 2, down: 3, passHz: 14_400, stopHz: 16_000, cutoffHz: 15_200, taps: 303, beta: 7.857 },
    );
  });

  test('the same rate is a copy; ratios past the phase bound are refused', () => {
    const x = tone(1000, 0.01);
    assert.deepEqual(resample(x, FROM, FROM), x);
    assert.equal(refuseRates(FROM, 44_100), null);
    assert.match(refuseRates(FROM, 31_999) ?? '', /needs 31999 filter phases/);
  });
});

describe('model families from the input length', () => {
  test('144000 samples are 3 s at 48 kHz, 160000 are 5 s at 32 kHz', () => {
    assert.deepEqual(resolveWindow(144_000, {}, 'm'), { family: '3s-48k', sampleRate: 48_000, windowMs: 3000, inputSamples: 144_000 });
    assert.deepEqual(resolveWindow(160_000, {}, 'm'), { family: '5s-32k', sampleRate: 32_000, windowMs: 5000, inputSamples: 160_000 });
    assert.equal(resolveWindow(null, {}, 'm').family, '3s-48k');
  });

  test('another length needs the rate or the window, which must agree with it', () => {
    assert.throws(
      () => resolveWindow(96_000, {}, 'm'),
      (e: Error) => e instanceof ModelError && /96000 samples.*sampleRate.*windowSeconds/.test(e.message),
    );
    assert.deepEqual(resolveWindow(96_000, { sampleRate: 32_000 }, 'm'), {
      family: 'custom',
      sampleRate: 32_000,
      windowMs: 3000,
      inputSamples: 96_000,
    });
    assert.deepEqual(resolveWindow(96_000, { windowMs: 6000 }, 'm'), {
      family: 'custom',
      sampleRate: 16_000,
      windowMs: 6000,
      inputSamples: 96_000,
    });
    assert.throws(() => resolveWindow(96_000, { sampleRate: 16_000, windowMs: 3000 }, 'm'), /16000 Hz × 3 s is 48000/);
    assert.throws(() => resolveWindow(null, { sampleRate: 16_000 }, 'm'), /give both sampleRate and windowSeconds/);
    assert.throws(() => resolveWindow(95_997, { sampleRate: 31_999 }, 'm'), /31999 filter phases/);
  });
});
