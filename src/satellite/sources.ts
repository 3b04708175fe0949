/**
 * Where the reference satellite's audio comes from (`--source`, issue 23 "Decisions fixed here"):
 *
 * - `synthetic`: the built-in soundscape.
 * - `alsa:DEVICE` (`alsa:default`, `alsa:hw:1,0`, `alsa:plughw:1,0`): a sound card, recorded with
 *   the standard `arecord` as 48 kHz mono s16le.
 * - `rtsp://…`, `rtsps://…`, `http://…`, `https://…`: a stream, decoded by `ffmpeg`.
 * - a file or a folder: a 48 kHz mono 16-bit WAV is read directly; anything else (any rate,
 *   any channel count, MP3, FLAC, Ogg, …) goes through `ffmpeg`, resampled to 48 kHz mono.
 *
 * Each file or stream is cut into 3-second chunks; a file's last piece shorter than 3 s is padded
 * with silence (so every chunk has exactly the protocol's length). Sound cards and streams run as
 * supervised processes (process-source.ts): restarted with back-off, failures reported.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CHUNK_SAMPLES, decodeWav, WavError } from '../protocol/wav.ts';
import { ProcessSource, type ProcessSpec } from './process-source.ts';
import { soundscapeChunk } from './soundscape.ts';
import type { ChunkSource, SourceChunk, SourceEvents } from './source-types.ts';

export type { ChunkSource, SourceChunk, SourceEvents, SourceHealth } from './source-types.ts';

/** A source that always has its next chunk at hand (the soundscape, WAV files read directly). */
export interface ReadySource extends ChunkSource {
  next(): SourceChunk | null;
}

/** The synthetic soundscape, endless (or `limit` chunks). */
export function syntheticSource(opts: { seed?: number; start?: number; limit?: number; silenceProbability?: number } = {}): ReadySource {
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
function filesSource(files: string[], description: string, loop: boolean): ReadySource {
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

export function wavFileSource(file: string, opts: { loop?: boolean } = {}): ReadySource {
  // Validate up front so a wrong format fails at start, not later.
  readChunks(file);
  return filesSource([file], `WAV file ${file}`, opts.loop ?? false);
}

/** Every *.wav in the folder (not recursive), in name order. */
export function wavFolderSource(dir: string, opts: { loop?: boolean } = {}): ReadySource {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith('.wav'))
    .sort()
    .map((f) => path.join(dir, f));
  if (files.length === 0) throw new Error(`${dir}: no .wav files`);
  return filesSource(files, `folder ${dir} (${files.length} WAV files)`, opts.loop ?? false);
}

/** File names a folder source plays (ffmpeg reads many more; these are the audio ones people keep). */
export const AUDIO_EXTENSIONS = [
  '.wav',
  '.flac',
  '.mp3',
  '.ogg',
  '.oga',
  '.opus',
  '.m4a',
  '.aac',
  '.aif',
  '.aiff',
  '.wma',
  '.wv',
  '.mka',
  '.webm',
];

/** ffmpeg's arguments: any input to raw 48 kHz mono s16le on stdout. */
export function ffmpegArgs(input: string): string[] {
  const before = /^rtsps?:\/\//i.test(input) ? ['-rtsp_transport', 'tcp'] : [];
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    ...before,
    '-i',
    input,
    '-vn',
    '-ac',
    '1',
    '-ar',
    '48000',
    '-f',
    's16le',
    '-acodec',
    'pcm_s16le',
    'pipe:1',
  ];
}

/** arecord's arguments: the device as 48 kHz mono s16le on stdout, without end. */
export function arecordArgs(device: string): string[] {
  return ['-q', '-D', device, '-t', 'raw', '-f', 'S16_LE', '-c', '1', '-r', '48000'];
}

