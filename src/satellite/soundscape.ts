/**
 * The built-in synthetic soundscape: deterministic (seeded) 3-second 48 kHz chunks of low
 * white noise with synthetic calls of five European birds, so a new user sees detections
 * without a microphone. Chunk `i` of seed `s` is always the same samples, whatever was
 * generated before it.
 *
 * Each species is a pure-tone pattern in its own frequency band (bands do not overlap and are
 * separated by gaps of 450 Hz or more), with its own rhythm, so a tiny model can tell them
 * apart from the spectrum alone. Per chunk, pitch is jittered by ±2 % and tempo by ±5 %; the
 * bands below already include that jitter.
 *
 *   Cuculus canorus_Common Cuckoo         500–850 Hz   "cu-coo": 800 Hz for 180 ms, 120 ms gap,
 *                                                      620→580 Hz glide for 320 ms; the pair
 *                                                      repeats every 900 ms (3 pairs)
 *   Turdus merula_Eurasian Blackbird     1500–2500 Hz  fluting warble: 3 phrases of 600 ms whose
 *                                                      pitch wobbles 2000 ± 400 Hz at 3 Hz,
 *                                                      350 ms apart
 *   Fringilla coelebs_Common Chaffinch   3000–4300 Hz  accelerating descending trill: 12 notes
 *                                                      of 35 ms, each a 300 Hz down-sweep, first
 *                                                      from 4200 Hz and last from 3400 Hz, gaps
 *                                                      shrinking 70 → 25 ms, then a 150 ms
 *                                                      flourish 3900 → 3200 Hz
 *   Parus major_Great Tit                4800–6200 Hz  "tea-cher": 6000 Hz for 100 ms, 30 ms gap,
 *                                                      5000 Hz for 150 ms, 120 ms gap; 5 times
 *   Erithacus rubecula_European Robin    6700–8700 Hz  rapid chirps: 3 bursts of 8 up-sweeps
 *                                                      6900 → 8500 Hz of 30 ms every 55 ms,
 *                                                      250 ms between bursts
 *
 * The soundscape behaves like a field recording (docs/model.md "The demonstration soundscape"):
 *
 * - A chunk is a still moment (noise only, RMS ≈ 0.0006, under the default silence gate of
 *   0.003) with probability 0.2. Of the others, about one in eight holds no bird, only the
 *   background; the rest hold one species (60 %), two (30 %) or three (10 %), and half of the
 *   chunks with several have calls that overlap in time.
 * - Each bird sings from a distance of 15–500 m (log-uniform): its amplitude falls as 1/distance
 *   (0.3 at 10 m) and by a further 6 dB per 100 m (air and leaves), so near birds ring out and far
 *   ones barely rise above the noise.
 * - Over microphone noise of RMS 0.0035–0.005, a scene of wind, rain, traffic and insects
 *   (background.ts) that holds for a minute (20 chunks) of soundscape.
 *
 * `renderChunk({ species, seed })` without calls or background is the near, clear call the
 * tests use: amplitude 0.15–0.35 over noise of RMS 0.002.
 */
import { CHUNK_SAMPLES, SAMPLE_RATE } from '../protocol/wav.ts';
import { addBackground, NO_BACKGROUND, type Background } from './background.ts';
import { toInt16 } from './signal.ts';

/** One note: starts `at` ms into the call, lasts `dur` ms, pitch `freq(u)` Hz for u in [0, 1]. */
interface Note {
  at: number;
  dur: number;
  freq: (u: number) => number;
}

export interface SpeciesPattern {
  /** BirdNET's label form: `Scientific name_Common name`. */
  readonly label: string;
  readonly scientificName: string;
  readonly commonName: string;
  /** Every note of the call (with the jitter) lies inside this band, in Hz. */
  readonly bandHz: readonly [number, number];
  /** The pattern in words (as in the table above). */
  readonly pattern: string;
  /** The notes at pitch factor 1 and tempo 1. */
  readonly notes: readonly Note[];
}

const sweep = (from: number, to: number) => (u: number) => from + (to - from) * u;
const tone = (f: number) => () => f;

function cuckoo(): Note[] {
  const notes: Note[] = [];
  for (let k = 0; k < 3; k++) {
    notes.push({ at: k * 900, dur: 180, freq: tone(800) });
    notes.push({ at: k * 900 + 300, dur: 320, freq: sweep(620, 580) });
  }
  return notes;
}

