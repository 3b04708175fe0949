/**
 * The chunk's audio format (satellite protocol §8: 3-second, 48 kHz, 16-bit mono PCM WAV): one
 * writer and one RIFF reader for hub and satellite. The reader walks the chunk list properly:
 * writers put LIST, fact or JUNK chunks before `data`, so the header is not always 44 bytes.
 * The hub holds what it is sent to the protocol's format (parseWav, checkChunkWav); the
 * satellite's sources read any 16-bit PCM file into samples (decodeWav).
 */

export const SAMPLE_RATE = 48_000;
export const WAV_BITS = 16;
export const WAV_CHANNELS = 1;
export const CHUNK_DURATION_MS = 3_000;
export const CHUNK_SAMPLES = (SAMPLE_RATE * CHUNK_DURATION_MS) / 1000;
export const WAV_HEADER_BYTES = 44;
/** Size of one encoded 3-second chunk (288,044 bytes). */
export const CHUNK_WAV_BYTES = WAV_HEADER_BYTES + CHUNK_SAMPLES * 2;
/** PCM bytes per millisecond of 48 kHz, 16-bit mono audio. */
export const BYTES_PER_MS = (SAMPLE_RATE * WAV_CHANNELS * (WAV_BITS / 8)) / 1000;
/** How far the data length may stray from what durationMs promises. */
export const DURATION_TOLERANCE = 0.02;

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** What the fmt chunk states. */
export interface WavFormat {
  /** The format tag as written (1 = PCM, 0xfffe = extensible). */
  format: number;
  /** The sub-format of a WAVE_FORMAT_EXTENSIBLE file (null otherwise). */
  subFormat: number | null;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  byteRate: number;
  blockAlign: number;
}

export interface WavInfo extends WavFormat {
  /** Offset and length of the PCM samples (the `data` chunk's body, as far as the file holds it). */
  dataOffset: number;
  dataLength: number;
}

export type WavResult = { ok: true; wav: WavInfo } | { ok: false; reason: string };

const fail = (reason: string): WavResult => ({ ok: false, reason });

/** How strictly a reading holds the file: which formats it takes, and whether the data must be whole. */
interface ReadingRules {
  /** Why this format is refused, or null; asked as soon as the fmt chunk is read. */
  refuseFormat(fmt: WavFormat): string | null;
  /** Refuse a data chunk cut short by the end of the file or of odd length (a recorder stopped mid-write). */
  wholeData: boolean;
}

/** Reads the RIFF structure under `rules`: the fmt chunk and where the data chunk lies. */
function readWav(buf: Buffer, rules: ReadingRules): WavResult {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE') {
    return fail('not a WAV file (no RIFF/WAVE header)');
  }
  let fmt: WavFormat | null = null;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (fmt) return fail('WAV has two fmt chunks');
      if (size < 16 || body + size > buf.length) return fail('WAV fmt chunk is truncated');
      const format = buf.readUInt16LE(body);
      fmt = {
        format,
        // The extensible format carries the real one in its sub-format GUID.
        subFormat: format === WAVE_FORMAT_EXTENSIBLE && size >= 26 ? buf.readUInt16LE(body + 24) : null,
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        byteRate: buf.readUInt32LE(body + 8),
        blockAlign: buf.readUInt16LE(body + 12),
        bitsPerSample: buf.readUInt16LE(body + 14),
      };
      const refused = rules.refuseFormat(fmt);
      if (refused) return fail(refused);
    } else if (id === 'data') {
      if (!fmt) return fail('WAV data chunk comes before its fmt chunk');
      if (rules.wholeData) {
        if (body + size > buf.length) return fail('WAV data chunk is truncated');
        if (size % 2 !== 0) return fail('WAV data length is not a whole number of 16-bit samples');
      }
      return { ok: true, wav: { ...fmt, dataOffset: body, dataLength: Math.min(size, buf.length - body) } };
    }
    // Chunks are word-aligned: an odd size is followed by one pad byte.
    offset = body + size + (size % 2);
  }
  return fail(fmt ? 'WAV has no data chunk' : 'WAV has no fmt chunk');
}

/** The protocol's format exactly: 48 kHz, 16-bit, mono, plain PCM, with a consistent header. */
const PROTOCOL_FORMAT: ReadingRules = {
  refuseFormat(fmt) {
    if (fmt.format !== WAVE_FORMAT_PCM) return `WAV is not PCM (format ${fmt.format})`;
    if (fmt.channels !== WAV_CHANNELS) return `WAV must be mono (has ${fmt.channels} channels)`;
    if (fmt.sampleRate !== SAMPLE_RATE) return `WAV sample rate must be ${SAMPLE_RATE} Hz (is ${fmt.sampleRate})`;
    if (fmt.bitsPerSample !== WAV_BITS) return `WAV must be ${WAV_BITS}-bit (is ${fmt.bitsPerSample}-bit)`;
    if (fmt.blockAlign !== 2 || fmt.byteRate !== SAMPLE_RATE * 2) return 'WAV fmt chunk is inconsistent (block align or byte rate)';
    return null;
  },
  wholeData: true,
};

