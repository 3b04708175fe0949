/**
 * A model's family, read from its input's length (docs/model.md "The model contract"):
 *
 * - 144000 samples: 3 s at 48 kHz (`3s-48k`, BirdNET 2.4);
 * - 160000 samples: 5 s at 32 kHz (`5s-32k`, BirdNET 3.0 and Perch 2);
 * - anything else: the upload names the rate (`sampleRate`, Hz) and/or the window
 *   (`windowSeconds`); with the length known one of them is enough, since N = rate × seconds.
 *
 * Given values must agree with the length. A length the graph leaves open (a symbolic dimension)
 * takes the given values, else BirdNET 2.4's, which is what such models were run as before
 * families existed.
 */
import { BIRDNET_WINDOW, ModelError, type ModelFamily, type ModelWindow } from './types.ts';
import { refuseRates } from './resample.ts';

export const KNOWN_FAMILIES: ReadonlyArray<ModelWindow & { models: string }> = [
  { ...BIRDNET_WINDOW, models: 'BirdNET 2.4' },
  { family: '5s-32k', sampleRate: 32_000, windowMs: 5000, inputSamples: 160_000, models: 'BirdNET 3.0, Perch 2' },
];

/** Bounds on a given window: at least a tenth of a second, at most ten chunks' worth. */
export const MIN_WINDOW_MS = 100;
export const MAX_WINDOW_MS = 30_000;
/** Bounds on a given rate (the resampler's, resample.ts). */
export const MIN_SAMPLE_RATE = 1000;
export const MAX_SAMPLE_RATE = 384_000;

/** What an upload may say about the model's input (multipart fields sampleRate, windowSeconds). */
export interface WindowHint {
  sampleRate?: number;
  /** The window in ms (windowSeconds × 1000). */
  windowMs?: number;
}

const describe = (f: ModelWindow & { models: string }) =>
  `${f.inputSamples} (${f.windowMs / 1000} s at ${f.sampleRate / 1000} kHz: ${f.models})`;

function familyOf(sampleRate: number, windowMs: number, inputSamples: number): ModelFamily {
  return (
    KNOWN_FAMILIES.find((f) => f.sampleRate === sampleRate && f.windowMs === windowMs && f.inputSamples === inputSamples)?.family ??
    'custom'
  );
}

/**
 * The window of a model whose input has `inputSamples` samples (null: symbolic), given `hint`.
 * Throws a ModelError saying what to give when the length matches no family and no hint names one.
 */
export function resolveWindow(inputSamples: number | null, hint: WindowHint, name: string): ModelWindow {
  const { sampleRate, windowMs } = hint;
  if (sampleRate !== undefined && (!Number.isInteger(sampleRate) || sampleRate < MIN_SAMPLE_RATE || sampleRate > MAX_SAMPLE_RATE)) {
    throw new ModelError(
      `${name}: sampleRate must be a whole number of Hz from ${MIN_SAMPLE_RATE} to ${MAX_SAMPLE_RATE}, got ${sampleRate}`,
    );
  }
  if (windowMs !== undefined && (!Number.isInteger(windowMs) || windowMs < MIN_WINDOW_MS || windowMs > MAX_WINDOW_MS)) {
    throw new ModelError(
      `${name}: windowSeconds must be from ${MIN_WINDOW_MS / 1000} to ${MAX_WINDOW_MS / 1000} in whole milliseconds, got ${windowMs / 1000}`,
    );
  }

  if (sampleRate === undefined && windowMs === undefined) {
    if (inputSamples === null) return BIRDNET_WINDOW;
    const known = KNOWN_FAMILIES.find((f) => f.inputSamples === inputSamples);
    if (known) return { family: known.family, sampleRate: known.sampleRate, windowMs: known.windowMs, inputSamples };
    throw new ModelError(
      `${name}: the input has ${inputSamples} samples, which is no known family: ${KNOWN_FAMILIES.map(describe).join(' or ')}. ` +
        `Give the model's sample rate (field sampleRate, in Hz) and/or its window (field windowSeconds) with the upload: ` +
        `${inputSamples} = sampleRate × windowSeconds`,
    );
  }

  let rate = sampleRate;
  let ms = windowMs;
  if (inputSamples !== null) {
    // One given value and the length fix the other.
    rate ??= Math.round((inputSamples * 1000) / ms!);
    ms ??= Math.round((inputSamples * 1000) / rate);
  }
  if (rate === undefined || ms === undefined) {
    throw new ModelError(`${name}: the input's length is not fixed in the graph: give both sampleRate and windowSeconds`);
  }
  const samples = Math.round((rate * ms) / 1000);
  if (inputSamples !== null && samples !== inputSamples) {
    throw new ModelError(
      `${name}: the input has ${inputSamples} samples, but ${rate} Hz × ${ms / 1000} s is ${samples}: give values whose product is ${inputSamples}`,
    );
  }
  if (ms < MIN_WINDOW_MS || ms > MAX_WINDOW_MS) {
    throw new ModelError(`${name}: a window of ${ms / 1000} s is outside ${MIN_WINDOW_MS / 1000}–${MAX_WINDOW_MS / 1000} s`);
  }
  const refused = refuseRates(BIRDNET_WINDOW.sampleRate, rate);
  if (refused) throw new ModelError(`${name}: ${refused}`);
  return { family: familyOf(rate, ms, samples), sampleRate: rate, windowMs: ms, inputSamples: samples };
}