function blackbird(): Note[] {
  return [0, 1, 2].map((k) => ({ at: k * 950, dur: 600, freq: (u: number) => 2000 + 400 * Math.sin(2 * Math.PI * 3 * (u * 0.6)) }));
}

function chaffinch(): Note[] {
  const notes: Note[] = [];
  let at = 0;
  for (let k = 0; k < 12; k++) {
    const start = 4200 - (800 * k) / 11;
    notes.push({ at, dur: 35, freq: sweep(start, start - 300) });
    at += 35 + (70 - (45 * k) / 11);
  }
  notes.push({ at: at + 40, dur: 150, freq: sweep(3900, 3200) });
  return notes;
}

function greatTit(): Note[] {
  const notes: Note[] = [];
  for (let k = 0; k < 5; k++) {
    notes.push({ at: k * 400, dur: 100, freq: tone(6000) });
    notes.push({ at: k * 400 + 130, dur: 150, freq: tone(5000) });
  }
  return notes;
}

function robin(): Note[] {
  const notes: Note[] = [];
  for (let b = 0; b < 3; b++) {
    for (let k = 0; k < 8; k++) notes.push({ at: b * (7 * 55 + 30 + 250) + k * 55, dur: 30, freq: sweep(6900, 8500) });
  }
  return notes;
}

export const SPECIES: readonly SpeciesPattern[] = [
  {
    label: 'Cuculus canorus_Common Cuckoo',
    scientificName: 'Cuculus canorus',
    commonName: 'Common Cuckoo',
    bandHz: [500, 850],
    pattern: '"cu-coo": 800 Hz 180 ms, gap 120 ms, 620→580 Hz 320 ms; every 900 ms, 3 pairs',
    notes: cuckoo(),
  },
  {
    label: 'Turdus merula_Eurasian Blackbird',
    scientificName: 'Turdus merula',
    commonName: 'Eurasian Blackbird',
    bandHz: [1500, 2500],
    pattern: 'fluting warble: 3 phrases of 600 ms at 2000 ± 400 Hz wobbling at 3 Hz, 350 ms apart',
    notes: blackbird(),
  },
  {
    label: 'Fringilla coelebs_Common Chaffinch',
    scientificName: 'Fringilla coelebs',
    commonName: 'Common Chaffinch',
    bandHz: [3000, 4300],
    pattern:
      'accelerating descending trill: 12 notes of 35 ms sweeping down 300 Hz from 4200 → 3400 Hz, gaps 70 → 25 ms, flourish 3900 → 3200 Hz 150 ms',
    notes: chaffinch(),
  },
  {
    label: 'Parus major_Great Tit',
    scientificName: 'Parus major',
    commonName: 'Great Tit',
    bandHz: [4800, 6200],
    pattern: '"tea-cher": 6000 Hz 100 ms, gap 30 ms, 5000 Hz 150 ms, gap 120 ms; 5 times',
    notes: greatTit(),
  },
  {
    label: 'Erithacus rubecula_European Robin',
    scientificName: 'Erithacus rubecula',
    commonName: 'European Robin',
    bandHz: [6700, 8700],
    pattern: 'rapid chirps: 3 bursts of 8 up-sweeps 6900 → 8500 Hz, 30 ms each every 55 ms, 250 ms between bursts',
    notes: robin(),
  },
];

export const SPECIES_LABELS: readonly string[] = SPECIES.map((s) => s.label);

export function speciesByLabel(label: string): SpeciesPattern {
  const s = SPECIES.find((x) => x.label === label);
  if (!s) throw new Error(`unknown synthetic species "${label}"`);
  return s;
}

/** Length of a species' call in ms at tempo 1. */
export function callDurationMs(s: SpeciesPattern): number {
  return Math.max(...s.notes.map((n) => n.at + n.dur));
}