/** A URL as it may be logged: without user and password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '';
      u.password = '';
    }
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}

/** True when the file is a WAV the protocol takes as it is (48 kHz mono 16-bit PCM): no ffmpeg needed. */
export function isProtocolWav(file: string): boolean {
  if (!file.toLowerCase().endsWith('.wav')) return false;
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(65_536);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    decodeWav(head.subarray(0, n), { expect48kMono: true });
    return true;
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

export interface SourceOptions {
  seed?: number;
  loop?: boolean;
  /** Files and folders: when the recording began (`--start`); without it, each file's name may say (AudioMoth). */
  start?: Date;
  /** Supervision of capture processes (tests shorten them). */
  restartMs?: number;
  maxRestartMs?: number;
  stallMs?: number;
}

const ffmpegSpec = (input: string, label: string): ProcessSpec => ({ command: 'ffmpeg', args: ffmpegArgs(input), label });

/** Files: direct when all are protocol WAVs (as before), otherwise each through ffmpeg in order. */
function anyFilesSource(files: string[], description: string, opts: SourceOptions): ChunkSource {
  if (files.every(isProtocolWav)) return filesSource(files, description, opts.loop ?? false);
  return new ProcessSource({
    description: `${description} through ffmpeg`,
    live: false,
    loop: opts.loop,
    specs: files.map((f) => ffmpegSpec(f, path.basename(f))),
  });
}

/** `synthetic`, `alsa:DEVICE`, a stream URL, a file or a folder. */
export function openSource(spec: string, opts: SourceOptions = {}): ChunkSource {
  if (spec === 'synthetic') return syntheticSource({ seed: opts.seed });
  const supervision = { restartMs: opts.restartMs, maxRestartMs: opts.maxRestartMs, stallMs: opts.stallMs };
  if (spec.startsWith('alsa:')) {
    const device = spec.slice('alsa:'.length);
    if (!device) throw new Error('--source alsa:DEVICE needs a device, e.g. alsa:default or alsa:plughw:1,0 (see arecord -L)');
    return new ProcessSource({
      description: `sound card ${device} (arecord)`,
      live: true,
      specs: [{ command: 'arecord', args: arecordArgs(device), label: `alsa:${device}` }],
      ...supervision,
    });
  }
  if (/^(rtsps?|https?):\/\//i.test(spec)) {
    const shown = redactUrl(spec);
    return new ProcessSource({ description: `stream ${shown} (ffmpeg)`, live: true, specs: [ffmpegSpec(spec, shown)], ...supervision });
  }
  let stat;
  try {
    stat = fs.statSync(spec);
  } catch {
    throw new Error(
      `--source ${spec}: no such file or folder (use synthetic, alsa:DEVICE, a stream URL, an audio file or a folder of them)`,
    );
  }
  if (opts.start && opts.loop) throw new Error('--start names when one recording began; it cannot loop');
  if (!stat.isDirectory()) return timedSource(anyFilesSource([spec], `file ${spec}`, opts), opts.start ?? null);
  const files = fs
    .readdirSync(spec)
    .filter((f) => AUDIO_EXTENSIONS.includes(path.extname(f).toLowerCase()))
    .sort()
    .map((f) => path.join(spec, f));
  if (files.length === 0) throw new Error(`${spec}: no audio files (${AUDIO_EXTENSIONS.join(', ')})`);
  return timedSource(anyFilesSource(files, `folder ${spec} (${files.length} audio files)`, opts), opts.start ?? null);
}

/**
 * The time a recorder's file name gives, as AudioMoth and most field recorders write it
 * (`20240501_053000.WAV`, `SITE1_20240501_053000.flac`): taken as UTC, as AudioMoth records. Null
 * when the name holds no such time.
 */
export function recordingTimeOfName(name: string): Date | null {
  const m = /(?:^|[^0-9])(\d{4})(\d{2})(\d{2})[_T-](\d{2})(\d{2})(\d{2})(?:[^0-9]|$)/.exec(name);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, se));
  // Date.UTC rolls 2024-02-30 over into March: a name that is no real time is no time.
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== mo - 1 || t.getUTCDate() !== d || h > 23 || mi > 59 || se > 59) return null;
  return t;
}

/**
 * A file source's chunks stamped with when they were recorded, so an old recording is imported at
 * its real times: from `start`, 3 s a chunk in order; without it, from the recording time in each
 * file's name plus the chunk's offset in the file (its origin, `name @ N s`); a chunk of a file
 * whose name holds no time is left to the recorder's clock.
 */
export function timedSource(source: ChunkSource, start: Date | null): ChunkSource {
  let n = 0;
  const stamp = (chunk: SourceChunk): SourceChunk => {
    if (start) return { ...chunk, recordedAt: new Date(start.getTime() + n++ * 3000) };
    const m = /^(.*) @ (\d+) s$/.exec(chunk.origin);
    const named = m ? recordingTimeOfName(m[1]!) : null;
    return named ? { ...chunk, recordedAt: new Date(named.getTime() + Number(m![2]) * 1000) } : chunk;
  };
  return {
    description: source.description,
    next() {
      const chunk = source.next();
      return chunk && chunk !== 'waiting' ? stamp(chunk) : chunk;
    },
    ...(source.start ? { start: (events: SourceEvents) => source.start!(events) } : {}),
    ...(source.stop ? { stop: () => source.stop!() } : {}),
    ...(source.health ? { health: () => source.health!() } : {}),
    get buffered() {
      return source.buffered;
    },
  };
}
