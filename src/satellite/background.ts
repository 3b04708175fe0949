/**
 * The synthetic soundscape's background: what a field microphone hears besides birds. Each is
 * cheap to render (one-pole filters and envelopes over 144,000 samples) and lands where it does
 * in the real world, so the built-in model hears it as a real model would:
 *
 *   wind     gusty low-frequency rumble, most energy under 200 Hz, a tail into the cuckoo's band
 *   rain     broadband hiss with droplet clicks: lifts every band and the noise floor alike,
 *            so it masks calls rather than imitating them
 *   traffic  a distant road: rumble under 200 Hz and tyre noise around 0.5–2.5 kHz, swelling as a
 *            car passes (cuckoo and blackbird bands)
 *   insects  a cricket: pulsed chirps on a carrier of 4.2–5.4 kHz, at times inside the great
 *            tit's band
 *
 * Levels are RMS, full scale 1. A scene (which backgrounds, how loud) holds for a minute of
 * soundscape (soundscape.ts); gusts, cars and chirps vary from chunk to chunk.
 */
import { SAMPLE_RATE } from '../protocol/wav.ts';

export interface Background {
  wind: number;
  rain: number;
  traffic: number;
  insects: number;
  /** Cricket carrier in Hz (insects > 0). */
  insectHz: number;
}

export const NO_BACKGROUND: Background = { wind: 0, rain: 0, traffic: 0, insects: 0, insectHz: 4800 };

/**
 * White noise for what is filtered next: uniform samples are enough (the filters make it
 * Gaussian-like) and cost a tenth of Box–Muller, which matters to the live feed that renders a
 * chunk every few hundred milliseconds.
 */
function white(n: number, rnd: () => number): Float64Array {
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = rnd() - 0.5;
  return x;
}

/** Multiplies `x` by `env(t)`, evaluated every 10 ms (envelopes here move far slower). */
function applyEnvelope(x: Float64Array, env: (t: number) => number): void {
  const block = SAMPLE_RATE / 100;
  for (let at = 0; at < x.length; at += block) {
    const g = env(at / SAMPLE_RATE);
    const end = Math.min(x.length, at + block);
    for (let i = at; i < end; i++) x[i] *= g;
  }
}

/** Scales `x` in place to the given RMS (a silent buffer stays silent). */
function normalise(x: Float64Array, target: number): Float64Array {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i] * x[i];
  const r = Math.sqrt(sum / x.length);
  if (r > 0) for (let i = 0; i < x.length; i++) x[i] *= target / r;
  return x;
}

/** One-pole low-pass at `hz`, in place. */
function lowPass(x: Float64Array, hz: number): void {
  const a = Math.exp((-2 * Math.PI * hz) / SAMPLE_RATE);
  let y = 0;
  for (let i = 0; i < x.length; i++) x[i] = y = (1 - a) * x[i] + a * y;
}

function wind(n: number, level: number, rnd: () => number): Float64Array {
  const x = white(n, rnd);
  lowPass(x, 150);
  lowPass(x, 200);
  lowPass(x, 300);
  // Gusts: two slow swells, never quite still.
  const f1 = 0.3 + 0.5 * rnd();
  const f2 = 0.7 + 0.8 * rnd();
  const p1 = 2 * Math.PI * rnd();
  const p2 = 2 * Math.PI * rnd();
  applyEnvelope(x, (t) => 0.35 + 0.65 * (0.5 + 0.3 * Math.sin(2 * Math.PI * f1 * t + p1) + 0.2 * Math.sin(2 * Math.PI * f2 * t + p2)) ** 2);
  return normalise(x, level);
}

