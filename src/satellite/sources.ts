/**
 * Where the reference satellite's audio comes from: the built-in synthetic soundscape, one WAV
 * file, or a folder of WAV files. Files are not resampled: they must already be 48 kHz mono
 * 16-bit PCM. Each file is cut into 3-second chunks; a last piece shorter than 3 s is padded
 * with silence (so every chunk has exactly the protocol's length).
 */
import fs from 'node:fs';
import path from 'node:path';
import { CHUNK_SAMPLES, decodeWav, WavError } from '../protocol/wav.ts';
import { soundscapeChunk } from './soundscape.ts';

export interface SourceChunk {
  samples: Int16Array;
  /** Where it came from, for the log (e.g. `synthetic #12` or `dawn.wav @ 6 s`). */
  origin: string;
  /** Synthetic chunks: the species calling in it. */
  species?: string[];
}

export interface ChunkSource {
  readonly description: string;
  /** The next 3-second chunk, or null when the source is exhausted. */
  next(): SourceChunk | null;
}

/** The synthetic soundscape, endless (or `limit` chunks). */
export function syntheticSource(opts: { seed?: number; start?: number; limit?: number; silenceProbability?: number } = {}): ChunkSource {
  const seed = opts.seed ?? 1;
  let index = opts.start ?? 0;
  const end = opts.limit === undefined ? Infinity : index + opts.limit;
  return {
    description: `synthetic soundscape (seed ${seed})`,
    next() {
      if (index >= end) return null;
      const c = soundscapeChunk(seed, index++, { silenceProbability: opts.silenceProbability });
      return { samples: c.samples, origin: `synthetic #${c.index}`, species: c.species };
    },
  };
}

/** Cuts 48 kHz mono 16-bit samples into 3-second chunks, padding the last one. */
export function cutChunks(samples: Int16Array): Int16Array[] {
  const out: Int16Array[] = [];
  for (let at = 0; at < samples.length; at += CHUNK_SAMPLES) {
    const piece = samples.subarray(at, at + CHUNK_SAMPLES);
    if (piece.length === CHUNK_SAMPLES) out.push(piece.slice());
    else {
      const padded = new Int16Array(CHUNK_SAMPLES);
      padded.set(piece);
      out.push(padded);
    }
  }
  return out;
}

function readChunks(file: string): Int16Array[] {
  let decoded;
  try {
    decoded = decodeWav(fs.readFileSync(file), { expect48kMono: true });
  } catch (err) {
    if (err instanceof WavError) throw new Error(`${file}: ${err.message}`, { cause: err });
    throw err;
  }
  return cutChunks(decoded.samples);
}

/** Files are read one at a time, as the source reaches them; a bad file fails when reached. */
function filesSource(files: string[], description: string, loop: boolean): ChunkSource {
  let fileIndex = 0;
  let chunks: Int16Array[] = [];
  let chunkIndex = 0;
  return {
    description,
    next() {
      while (chunkIndex >= chunks.length) {
        if (fileIndex >= files.length) {
          if (!loop || files.length === 0) return null;
          fileIndex = 0;
        }
        chunks = readChunks(files[fileIndex++]);
        chunkIndex = 0;
      }
      const i = chunkIndex++;
      return { samples: chunks[i], origin: `${path.basename(files[fileIndex - 1])} @ ${i * 3} s` };
    },
  };
}

export function wavFileSource(file: string, opts: { loop?: boolean } = {}): ChunkSource {
  // Validate up front so a wrong format fails at start, not later.
  readChunks(file);
  return filesSource([file], `WAV file ${file}`, opts.loop ?? false);
}

/** Every *.wav in the folder (not recursive), in name order. */
export function wavFolderSource(dir: string, opts: { loop?: boolean } = {}): ChunkSource {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith('.wav'))
    .sort()
    .map((f) => path.join(dir, f));
  if (files.length === 0) throw new Error(`${dir}: no .wav files`);
  return filesSource(files, `folder ${dir} (${files.length} WAV files)`, opts.loop ?? false);
}

/** `synthetic`, a .wav file, or a folder. */
export function openSource(spec: string, opts: { seed?: number; loop?: boolean } = {}): ChunkSource {
  if (spec === 'synthetic') return syntheticSource({ seed: opts.seed });
  let stat;
  try {
    stat = fs.statSync(spec);
  } catch {
    throw new Error(`--source ${spec}: no such file or folder (use synthetic, a .wav file or a folder of them)`);
  }
  return stat.isDirectory() ? wavFolderSource(spec, opts) : wavFileSource(spec, opts);
}
