/**
 * The satellite's sample arithmetic on 16-bit PCM: from float samples, the level the silence gate
 * measures, and the recording profile's gain.
 */

/** Float samples (full scale ±1, clipped) to 16-bit integers. */
export function toInt16(samples: Float32Array | Float64Array | number[]): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]));
    out[i] = Math.round(v < 0 ? v * 32768 : v * 32767);
  }
  return out;
}

/** Root mean square of 16-bit samples, full scale = 1 (the unit of filterMinRms). */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i] / 32768;
    sum += v * v;
  }
  return Math.sqrt(sum / samples.length);
}

/** Applies a gain in dB with clipping (recordingProfile.gain). Returns the input when the gain is 0. */
export function applyGain(samples: Int16Array, gainDb: number): Int16Array {
  if (!gainDb) return samples;
  const factor = Math.pow(10, gainDb / 20);
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * factor)));
  return out;
}
