/** Spectra of 16-bit samples for the tests of the synthetic soundscape. */
import { SAMPLE_RATE } from '../../src/protocol/wav.ts';

/** In-place radix-2 FFT; returns the power spectrum of the first 2^k samples. */
export function powerSpectrum(samples: Int16Array): { power: Float64Array; hzPerBin: number } {
  let n = 1;
  while (n * 2 <= samples.length) n *= 2;
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let i = 0; i < n; i++) re[i] = samples[i] / 32768;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(ang * k);
        const wi = Math.sin(ang * k);
        const ar = re[i + k + len / 2];
        const ai = im[i + k + len / 2];
        const xr = ar * wr - ai * wi;
        const xi = ar * wi + ai * wr;
        re[i + k + len / 2] = re[i + k] - xr;
        im[i + k + len / 2] = im[i + k] - xi;
        re[i + k] += xr;
        im[i + k] += xi;
      }
    }
  }
  const power = new Float64Array(n / 2);
  for (let i = 0; i < n / 2; i++) power[i] = re[i] * re[i] + im[i] * im[i];
  return { power, hzPerBin: SAMPLE_RATE / n };
}

export function bandShare(samples: Int16Array, lo: number, hi: number): number {
  const { power, hzPerBin } = powerSpectrum(samples);
  let inBand = 0;
  let total = 0;
  for (let i = 0; i < power.length; i++) {
    total += power[i];
    const f = i * hzPerBin;
    if (f >= lo && f <= hi) inBand += power[i];
  }
  return inBand / total;
}
