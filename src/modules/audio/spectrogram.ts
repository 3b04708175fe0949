/**
 * Spectrogram images of a chunk (issue 5): a PNG of the whole chunk, time left to right and
 * frequency bottom (0 Hz) to top (`maxHz`), so the dashboard can draw annotation boxes over it
 * from the range headers the route sends.
 *
 * - Short-time FFT with a Hann window, one frame centred on each pixel column (frames past the
 *   ends are zero-padded). The FFT size is the smallest power of two whose bins resolve every
 *   pixel row (256…4096).
 * - A row shows the loudest bin in its frequency band, so a narrow tone stays visible at any
 *   height.
 * - Levels are dBFS (a full-scale sine reads 0 dB); the scale spans 70 dB below the loudest
 *   pixel, but never starts below -40 dBFS, so a near-silent chunk stays dark instead of
 *   showing its noise at full brightness.
 * - The colour map rises monotonically in brightness (black → purple → orange → pale yellow).
 * - PNG rows use one fixed filter (Sub): adaptive filtering tries five per row and doubles the cost.
 */
import FFT from 'fft.js';
import { PNG } from 'pngjs';
import { parseWav } from '../../protocol/wav.ts';
import { AppError, notFound } from '../../core/errors.ts';
import type { Db } from '../../infra/db/index.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import { createAudioRepo } from './repo.ts';

export const SPECTROGRAM_LIMITS = {
  width: { min: 64, max: 2000, default: 600 },
  height: { min: 32, max: 1024, default: 256 },
  maxHz: { min: 1000, max: 24_000, default: 12_000 },
} as const;

const RANGE_DB = 70;
const TOP_FLOOR_DB = -40;

export interface SpectrogramOptions {
  width: number;
  height: number;
  maxHz: number;
}

export interface Spectrogram {
  png: Buffer;
  width: number;
  height: number;
  /** The frequency of the top edge (the bottom is 0 Hz); never above the Nyquist frequency. */
  maxHz: number;
  durationMs: number;
  sampleRate: number;
}

export class SpectrogramError extends Error {}

/** Anchors of the colour map (value 0…1 → RGB), brightness rising throughout. */
const STOPS: Array<[number, number, number, number]> = [
  [0, 0, 0, 4],
  [0.25, 59, 15, 112],
  [0.5, 140, 41, 129],
  [0.75, 241, 96, 93],
  [1, 252, 253, 191],
];

const PALETTE: Uint8Array = (() => {
  const p = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const v = i / 255;
    let k = 0;
    while (k < STOPS.length - 2 && v > STOPS[k + 1][0]) k++;
    const [a, ar, ag, ab] = STOPS[k];
    const [b, br, bg, bb] = STOPS[k + 1];
    const t = (v - a) / (b - a);
    p[i * 3] = Math.round(ar + (br - ar) * t);
    p[i * 3 + 1] = Math.round(ag + (bg - ag) * t);
    p[i * 3 + 2] = Math.round(ab + (bb - ab) * t);
  }
  return p;
})();

const ffts = new Map<number, FFT>();
const windows = new Map<number, Float64Array>();

function fftOf(size: number): { fft: FFT; window: Float64Array } {
  let fft = ffts.get(size);
  let window = windows.get(size);
  if (!fft || !window) {
    fft = new FFT(size);
    window = new Float64Array(size);
    for (let i = 0; i < size; i++) window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size);
    ffts.set(size, fft);
    windows.set(size, window);
  }
  return { fft, window };
}

