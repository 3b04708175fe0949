/**
 * Audio from a child process: `arecord` for a sound card, `ffmpeg` for files in any format and
 * for streams. Both write raw 48 kHz mono s16le PCM to stdout, which is cut into the protocol's
 * 3-second chunks exactly as a WAV file is (the last piece of a file padded with silence).
 *
 * Two kinds:
 * - **live** (a sound card, a stream URL): one process that should run for ever. When it exits,
 *   or sends nothing for `stallMs`, it is restarted after a back-off (`restartMs` doubling up to
 *   `maxRestartMs`, back to `restartMs` once audio flows again). Each failure is reported to the
 *   satellite (`failed`), which turns its state to `error` and tells the hub at once; the first
 *   chunk after a restart reports `recovered`. The buffer keeps the newest `maxBuffered` chunks:
 *   a sound card does not wait for a recorder that fell behind.
 * - **finite** (files): one process per file, in order; a file's process exiting 0 moves on to
 *   the next file, one exiting otherwise fails the source with ffmpeg's last words. stdout is
 *   paused while `maxBuffered` chunks wait, so a long file is not decoded into memory at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CHUNK_SAMPLES } from '../protocol/wav.ts';
import { systemClock, type SatelliteClock } from './clock.ts';
import type { ChunkSource, SourceChunk, SourceEvents, SourceHealth } from './source-types.ts';

const CHUNK_BYTES = CHUNK_SAMPLES * 2;
const STDERR_KEEP = 4;

export interface ProcessSpec {
  command: string;
  args: string[];
  /** Names the audio in chunk origins and messages (a device, a file name, a URL without credentials). */
  label: string;
}

export interface ProcessSourceOptions {
  description: string;
  live: boolean;
  /** The processes to run: live sources run `specs[0]` again and again; finite ones run each once, in order. */
  specs: ProcessSpec[];
  loop?: boolean;
  restartMs?: number;
  maxRestartMs?: number;
  /** Live only: a process that sends no audio for this long is killed and restarted. */
  stallMs?: number;
  maxBuffered?: number;
  clock?: SatelliteClock;
}

/** Little-endian PCM bytes to samples (copied: the chunk outlives the buffer). */
function toSamples(bytes: Buffer): Int16Array {
  const out = new Int16Array(bytes.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2);
  return out;
}

