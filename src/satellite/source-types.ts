/**
 * What a source of audio is to the satellite: the shapes sources.ts and process-source.ts share
 * (apart, so neither imports the other).
 */

export interface SourceChunk {
  samples: Int16Array;
  /** Where it came from, for the log (e.g. `synthetic #12` or `dawn.wav @ 6 s`). */
  origin: string;
  /** Synthetic chunks: the species calling in it. */
  species?: string[];
  /** When its audio began, for a recording imported from a file (`--start`, or the file's name); else now. */
  recordedAt?: Date;
}

/** How a process-backed source is doing (the journal and the satellite's state tell the hub). */
export interface SourceHealth {
  kind: 'process';
  state: 'starting' | 'running' | 'restarting' | 'ended' | 'failed';
  /** The program run (arecord, ffmpeg). */
  program: string;
  restarts: number;
  failures: number;
  lastError: string | null;
}

/** What a source tells the satellite as it happens. */
export interface SourceEvents {
  /** The capture process died or stalled; it is restarted after a back-off. */
  failed(message: string): void;
  /** Audio flows again after a failure. */
  recovered(message: string): void;
}

export interface ChunkSource {
  readonly description: string;
  /**
   * The next 3-second chunk; null when the source is exhausted; 'waiting' when a live source has
   * no whole chunk yet (the recorder asks again on its next tick). Throws when the source failed
   * for good (a file that cannot be read).
   */
  next(): SourceChunk | null | 'waiting';
  /** Starts capturing (sources backed by a process); the satellite calls it on start. */
  start?(events: SourceEvents): void;
  /** Ends the capture process. */
  stop?(): Promise<void>;
  health?(): SourceHealth;
  /** Whole chunks waiting to be taken (a recorder that fell behind catches up). */
  readonly buffered?: number;
}
