/**
 * Cuts the microphone's stream into 3-second chunks at 48 kHz: whatever rate the audio context
 * runs at (44.1 kHz on many phones), frames are resampled by linear interpolation, which keeps
 * the bird band (below 12 kHz) well inside both rates' passbands.
 */
import { CHUNK_DURATION_MS, CHUNK_SAMPLES, SAMPLE_RATE } from './wav.ts';

export interface Chunk {
  samples: Float32Array;
  /** When the chunk's first sample was heard. */
  recordedAt: Date;
}

export class Chunker {
  private readonly step: number;
  private buffer = new Float32Array(CHUNK_SAMPLES);
  private filled = 0;
  /** Position of the next output sample on the input's time line (in input samples, from the last frame's start). */
  private pos = 0;
  /** The input frame's last sample, for interpolating across frame boundaries. */
  private last = 0;
  private startedAt: number | null = null;
  /** Where the next chunk starts on the audio's own time line (chunks are back to back). */
  private nextStart: number | null = null;

  constructor(
    inputRate: number,
    private readonly onChunk: (chunk: Chunk) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.step = inputRate / SAMPLE_RATE;
  }

  /** One frame of mono input samples (an AudioWorklet or ScriptProcessor block). */
  push(frame: Float32Array): void {
    // Output sample at input position p lies between input[floor(p) - 1] and input[floor(p)]
    // (index -1 being the previous frame's last sample).
    while (this.pos < frame.length) {
      const i = Math.floor(this.pos);
      const frac = this.pos - i;
      const a = i === 0 ? this.last : frame[i - 1];
      const b = frame[i];
      if (this.filled === 0) this.startedAt = this.chunkStart(this.now() - ((frame.length - this.pos) / (SAMPLE_RATE * this.step)) * 1000);
      this.buffer[this.filled++] = a + (b - a) * frac;
      this.pos += this.step;
      if (this.filled === CHUNK_SAMPLES) {
        this.onChunk({ samples: this.buffer, recordedAt: new Date(this.startedAt ?? this.now()) });
        this.buffer = new Float32Array(CHUNK_SAMPLES);
        this.filled = 0;
      }
    }
    this.pos -= frame.length;
    this.last = frame[frame.length - 1] ?? this.last;
  }

  /**
   * The start of a chunk: one chunk after the last on the audio's time line, since frames arrive
   * in bursts when the page is busy and the wall clock at a frame says little; the wall clock only
   * when the time line is a second off (the first chunk, a stall of the tab).
   */
  private chunkStart(wallClock: number): number {
    const start = this.nextStart !== null && Math.abs(this.nextStart - wallClock) < 1000 ? this.nextStart : wallClock;
    this.nextStart = start + CHUNK_DURATION_MS;
    return start;
  }

  /** Drops a partial chunk (recording paused or stopped). */
  reset(): void {
    this.filled = 0;
    this.pos = 0;
    this.nextStart = null;
  }
}
