/**
 * WAV checks for ingest (satellite protocol §8: 3-second, 48 kHz mono WAV). The RIFF chunk list
 * is walked properly: writers put LIST, fact or JUNK chunks before `data`, so the header is not
 * always 44 bytes.
 */

export const WAV_SAMPLE_RATE = 48_000;
export const WAV_BITS = 16;
export const WAV_CHANNELS = 1;
/** PCM bytes per millisecond of 48 kHz, 16-bit mono audio. */
export const BYTES_PER_MS = (WAV_SAMPLE_RATE * WAV_CHANNELS * (WAV_BITS / 8)) / 1000;
/** How far the data length may stray from what durationMs promises. */
export const DURATION_TOLERANCE = 0.02;

export interface WavInfo {
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** Offset and length of the PCM samples (the `data` chunk's body). */
  dataOffset: number;
  dataLength: number;
}

export type WavResult = { ok: true; wav: WavInfo } | { ok: false; reason: string };

const fail = (reason: string): WavResult => ({ ok: false, reason });

/** Reads the RIFF structure: the fmt chunk and where the data chunk lies. */
export function parseWav(buf: Buffer): WavResult {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE') {
    return fail('not a WAV file (no RIFF/WAVE header)');
  }
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataLength'> | null = null;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (fmt) return fail('WAV has two fmt chunks');
      if (size < 16 || body + size > buf.length) return fail('WAV fmt chunk is truncated');
      fmt = {
        format: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bitsPerSample: buf.readUInt16LE(body + 14),
      };
      const blockAlign = buf.readUInt16LE(body + 12);
      const byteRate = buf.readUInt32LE(body + 8);
      if (fmt.format !== 1) return fail(`WAV is not PCM (format ${fmt.format})`);
      if (fmt.channels !== WAV_CHANNELS) return fail(`WAV must be mono (has ${fmt.channels} channels)`);
      if (fmt.sampleRate !== WAV_SAMPLE_RATE) return fail(`WAV sample rate must be ${WAV_SAMPLE_RATE} Hz (is ${fmt.sampleRate})`);
      if (fmt.bitsPerSample !== WAV_BITS) return fail(`WAV must be ${WAV_BITS}-bit (is ${fmt.bitsPerSample}-bit)`);
      if (blockAlign !== 2 || byteRate !== WAV_SAMPLE_RATE * 2) return fail('WAV fmt chunk is inconsistent (block align or byte rate)');
    } else if (id === 'data') {
      if (!fmt) return fail('WAV data chunk comes before its fmt chunk');
      if (body + size > buf.length) return fail('WAV data chunk is truncated');
      if (size % 2 !== 0) return fail('WAV data length is not a whole number of 16-bit samples');
      return { ok: true, wav: { ...fmt, dataOffset: body, dataLength: size } };
    }
    // Chunks are word-aligned: an odd size is followed by one pad byte.
    offset = body + size + (size % 2);
  }
  return fail(fmt ? 'WAV has no data chunk' : 'WAV has no fmt chunk');
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

/** A PCM WAV with the canonical 44-byte header (tests, fixtures, the reference satellite may use it). */
export function makeWav(
  samples: Int16Array | number,
  opts: { sampleRate?: number; channels?: number; bitsPerSample?: number; format?: number } = {},
): Buffer {
  const sampleRate = opts.sampleRate ?? WAV_SAMPLE_RATE;
  const channels = opts.channels ?? WAV_CHANNELS;
  const bits = opts.bitsPerSample ?? WAV_BITS;
  const pcm =
    typeof samples === 'number'
      ? Buffer.alloc(samples * channels * (bits / 8))
      : Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(opts.format ?? 1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * (bits / 8), 28);
  header.writeUInt16LE(channels * (bits / 8), 32);
  header.writeUInt16LE(bits, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