export class ProcessSource implements ChunkSource {
  readonly description: string;
  private readonly o: Required<Omit<ProcessSourceOptions, 'description' | 'specs' | 'live' | 'loop'>> & ProcessSourceOptions;
  private chunks: SourceChunk[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private child: ChildProcess | null = null;
  private specIndex = 0;
  /** Chunks this process has produced (their origins count 3 s each). */
  private chunkInSpec = 0;
  private stderrTail: string[] = [];
  private started = false;
  private stopped = false;
  private ended = false;
  private fatal: Error | null = null;
  private backoffMs: number;
  private cancelRestart: (() => void) | null = null;
  private cancelStall: (() => void) | null = null;
  private events: SourceEvents | null = null;
  private readonly state: SourceHealth;
  private failing = false;

  constructor(opts: ProcessSourceOptions) {
    this.description = opts.description;
    // An option given as undefined (openSource passes them through) takes the default.
    const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as ProcessSourceOptions;
    this.o = { restartMs: 1000, maxRestartMs: 60_000, stallMs: 20_000, maxBuffered: opts.live ? 20 : 8, clock: systemClock, ...given };
    this.backoffMs = this.o.restartMs;
    this.state = { kind: 'process', state: 'starting', program: opts.specs[0]?.command ?? '', restarts: 0, failures: 0, lastError: null };
  }

  start(events?: SourceEvents): void {
    if (events) this.events = events;
    if (this.started) return;
    this.started = true;
    this.spawnNext();
  }

  health(): SourceHealth {
    return { ...this.state };
  }

  get buffered(): number {
    return this.chunks.length;
  }

  next(): SourceChunk | null | 'waiting' {
    if (!this.started) this.start();
    const chunk = this.chunks.shift();
    if (chunk) {
      if (this.child?.stdout?.isPaused() && this.chunks.length < this.o.maxBuffered / 2) this.child.stdout.resume();
      return chunk;
    }
    if (this.fatal) throw this.fatal;
    if (this.ended) return null;
    return 'waiting';
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelRestart?.();
    this.cancelStall?.();
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve();
      }, 2000);
      child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  private spawnNext(): void {
    if (this.stopped) return;
    const { specs, live, loop } = this.o;
    if (!live && this.specIndex >= specs.length) {
      if (!loop || specs.length === 0) {
        this.ended = true;
        this.state.state = 'ended';
        return;
      }
      this.specIndex = 0;
    }
    const spec = live ? specs[0] : specs[this.specIndex++];
    this.chunkInSpec = 0;
    this.stderrTail = [];
    this.pending = [];
    this.pendingBytes = 0;
    let child: ChildProcess;
    try {
      child = spawn(spec.command, spec.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      return this.onExit(spec, null, null, err as Error);
    }
    this.child = child;
    let spawnError: Error | null = null;
    child.on('error', (err) => (spawnError = err));
    child.stdout!.on('data', (data: Buffer) => this.onData(spec, data));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      for (const line of text.split('\n').map((l) => l.trim())) if (line) this.stderrTail.push(line);
      this.stderrTail.splice(0, Math.max(0, this.stderrTail.length - STDERR_KEEP));
    });
    child.on('close', (code, signal) => {
      if (this.child === child) this.child = null;
      this.onExit(spec, code, signal, spawnError);
    });
    this.armStallWatch(child, spec);
  }

  private armStallWatch(child: ChildProcess, spec: ProcessSpec): void {
    if (!this.o.live) return;
    this.cancelStall?.();
    this.cancelStall = this.o.clock.after(this.o.stallMs, () => {
      if (this.child !== child) return;
      this.stderrTail.push(`no audio for ${Math.round(this.o.stallMs / 1000)} s from ${spec.label}`);
      child.kill('SIGKILL');
    });
  }

  private onData(spec: ProcessSpec, data: Buffer): void {
    if (this.stopped) return;
    if (this.child) this.armStallWatch(this.child, spec);
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes < CHUNK_BYTES) return;
    let all = Buffer.concat(this.pending, this.pendingBytes);
    while (all.length >= CHUNK_BYTES) {
      this.push(spec, toSamples(all.subarray(0, CHUNK_BYTES)));
      all = all.subarray(CHUNK_BYTES);
    }
    this.pending = all.length ? [Buffer.from(all)] : [];
    this.pendingBytes = all.length;
  }

  /** A whole chunk, or the padded piece a process left when it ended (`partial`). */
  private push(spec: ProcessSpec, samples: Int16Array, partial = false): void {
    const origin = `${spec.label} @ ${this.chunkInSpec++ * 3} s`;
    this.chunks.push({ samples, origin });
    // A sound card does not wait: the oldest audio goes when the recorder falls behind.
    if (this.o.live && this.chunks.length > this.o.maxBuffered) this.chunks.shift();
    if (partial) return;
    this.state.state = 'running';
    if (this.o.live) {
      this.backoffMs = this.o.restartMs;
      if (this.failing) {
        this.failing = false;
        this.events?.recovered(`${spec.label}: audio flows again`);
      }
    } else if (this.chunks.length >= this.o.maxBuffered) {
      this.child?.stdout?.pause();
    }
  }

  /** What is left of the last chunk: padded with silence, as a WAV file's last piece is. */
  private flushPartial(spec: ProcessSpec): void {
    if (this.pendingBytes < 2) return;
    const samples = new Int16Array(CHUNK_SAMPLES);
    samples.set(toSamples(Buffer.concat(this.pending, this.pendingBytes)));
    this.pending = [];
    this.pendingBytes = 0;
    this.push(spec, samples, true);
  }

  private onExit(spec: ProcessSpec, code: number | null, signal: NodeJS.Signals | null, err: Error | null): void {
    this.cancelStall?.();
    this.cancelStall = null;
    if (this.stopped) return;
    this.flushPartial(spec);
    const why = err
      ? (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? `${spec.command} not found: install it (Debian: apt-get install ${spec.command === 'arecord' ? 'alsa-utils' : spec.command})`
        : `${spec.command} could not start: ${err.message}`
      : `${spec.command} exited with ${signal ? `signal ${signal}` : `code ${code}`}${this.stderrTail.length ? `: ${this.stderrTail.join(' | ')}` : ''}`;
    if (!this.o.live) {
      if (code === 0 && !err) return this.spawnNext();
      this.fatal = new Error(`${spec.label}: ${why}`);
      this.state.state = 'failed';
      this.state.lastError = this.fatal.message;
      this.state.failures++;
      return;
    }
    // A live source that stops is a failure whatever its exit code: a sound card or a stream has no end.
    this.state.failures++;
    this.state.lastError = `${spec.label}: ${why}`;
    this.state.state = 'restarting';
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.o.maxRestartMs, this.backoffMs * 2);
    this.failing = true;
    this.events?.failed(`${this.state.lastError}; restarting in ${(delay / 1000).toFixed(1)} s`);
    this.cancelRestart = this.o.clock.after(delay, () => {
      this.cancelRestart = null;
      this.state.restarts++;
      this.spawnNext();
    });
  }
}