/** Renders a 16-bit mono PCM WAV (the chunk format) as a spectrogram PNG. */
export function renderSpectrogram(wav: Buffer, opts: SpectrogramOptions): Spectrogram {
  const parsed = parseWav(wav);
  if (!parsed.ok) throw new SpectrogramError(`the stored audio is not a usable WAV: ${parsed.reason}`);
  const { sampleRate, dataOffset, dataLength } = parsed.wav;
  const n = dataLength >> 1;
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) samples[i] = wav.readInt16LE(dataOffset + 2 * i) / 32768;

  const { width, height } = opts;
  const nyquist = sampleRate / 2;
  const maxHz = Math.min(opts.maxHz, nyquist);
  // Enough bins below maxHz for every row: size/2 * maxHz/nyquist >= height.
  let size = 256;
  while (size < 4096 && (size / 2) * (maxHz / nyquist) < height) size *= 2;
  const { fft, window } = fftOf(size);
  const binHz = sampleRate / size;
  // Window gain: a full-scale sine peaks at size/4 in a Hann-windowed FFT.
  const norm = 4 / size;

  // Each row's bin band [lo, hi]: the loudest bin in it is the row's level.
  const rowLo = new Int32Array(height);
  const rowHi = new Int32Array(height);
  for (let y = 0; y < height; y++) {
    const fTop = ((height - y) / height) * maxHz;
    const fBottom = ((height - y - 1) / height) * maxHz;
    const lo = Math.max(0, Math.round(fBottom / binHz));
    rowLo[y] = lo;
    rowHi[y] = Math.max(lo, Math.min(size / 2, Math.round(fTop / binHz) - 1));
  }

  const frame = new Float64Array(size);
  const out = fft.createComplexArray() as number[];
  const power = new Float64Array(size / 2 + 1);
  const levels = new Float32Array(width * height);
  let loudest = -Infinity;
  for (let x = 0; x < width; x++) {
    const centre = Math.floor(((x + 0.5) / width) * n);
    const start = centre - size / 2;
    for (let i = 0; i < size; i++) {
      const j = start + i;
      frame[i] = j >= 0 && j < n ? samples[j] * window[i] : 0;
    }
    fft.realTransform(out, frame);
    for (let k = 0; k <= size / 2; k++) {
      const re = out[2 * k];
      const im = out[2 * k + 1];
      power[k] = re * re + im * im;
    }
    for (let y = 0; y < height; y++) {
      let p = 0;
      for (let k = rowLo[y]; k <= rowHi[y]; k++) if (power[k] > p) p = power[k];
      const db = 10 * Math.log10(p * norm * norm + 1e-20);
      levels[y * width + x] = db;
      if (db > loudest) loudest = db;
    }
  }

  const top = Math.max(loudest, TOP_FLOOR_DB);
  const floor = top - RANGE_DB;
  const png = new PNG({ width, height, colorType: 2, inputColorType: 2, inputHasAlpha: false, bitDepth: 8 });
  const data = Buffer.alloc(width * height * 3);
  for (let i = 0; i < levels.length; i++) {
    const v = Math.max(0, Math.min(255, Math.round(((levels[i] - floor) / RANGE_DB) * 255)));
    data[i * 3] = PALETTE[v * 3];
    data[i * 3 + 1] = PALETTE[v * 3 + 1];
    data[i * 3 + 2] = PALETTE[v * 3 + 2];
  }
  png.data = data;
  const encoded = PNG.sync.write(png, { colorType: 2, inputColorType: 2, inputHasAlpha: false, deflateLevel: 4, filterType: 1 });
  return { png: encoded, width, height, maxHz, durationMs: Math.round((n / sampleRate) * 1000), sampleRate };
}

/** A small least-recently-used cache of rendered images (chunk audio never changes under its id). */
export function createSpectrogramCache(capacity = 32) {
  const entries = new Map<string, Spectrogram>();
  return {
    get(key: string): Spectrogram | undefined {
      const hit = entries.get(key);
      if (hit) {
        entries.delete(key);
        entries.set(key, hit);
      }
      return hit;
    },
    set(key: string, value: Spectrogram): void {
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > capacity) entries.delete(entries.keys().next().value!);
    },
  };
}

/**
 * The thumbnail of a detection row (issue 36 point 2): small enough that 25 rows cost a few
 * kilobytes each, kept rendered (THUMBNAIL_CACHE entries, ~2 KB each) and cached a week by browsers.
 */
export const THUMBNAIL: SpectrogramOptions = { width: 120, height: 40, maxHz: 12_000 };
const THUMBNAIL_CACHE = 4096;

/** Spectrograms of stored chunks, team-scoped like the audio itself. */
export function createSpectrogramService(deps: { db: Db; storage: Pick<ObjectStorage, 'get'> }) {
  const repo = createAudioRepo(deps.db);
  const cache = createSpectrogramCache();
  const thumbnails = createSpectrogramCache(THUMBNAIL_CACHE);

  async function ofChunk(tenantId: string, chunkId: string, opts: SpectrogramOptions, into = cache): Promise<Spectrogram> {
    const chunk = await repo.find(tenantId, chunkId);
    if (!chunk) throw notFound('No such chunk');
    // Checked before the cache: audio removed since (retention, a voice) takes its images with it.
    if (chunk.audioDeletedAt) throw notFound('The audio of this chunk is no longer stored');
    const key = `${chunkId}:${opts.width}:${opts.height}:${opts.maxHz}`;
    const hit = into.get(key);
    if (hit) return hit;
    const wav = await deps.storage.get(chunk.storageKey);
    if (!wav) throw notFound('The audio of this chunk is no longer stored');
    let made: Spectrogram;
    try {
      made = renderSpectrogram(wav, opts);
    } catch (err) {
      if (err instanceof SpectrogramError) throw new AppError(422, 'AUDIO_UNREADABLE', err.message);
      throw err;
    }
    into.set(key, made);
    return made;
  }

  return {
    ofChunk: (tenantId: string, chunkId: string, opts: SpectrogramOptions) => ofChunk(tenantId, chunkId, opts),
    /** The row thumbnail of a chunk, rendered once per process (the chunk's audio never changes under its id). */
    thumbnailOf: (tenantId: string, chunkId: string) => ofChunk(tenantId, chunkId, THUMBNAIL, thumbnails),
  };
}

export type SpectrogramService = ReturnType<typeof createSpectrogramService>;

/** The response headers that let a client map pixels to time and frequency. */
export function spectrogramHeaders(s: Spectrogram): Record<string, string> {
  return {
    'content-type': 'image/png',
    'cache-control': 'private, max-age=86400',
    'x-spectrogram-min-hz': '0',
    'x-spectrogram-max-hz': String(s.maxHz),
    'x-spectrogram-duration-ms': String(s.durationMs),
    'x-spectrogram-sample-rate': String(s.sampleRate),
  };
}