/** Reads a WAV in the protocol's format (48 kHz 16-bit mono PCM); anything else is refused with the reason. */
export function parseWav(buf: Buffer): WavResult {
  return readWav(buf, PROTOCOL_FORMAT);
}

/** The whole ingest check: a parsable 48 kHz 16-bit mono PCM WAV whose length matches durationMs (±2%). */
export function checkChunkWav(buf: Buffer, durationMs: number): WavResult {
  const parsed = parseWav(buf);
  if (!parsed.ok) return parsed;
  const expected = durationMs * BYTES_PER_MS;
  const actualMs = parsed.wav.dataLength / BYTES_PER_MS;
  if (Math.abs(parsed.wav.dataLength - expected) > expected * DURATION_TOLERANCE) {
    return fail(`WAV holds ${Math.round(actualMs)} ms of audio but durationMs is ${durationMs}`);
  }
  return parsed;
}

export interface DecodedWav {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Samples of the first channel as 16-bit integers (only 16-bit PCM decodes). */
  samples: Int16Array;
}

export class WavError extends Error {}

/**
 * The samples of a 16-bit PCM WAV file, of the first channel (the others are dropped). A data
 * chunk cut short is read as far as it goes. `expect48kMono` refuses anything but 48 kHz mono,
 * which is what the satellite's sources need (they do not resample). Throws WavError.
 */
export function decodeWav(buf: Buffer, opts: { expect48kMono?: boolean } = {}): DecodedWav {
  const read = readWav(buf, {
    refuseFormat(fmt) {
      const format = fmt.format === WAVE_FORMAT_EXTENSIBLE && fmt.subFormat !== null ? fmt.subFormat : fmt.format;
      if (format !== WAVE_FORMAT_PCM) return `not PCM (format ${format})`;
      if (fmt.bitsPerSample !== WAV_BITS) return `${fmt.bitsPerSample}-bit samples; 16-bit needed`;
      if (fmt.channels < 1) return 'no channels';
      if (opts.expect48kMono) {
        if (fmt.sampleRate !== SAMPLE_RATE) return `${fmt.sampleRate} Hz; 48000 Hz needed (no resampling)`;
        if (fmt.channels !== 1) return `${fmt.channels} channels; mono needed`;
      }
      return null;
    },
    wholeData: false,
  });
  if (!read.ok) throw new WavError(read.reason);
  const { channels, sampleRate, bitsPerSample, dataOffset, dataLength } = read.wav;
  const data = buf.subarray(dataOffset, dataOffset + dataLength);
  const frame = 2 * channels;
  const frames = Math.floor(data.length / frame);
  const samples = new Int16Array(frames);
  // On a little-endian host the PCM bytes of a mono file are the samples: one copy.
  if (LITTLE_ENDIAN && channels === 1) new Uint8Array(samples.buffer).set(data.subarray(0, frames * 2));
  else for (let i = 0; i < frames; i++) samples[i] = data.readInt16LE(i * frame);
  return { sampleRate, channels, bitsPerSample, samples };
}

/**
 * A WAV with the canonical 44-byte header: by default the protocol's 16-bit mono PCM at 48 kHz.
 * `samples` is the PCM (16-bit) or a number of frames of silence; the options write other
 * formats, which only tests use (to see them refused).
 */
export function makeWav(
  samples: Int16Array | number,
  opts: { sampleRate?: number; channels?: number; bitsPerSample?: number; format?: number } = {},
): Buffer {
  const sampleRate = opts.sampleRate ?? SAMPLE_RATE;
  const channels = opts.channels ?? WAV_CHANNELS;
  const bits = opts.bitsPerSample ?? WAV_BITS;
  const dataBytes = typeof samples === 'number' ? samples * channels * (bits / 8) : samples.byteLength;
  const buf = Buffer.alloc(WAV_HEADER_BYTES + dataBytes);
  buf.write('RIFF', 0, 'latin1');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'latin1');
  buf.write('fmt ', 12, 'latin1');
  buf.writeUInt32LE(16, 16); // fmt chunk size
  buf.writeUInt16LE(opts.format ?? WAVE_FORMAT_PCM, 20);
  buf.writeUInt16LE(channels, 22);
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * channels * (bits / 8), 28); // byte rate
  buf.writeUInt16LE(channels * (bits / 8), 32); // block align
  buf.writeUInt16LE(bits, 34);
  buf.write('data', 36, 'latin1');
  buf.writeUInt32LE(dataBytes, 40);
  if (typeof samples !== 'number') {
    if (LITTLE_ENDIAN) Buffer.from(samples.buffer, samples.byteOffset, dataBytes).copy(buf, WAV_HEADER_BYTES);
    else for (let i = 0; i < samples.length; i++) buf.writeInt16LE(samples[i], WAV_HEADER_BYTES + i * 2);
  }
  return buf;
}
