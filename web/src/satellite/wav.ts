/**
 * The chunk's audio format in the browser (satellite protocol §8: 3-second, 48 kHz, 16-bit mono
 * PCM WAV), as src/protocol/wav.ts writes it on the reference satellite, without Node's Buffer.
 */

export const SAMPLE_RATE = 48_000;
export const CHUNK_DURATION_MS = 3_000;
export const CHUNK_SAMPLES = (SAMPLE_RATE * CHUNK_DURATION_MS) / 1000;
const HEADER_BYTES = 44;

/** Float samples in [-1, 1] as a 44-byte-header PCM WAV; `gainDb` is applied before clipping. */
export function encodeWav(samples: Float32Array, gainDb = 0, sampleRate = SAMPLE_RATE): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES + samples.length * 2);
  const v = new DataView(out.buffer);
  const text = (at: number, s: string) => [...s].forEach((c, i) => v.setUint8(at + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  v.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  text(36, 'data');
  v.setUint32(40, samples.length * 2, true);
  const k = Math.pow(10, gainDb / 20);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i] * k));
    v.setInt16(HEADER_BYTES + i * 2, Math.round(s < 0 ? s * 0x8000 : s * 0x7fff), true);
  }
  return out;
}

/** Standard padded base64 (the hub refuses any other). */
export function toBase64(bytes: Uint8Array): string {
  let s = '';
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) s += String.fromCharCode(...bytes.subarray(i, i + step));
  return btoa(s);
}

/** Root mean square of the samples (the level meter and the heartbeat's noise floor). */
export function rms(samples: Float32Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}
