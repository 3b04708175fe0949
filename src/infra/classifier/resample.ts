/**
 * Sample-rate conversion for models that do not listen at the chunks' 48 kHz (docs/model.md
 * "Resampling"): a rational polyphase resampler whose low-pass filter is a Kaiser-windowed sinc.
 *
 * Conversion by L/M (48 kHz → 32 kHz is 2/3): the input is thought of as upsampled by L (L − 1
 * zeros between samples), low-passed at the rate L·Fin, and every M-th sample kept. Only the taps
 * that meet a real input sample are ever computed: output m sits at m·M/L input samples, and its
 * taps are one of L precomputed phases of the filter.
 *
 * The filter (figures for 48 → 32 kHz, measured by test/resample.test.ts):
 * - stop band from the lower of the two Nyquist frequencies (16 kHz), so nothing folds back below
 *   it; pass band up to 90 % of it (14.4 kHz); cut-off (−6 dB) halfway, 15.2 kHz;
 * - Kaiser window with β = 0.1102·(A − 8.7) for A = 80 dB (β = 7.857), length from Kaiser's
 *   formula N = (A − 7.95) / (2.285·Δω): 303 taps at 96 kHz, about 151 input samples per output
 *   sample;
 * - each phase is scaled to a DC gain of exactly 1, so a tone in the pass band keeps its level
 *   (ripple well under 0.01 dB) and no phase adds its own gain error (which would image).
 * The kernel is symmetric about the output instant: no delay. Input beyond either end is silence.
 */

/** Stop-band attenuation the filter is designed for, in dB. */
export const STOP_BAND_DB = 80;
/** The pass band ends at this fraction of the stop band's edge (the lower Nyquist frequency). */
export const PASS_FRACTION = 0.9;
/** The most filter phases (L of the reduced ratio) a conversion may need: bounds the table at a few MB. */
export const MAX_PHASES = 1000;

export interface ResamplerDesign {
  from: number;
  to: number;
  /** Up and down factors of the reduced ratio to/from. */
  up: number;
  down: number;
  passHz: number;
  stopHz: number;
  cutoffHz: number;
  beta: number;
  /** Length of the prototype filter at from·up Hz (odd, symmetric). */
  taps: number;
}

interface Filter extends ResamplerDesign {
  /** Taps on each side of the centre, counted in input samples. */
  reach: number;
  /** Phase p's taps for input offsets −reach..reach, at p·(2·reach + 1). */
  table: Float64Array;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** Why a conversion between two rates is refused, or null when it can be built. */
export function refuseRates(from: number, to: number): string | null {
  for (const r of [from, to])
    if (!Number.isInteger(r) || r < 1000 || r > 384_000) return `sample rate ${r} Hz is not a whole number from 1000 to 384000`;
  const up = to / gcd(from, to);
  if (up > MAX_PHASES) {
    return `${from} Hz → ${to} Hz needs ${up} filter phases (at most ${MAX_PHASES}): choose a rate with a simpler ratio to ${from} Hz`;
  }
  return null;
}

/** The zeroth-order modified Bessel function of the first kind (its series; converges fast for β ≤ 20). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 200; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

/** The filter's figures for a conversion (what docs/model.md quotes). */
export function designResampler(from: number, to: number): ResamplerDesign {
  const refused = refuseRates(from, to);
  if (refused) throw new RangeError(refused);
  const g = gcd(from, to);
  const up = to / g;
  const down = from / g;
  const stopHz = Math.min(from, to) / 2;
  const passHz = PASS_FRACTION * stopHz;
  const fast = from * up;
  const deltaOmega = (2 * Math.PI * (stopHz - passHz)) / fast;
  const length = Math.ceil((STOP_BAND_DB - 7.95) / (2.285 * deltaOmega)) + 1;
  return {
    from,
    to,
    up,
    down,
    passHz,
    stopHz,
    cutoffHz: (passHz + stopHz) / 2,
    beta: 0.1102 * (STOP_BAND_DB - 8.7),
    taps: length % 2 === 1 ? length : length + 1,
  };
}

const filters = new Map<string, Filter>();

function filterFor(from: number, to: number): Filter {
  const key = `${from}>${to}`;
  let f = filters.get(key);
  if (f) return f;
  const d = designResampler(from, to);
  const half = (d.taps - 1) / 2;
  const reach = Math.ceil(half / d.up) + 1;
  const width = 2 * reach + 1;
  const table = new Float64Array(d.up * width);
  const fc = d.cutoffHz / (d.from * d.up); // cycles per sample at the fast rate
  const i0Beta = besselI0(d.beta);
  for (let p = 0; p < d.up; p++) {
    let sum = 0;
    for (let i = -reach; i <= reach; i++) {
      // Offset from the output instant at the fast rate; the phase shifts the kernel by p/L input samples.
      const j = p + i * d.up;
      let v = 0;
      if (Math.abs(j) <= half) {
        const x = 2 * fc * j;
        const sinc = j === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const r = j / half;
        v = 2 * fc * sinc * (besselI0(d.beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0Beta);
      }
      table[p * width + i + reach] = v;
      sum += v;
    }
    for (let i = 0; i < width; i++) table[p * width + i] /= sum;
  }
  f = { ...d, reach, table };
  filters.set(key, f);
  return f;
}

/**
 * `input` (floats at `from` Hz) at `to` Hz: floor(n·to/from) samples. The same rate returns a
 * copy. Throws a RangeError for rates refuseRates refuses.
 */
export function resample(samples: ArrayLike<number>, from: number, to: number): Float32Array {
  if (from === to) return Float32Array.from(samples);
  const f = filterFor(from, to);
  // One array type in the hot loop below, whatever the caller passed (V8 keeps it monomorphic).
  const input = samples instanceof Float32Array ? samples : Float32Array.from(samples);
  const n = input.length;
  const outLength = Math.floor((n * f.up) / f.down);
  const out = new Float32Array(outLength);
  const width = 2 * f.reach + 1;
  const { table, reach, up, down } = f;
  for (let m = 0; m < outLength; m++) {
    // Output m sits at (m·down)/up input samples: `base` whole samples and phase p.
    const at = m * down;
    const base = Math.floor(at / up);
    const p = at - base * up;
    // Tap i + reach multiplies x[base − i]: its distance from the output instant is (p + i·up)/up.
    const row = p * width;
    let acc = 0;
    const iFrom = Math.max(-reach, base - n + 1);
    const iTo = Math.min(reach, base);
    for (let i = iFrom; i <= iTo; i++) acc += table[row + i + reach] * input[base - i];
    out[m] = acc;
  }
  return out;
}
