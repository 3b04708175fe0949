import { DEFAULT_SENSITIVITY, MAX_SENSITIVITY, MIN_SENSITIVITY, MODEL_INPUT_SAMPLES, ModelError, type Samples } from './types.ts';

/**
 * BirdNET's sigmoid with a sensitivity:
 *
 *     confidence = 1 / (1 + exp(-sensitivity × clip(logit, -20, 20)))
 *
 * Sensitivity is the slope, 0.5–1.5, default 1.0: the form BirdNET-Analyzer used before 2.0
 * (whose `--sensitivity` option was mapped to a slope of 2 − value, so there a higher value
 * flattened the curve); BirdNET-Analyzer 2.0 and later shift the curve instead. Here the number
 * is the slope itself: higher = steeper = surer both ways.
 */
export function confidenceOf(logit: number, sensitivity = DEFAULT_SENSITIVITY): number {
  checkSensitivity(sensitivity);
  const x = Math.max(-20, Math.min(20, logit));
  return 1 / (1 + Math.exp(-sensitivity * x));
}

export function checkSensitivity(sensitivity: number): void {
  if (!Number.isFinite(sensitivity) || sensitivity < MIN_SENSITIVITY || sensitivity > MAX_SENSITIVITY) {
    throw new ModelError(`sensitivity must be between ${MIN_SENSITIVITY} and ${MAX_SENSITIVITY}, got ${sensitivity}`);
  }
}

/**
 * One window as the model's input: 16-bit samples are scaled to [-1, 1), float samples are
 * taken as they are; shorter input is zero-padded, longer input is cut at `length` (BirdNET's 3 s).
 */
export function toModelInput(samples: Samples, length = MODEL_INPUT_SAMPLES): Float32Array {
  const out = new Float32Array(length);
  const n = Math.min(samples.length, length);
  if (samples instanceof Int16Array) {
    for (let i = 0; i < n; i++) out[i] = samples[i] / 32768;
  } else {
    for (let i = 0; i < n; i++) out[i] = samples[i];
  }
  return out;
}