function rain(n: number, level: number, rnd: () => number): Float64Array {
  const x = white(n, rnd);
  // The hiss (uniform noise of RMS 0.58, as loud as the droplets together).
  for (let i = 0; i < n; i++) x[i] *= 2;
  // Droplets: short bright clicks, a few hundred a second.
  const drops = Math.floor(n / 160);
  for (let k = 0; k < drops; k++) {
    const at = Math.floor(rnd() * n);
    const amp = (rnd() < 0.5 ? -1 : 1) * (1 + 4 * rnd() ** 3);
    for (let j = 0; j < 48 && at + j < n; j++) x[at + j] += amp * Math.exp(-j / 8) * (j % 2 ? -1 : 1);
  }
  return normalise(x, level);
}

function traffic(n: number, level: number, rnd: () => number): Float64Array {
  const rumble = white(n, rnd);
  const tyres = white(n, rnd);
  lowPass(rumble, 120);
  lowPass(rumble, 200);
  // Band-pass 0.5–2.5 kHz: low-pass at 2.5 kHz minus low-pass at 500 Hz.
  const low = Float64Array.from(tyres);
  lowPass(tyres, 2500);
  lowPass(tyres, 2500);
  lowPass(low, 500);
  lowPass(low, 500);
  normalise(rumble, 1);
  for (let i = 0; i < n; i++) tyres[i] -= low[i];
  normalise(tyres, 0.25);
  // A car passing: its closest moment somewhere in or near the chunk.
  const peak = (rnd() * 5 - 1) * SAMPLE_RATE;
  const width = (0.8 + 1.2 * rnd()) * SAMPLE_RATE;
  for (let i = 0; i < n; i++) rumble[i] += tyres[i];
  applyEnvelope(rumble, (t) => 0.3 + Math.exp(-(((t * SAMPLE_RATE - peak) / width) ** 2)));
  return normalise(rumble, level);
}

function insects(n: number, level: number, carrierHz: number, rnd: () => number): Float64Array {
  const x = new Float64Array(n);
  const period = (0.35 + 0.3 * rnd()) * SAMPLE_RATE; // chirp every 0.35–0.65 s
  const pulses = 3 + Math.floor(rnd() * 3);
  const pulse = 0.015 * SAMPLE_RATE;
  const gap = 0.012 * SAMPLE_RATE;
  const offset = rnd() * period;
  for (let i = 0; i < n; i++) {
    const inPeriod = (i + offset) % period;
    const k = Math.floor(inPeriod / (pulse + gap));
    const inPulse = inPeriod - k * (pulse + gap);
    if (k < pulses && inPulse < pulse) x[i] = Math.sin((Math.PI * inPulse) / pulse) * Math.sin((2 * Math.PI * carrierHz * i) / SAMPLE_RATE);
  }
  return normalise(x, level);
}

/** Adds the background to `out` (3 s at 48 kHz). */
export function addBackground(out: Float64Array, bg: Background, rnd: () => number): void {
  const parts: Float64Array[] = [];
  if (bg.wind > 0) parts.push(wind(out.length, bg.wind, rnd));
  if (bg.rain > 0) parts.push(rain(out.length, bg.rain, rnd));
  if (bg.traffic > 0) parts.push(traffic(out.length, bg.traffic, rnd));
  if (bg.insects > 0) parts.push(insects(out.length, bg.insects, bg.insectHz, rnd));
  for (const p of parts) for (let i = 0; i < out.length; i++) out[i] += p[i];
}

/** Words for the journal and the docs: `wind 0.01, insects 0.004 @ 4.9 kHz`. */
export function describeBackground(bg: Background): string {
  const parts: string[] = [];
  if (bg.wind > 0) parts.push(`wind ${bg.wind.toPrecision(2)}`);
  if (bg.rain > 0) parts.push(`rain ${bg.rain.toPrecision(2)}`);
  if (bg.traffic > 0) parts.push(`traffic ${bg.traffic.toPrecision(2)}`);
  if (bg.insects > 0) parts.push(`insects ${bg.insects.toPrecision(2)} @ ${(bg.insectHz / 1000).toFixed(1)} kHz`);
  return parts.join(', ') || 'calm';
}
