/**
 * WAV (RIFF) encoding and decoding for the reference satellite: 16-bit PCM, mono, 48 kHz —
 * the one format the protocol carries (satellite protocol §8: 3-second 48 kHz mono WAV).
 */

export const SAMPLE_RATE = 48_000;
export const CHUNK_DURATION_MS = 3_000;
export const CHUNK_SAMPLES = (SAMPLE_RATE * CHUNK_DURATION_MS) / 1000;
export const WAV_HEADER_BYTES = 44;
/** Size of one encoded 3-second chunk (288,044 bytes). */
export const CHUNK_WAV_BYTES = WAV_HEADER_BYTES + CHUNK_SAMPLES * 2;

export interface DecodedWav {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Samples of the first channel as 16-bit integers (only 16-bit PCM decodes). */
  samples: Int16Array;
}

export class WavError extends Error {}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A canonical 44-byte-header RIFF WAVE file: PCM 16-bit mono. */
export function encodeWav(samples: Int16Array, sampleRate = SAMPLE_RATE): Buffer {
  const dataBytes = samples.length * 2;
  const buf = Buffer.alloc(WAV_HEADER_BYTES + dataBytes);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'ascii');
  buf.write('fmt ', 12, 'ascii');
  buf.writeUInt32LE(16, 16); // fmt chunk size
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * 2, 28); // byte rate
  buf.writeUInt16LE(2, 32); // block align
  buf.writeUInt16LE(16, 34); // bits per sample
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(dataBytes, 40);
  if (LITTLE_ENDIAN) Buffer.from(samples.buffer, samples.byteOffset, dataBytes).copy(buf, WAV_HEADER_BYTES);
  else for (let i = 0; i < samples.length; i++) buf.writeInt16LE(samples[i], WAV_HEADER_BYTES + i * 2);
  return buf;
}

/** Float samples (full scale ±1, clipped) to 16-bit integers. */
export function toInt16(samples: Float32Array | Float64Array | number[]): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]));
    out[i] = Math.round(v < 0 ? v * 32768 : v * 32767);
  }
  return out;
}

/**
 * Parses a RIFF WAVE file, walking its chunks (LIST and other chunks are skipped). Only PCM
 * 16-bit decodes; channels other than the first are dropped. `expect` refuses anything but
 * 48 kHz mono 16-bit, which is what the sources need (they do not resample).
 */
export function decodeWav(buf: Buffer, opts: { expect48kMono?: boolean } = {}): DecodedWav {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new WavError('not a RIFF WAVE file');
  }
  let offset = 12;
  let fmt: { format: number; channels: number; sampleRate: number; bitsPerSample: number } | null = null;
  let data: Buffer | null = null;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    const end = Math.min(buf.length, body + size);
    if (id === 'fmt ') {
      if (size < 16) throw new WavError('fmt chunk too short');
      fmt = {
        format: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bitsPerSample: buf.readUInt16LE(body + 14),
      };
      // WAVE_FORMAT_EXTENSIBLE carries the real format in its sub-format GUID.
      if (fmt.format === 0xfffe && size >= 26) fmt.format = buf.readUInt16LE(body + 24);
    } else if (id === 'data') {
      data = buf.subarray(body, end);
      break;
    }
    offset = body + size + (size % 2); // chunks are word-aligned
  }
  if (!fmt) throw new WavError('no fmt chunk');
  if (!data) throw new WavError('no data chunk');
  if (fmt.format !== 1) throw new WavError(`not PCM (format ${fmt.format})`);
  if (fmt.bitsPerSample !== 16) throw new WavError(`${fmt.bitsPerSample}-bit samples; 16-bit needed`);
  if (fmt.channels < 1) throw new WavError('no channels');
  if (opts.expect48kMono) {
    if (fmt.sampleRate !== SAMPLE_RATE) throw new WavError(`${fmt.sampleRate} Hz; 48000 Hz needed (no resampling)`);
    if (fmt.channels !== 1) throw new WavError(`${fmt.channels} channels; mono needed`);
  }
  const frame = 2 * fmt.channels;
  const frames = Math.floor(data.length / frame);
  const samples = new Int16Array(frames);
  if (LITTLE_ENDIAN && fmt.channels === 1) new Uint8Array(samples.buffer).set(data.subarray(0, frames * 2));
  else for (let i = 0; i < frames; i++) samples[i] = data.readInt16LE(i * frame);
  return { sampleRate: fmt.sampleRate, channels: fmt.channels, bitsPerSample: fmt.bitsPerSample, samples };
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
