/**
 * The windows a model hears of one chunk (docs/model.md "Windows").
 *
 * - A window that fits in the chunk (BirdNET 2.4's 3 s in 2.7-3.3 s chunks, up to
 *   NEIGHBOUR_SLACK_MS past the chunk's end) is cut from the chunk alone, every window − overlap
 *   while a whole window fits, at least one; what runs past the chunk's end is silence, as always.
 * - A longer window (5 s at 32 kHz: BirdNET 3.0, Perch 2) starts at the chunk's start and runs
 *   on into the chunks the same satellite recorded after it, placed by their recording times:
 *   one window per chunk, so consecutive windows overlap by window − chunk (2 s for 5 s windows).
 *   The detection names every chunk the window spans (its own first).
 * - When the chunks after it have not all come, the window waits: the worker looks again later
 *   (a delayed job), up to `waitMs` after the chunk was stored by the injected clock, or `maxWaits`
 *   looks. Then the window is completed with silence and its detections are marked `padded`, as
 *   they are when a chunk it spans has lost its audio (retention, privacy).
 */
import { MODEL_SAMPLE_RATE, type Samples } from '../infra/classifier/types.ts';

/** How far past its chunk's end a window may reach and still be cut from that chunk alone. */
export const NEIGHBOUR_SLACK_MS = 500;
/** A later chunk starting at most this long after the audio gathered so far ends continues it (the gap stays silent). */
export const CONTINUITY_MS = 250;
/** How long a window waits for the chunks after its own, from its chunk's arrival (INFERENCE_WINDOW_WAIT_MS). */
export const DEFAULT_WINDOW_WAIT_MS = 30_000;
/** How often a waiting window looks again, in real time (INFERENCE_WINDOW_RECHECK_MS): one chunk's length. */
export const DEFAULT_WINDOW_RECHECK_MS = 3_000;

const samplesIn = (ms: number) => Math.round((ms * MODEL_SAMPLE_RATE) / 1000);

/**
 * Start offsets of the windows inside a chunk: every (window - overlap) while a whole window fits,
 * and at least the first one (chunks are 2.7-3.3 s, so a 3 s model usually hears one window).
 */
export function windowStarts(durationMs: number, overlapMs: number, windowMs = 3000): number[] {
  const step = Math.max(100, windowMs - overlapMs);
  const starts = [0];
  for (let t = step; t + windowMs <= durationMs; t += step) starts.push(t);
  return starts;
}

/** Whether a window of `windowMs` is assembled from the chunk and the ones after it. */
export const spansNeighbours = (durationMs: number, windowMs: number) => windowMs - durationMs > NEIGHBOUR_SLACK_MS;

/** One window as the classifier hears it (48 kHz), and what its detections record. */
export interface Window {
  startMs: number;
  /** From the chunk's start; absent for a window cut from its chunk alone (the recorder's default). */
  endMs?: number;
  samples: Samples;
  spanChunkIds: string[];
  padded: boolean;
}

/** A chunk the same satellite recorded after this one (detections' followingChunks). */
export interface NeighbourChunk {
  id: string;
  recordedAt: Date;
  durationMs: number;
  storageKey: string;
  audioGone: boolean;
}

export interface WindowSource {
  /** The satellite's chunks recorded in (after, before), oldest first. */
  following(after: Date, before: Date): Promise<NeighbourChunk[]>;
  /** A stored chunk's samples (48 kHz, 16-bit), or null when its audio is gone. */
  samplesOf(storageKey: string): Promise<Int16Array | null>;
}

export interface WindowsInput {
  chunk: { id: string; recordedAt: Date; durationMs: number; receivedAt: Date };
  samples: Int16Array;
  windowMs: number;
  overlapMs: number;
  source: WindowSource;
  now: Date;
  waitMs: number;
  /** The worker has looked as often as it will: pad now whatever the clock says. */
  lastLook: boolean;
}

/** The windows to classify, or `wait`: a later chunk the window needs may still come. */
export type WindowPlan = { wait: true } | { wait: false; windows: Window[] };

export async function windowsOf(input: WindowsInput): Promise<WindowPlan> {
  const { chunk, samples, windowMs } = input;
  const length = samplesIn(windowMs);
  if (!spansNeighbours(chunk.durationMs, windowMs)) {
    const windows = windowStarts(chunk.durationMs, input.overlapMs, windowMs).map((startMs) => {
      const from = samplesIn(startMs);
      return { startMs, samples: samples.subarray(from, from + length), spanChunkIds: [chunk.id], padded: false };
    });
    return { wait: false, windows };
  }

  // The chunks after this one, as long as each starts where the audio gathered so far ends.
  const start = new Date(chunk.recordedAt).getTime();
  const later = await input.source.following(new Date(start), new Date(start + windowMs));
  const parts: Array<{ chunk: NeighbourChunk; offsetMs: number }> = [];
  let covered = chunk.durationMs;
  for (const c of later) {
    if (covered >= windowMs) break;
    const offsetMs = new Date(c.recordedAt).getTime() - start;
    if (offsetMs > covered + CONTINUITY_MS) break; // a gap: the chunk right after is missing
    if (offsetMs + c.durationMs <= covered) continue; // inside what is covered already
    parts.push({ chunk: c, offsetMs });
    covered = Math.max(covered, offsetMs + c.durationMs);
  }
  const complete = covered >= windowMs;
  const waited = input.now.getTime() - new Date(chunk.receivedAt).getTime();
  if (!complete && waited < input.waitMs && !input.lastLook) return { wait: true };

  const window = new Float32Array(length);
  for (let i = 0; i < Math.min(samples.length, length); i++) window[i] = samples[i] / 32768;
  let padded = !complete;
  for (const { chunk: c, offsetMs } of parts) {
    const audio = c.audioGone ? null : await input.source.samplesOf(c.storageKey);
    if (!audio) {
      padded = true; // its row stays, its audio is gone: silence there
      continue;
    }
    // Placed by its recording time; where two chunks overlap, the later one's samples stand.
    const at = samplesIn(offsetMs);
    const n = Math.min(audio.length, length - at);
    for (let i = 0; i < n; i++) window[at + i] = audio[i] / 32768;
  }
  return {
    wait: false,
    windows: [{ startMs: 0, endMs: windowMs, samples: window, spanChunkIds: [chunk.id, ...parts.map((p) => p.chunk.id)], padded }],
  };
}