/** mulberry32: a small, fast, seedable PRNG with good enough statistics for noise. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes two integers into one seed (so chunk i does not depend on chunks before it). */
function mix(seed: number, index: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (index + 0x7f4a7c15), 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** Fills `out` with white Gaussian noise of the given RMS (Box–Muller, two samples per pair). */
function addNoise(out: Float64Array, rms: number, rnd: () => number): void {
  for (let i = 0; i < out.length; i += 2) {
    const r = rms * Math.sqrt(-2 * Math.log(Math.max(rnd(), 1e-12)));
    const a = 2 * Math.PI * rnd();
    out[i] = r * Math.cos(a);
    if (i + 1 < out.length) out[i + 1] = r * Math.sin(a);
  }
}

const EDGE_MS = 5; // raised-cosine attack and release of each note

/** Adds one call to `out` starting at `startSample`. */
function renderCall(out: Float64Array, s: SpeciesPattern, startSample: number, amplitude: number, pitch: number, tempo: number): void {
  for (const note of s.notes) {
    const first = startSample + Math.round((note.at * tempo * SAMPLE_RATE) / 1000);
    const n = Math.round((note.dur * tempo * SAMPLE_RATE) / 1000);
    const edge = Math.min(Math.round((EDGE_MS * SAMPLE_RATE) / 1000), Math.floor(n / 2));
    let phase = 0;
    for (let i = 0; i < n; i++) {
      const at = first + i;
      if (at < 0 || at >= out.length) continue;
      const env =
        i < edge ? 0.5 - 0.5 * Math.cos((Math.PI * i) / edge) : i >= n - edge ? 0.5 - 0.5 * Math.cos((Math.PI * (n - 1 - i)) / edge) : 1;
      phase += (2 * Math.PI * note.freq(i / n) * pitch) / SAMPLE_RATE;
      out[at] += amplitude * env * Math.sin(phase);
    }
  }
}

export interface PlannedCall {
  label: string;
  /** Metres from the microphone. */
  distanceM: number;
  amplitude: number;
  /** Where the call starts in the chunk. */
  offsetMs: number;
}

export interface SyntheticChunk {
  /** Position in the soundscape. */
  index: number;
  samples: Int16Array;
  /** Labels of the species calling in this chunk (empty when no bird calls). */
  species: string[];
  /** A still moment: noise under the silence gate, no bird, no background. */
  silent: boolean;
  /** Each call with its distance and level (empty when no bird calls). */
  calls: PlannedCall[];
  background: Background;
}

export interface ChunkRecipe {
  /** Labels to include; empty = no bird. */
  species: readonly string[];
  /** Seed for noise, offsets, amplitudes and jitter. */
  seed: number;
  /** Noise RMS (full scale 1); default 0.002, or 0.0006 for a chunk without species. */
  noiseRms?: number;
  /** The calls at their levels and offsets (the soundscape's plan); without it each species is a near bird at a random offset. */
  calls?: readonly PlannedCall[];
  background?: Background;
}

/** One 3-second chunk with exactly the given species (the inference issue generates training data with this). */
export function renderChunk(recipe: ChunkRecipe): Int16Array {
  const rnd = prng(recipe.seed);
  const out = new Float64Array(CHUNK_SAMPLES);
  const noise = recipe.noiseRms ?? (recipe.species.length === 0 ? 0.0006 : 0.002);
  addNoise(out, noise, rnd);
  if (recipe.calls) {
    for (const call of recipe.calls) {
      const pitch = 0.98 + 0.04 * rnd();
      const tempo = 0.95 + 0.1 * rnd();
      renderCall(out, speciesByLabel(call.label), Math.round((call.offsetMs * SAMPLE_RATE) / 1000), call.amplitude, pitch, tempo);
    }
  } else {
    for (const label of recipe.species) {
      const s = speciesByLabel(label);
      const pitch = 0.98 + 0.04 * rnd();
      const tempo = 0.95 + 0.1 * rnd();
      const lengthMs = callDurationMs(s) * tempo;
      const offsetMs = Math.max(0, (3000 - lengthMs - 20) * rnd());
      const amplitude = 0.15 + 0.2 * rnd();
      renderCall(out, s, Math.round((offsetMs * SAMPLE_RATE) / 1000), amplitude, pitch, tempo);
    }
  }
  if (recipe.background) addBackground(out, recipe.background, rnd);
  return toInt16(out);
}

/** Chunks of soundscape a scene (its wind, rain, traffic and insects) lasts: one minute. */
export const SCENE_CHUNKS = 20;
const NEAR_M = 10;
/** The nearest a bird of the soundscape sings from. */
const NEAREST_M = 15;
const FAR_M = 500;
/** Amplitude of a call at NEAR_M. */
const NEAR_AMPLITUDE = 0.3;
/** Excess attenuation beyond spherical spreading (air absorption, foliage). */
const EXCESS_DB_PER_M = 0.06;

/** A call's amplitude at a distance: 1/r spreading and excess attenuation. */
export function amplitudeAt(distanceM: number): number {
  return NEAR_AMPLITUDE * (NEAR_M / distanceM) * Math.pow(10, (-EXCESS_DB_PER_M * (distanceM - NEAR_M)) / 20);
}

const logUniform = (rnd: () => number, lo: number, hi: number) => lo * Math.pow(hi / lo, rnd());

/** The background of the scene chunk `index` lies in. */
export function scenePlan(seed: number, index: number): { background: Background; noiseRms: number } {
  const rnd = prng(mix(seed ^ 0x5ce7e5, Math.floor(index / SCENE_CHUNKS)));
  const background: Background = {
    wind: rnd() < 0.45 ? 0 : logUniform(rnd, 0.002, 0.012),
    rain: rnd() < 0.85 ? 0 : logUniform(rnd, 0.002, 0.012),
    traffic: rnd() < 0.65 ? 0 : logUniform(rnd, 0.001, 0.008),
    insects: rnd() < 0.65 ? 0 : logUniform(rnd, 0.0006, 0.004),
    insectHz: 4200 + 1200 * rnd(),
  };
  return { background, noiseRms: 0.0035 + 0.0015 * rnd() };
}

export interface ChunkPlan {
  species: string[];
  seed: number;
  silent: boolean;
  calls: PlannedCall[];
  background: Background;
  noiseRms: number;
}

/**
 * What chunk `index` of soundscape `seed` holds (no audio rendered). `silenceProbability` is the
 * share of still moments (default 0.2); 0 asks for a bird in every chunk (tests).
 */
export function chunkPlan(seed: number, index: number, opts: { silenceProbability?: number } = {}): ChunkPlan {
  const rnd = prng(mix(seed, index));
  const chunkSeed = Math.floor(rnd() * 2 ** 32);
  const silenceProbability = opts.silenceProbability ?? 0.2;
  if (rnd() < silenceProbability)
    return { species: [], seed: chunkSeed, silent: true, calls: [], background: NO_BACKGROUND, noiseRms: 0.0006 };
  const scene = scenePlan(seed, index);
  const base = { seed: chunkSeed, silent: false, background: scene.background, noiseRms: scene.noiseRms };
  if (silenceProbability > 0 && rnd() < 0.125) return { species: [], calls: [], ...base };
  const r = rnd();
  const count = r < 0.6 ? 1 : r < 0.9 ? 2 : 3;
  const labels = [...SPECIES_LABELS];
  const calls: PlannedCall[] = [];
  const overlap = count > 1 && rnd() < 0.5;
  for (let k = 0; k < count; k++) {
    const label = labels.splice(Math.floor(rnd() * labels.length), 1)[0];
    const distanceM = logUniform(rnd, NEAREST_M, FAR_M);
    const room = Math.max(0, 3000 - callDurationMs(speciesByLabel(label)) * 1.05 - 20);
    // Overlapping calls start within 300 ms of the first one.
    const offsetMs = overlap && k > 0 ? Math.min(room, Math.max(0, calls[0].offsetMs + (rnd() - 0.5) * 600)) : room * rnd();
    calls.push({ label, distanceM, amplitude: amplitudeAt(distanceM), offsetMs });
  }
  return { species: calls.map((c) => c.label), calls, ...base };
}

/** Chunk `index` of soundscape `seed`. */
export function soundscapeChunk(seed: number, index: number, opts: { silenceProbability?: number } = {}): SyntheticChunk {
  const plan = chunkPlan(seed, index, opts);
  const samples = renderChunk({
    species: plan.species,
    seed: plan.seed,
    noiseRms: plan.noiseRms,
    calls: plan.calls,
    background: plan.silent ? undefined : plan.background,
  });
  return { index, samples, species: plan.species, silent: plan.silent, calls: plan.calls, background: plan.background };
}
