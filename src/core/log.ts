/**
 * The hub's one logger (issue 21): pino, the logger Fastify uses, writing one JSON object per line
 * to stdout: `level` (pino's number: 20 debug, 30 info, 40 warn, 50 error, 60 fatal), `time` (ISO
 * 8601, UTC), `msg` (a sentence a person can read), then fields (`component`, `reqId`, `err`, ids,
 * counts, durations in `ms`). Every part of the hub writes through it: the start-up lines, HTTP
 * requests (with their request id), ingest, the queue, workers and shutdown (docs/operations.md).
 * The operator commands' own answers (`chorus jobs failed`, `chorus backup`) stay plain text:
 * they are a command's output for a person, not the log of a running hub.
 */
import os from 'node:os';
import { pino, stdTimeFunctions, type Logger } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The logger every part of the hub is handed (a pino Logger: Fastify takes it as its own). */
export type Log = Logger;

/** Secrets that may sit in what is logged (request headers, error objects carrying a config). */
const REDACT = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.secret'];

/**
 * The process's logger: JSON lines on stdout (file descriptor 1, written synchronously so lines
 * before an exit are kept). Every line names its process (`pid`, `host`) and, for a hub, its `mode`
 * (full, api, dispatcher, worker): in split mode several processes write to one log store.
 */
export function createLogger(opts: { level: LogLevel | string; destination?: NodeJS.WritableStream; mode?: string }): Log {
  return pino(
    {
      level: opts.level,
      timestamp: stdTimeFunctions.isoTime,
      base: { pid: process.pid, host: os.hostname(), ...(opts.mode ? { mode: opts.mode } : {}) },
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** Writes nothing: tests and one-shot commands that have no log. */
export const silentLog: Log = pino({ enabled: false });

/** Milliseconds since `start` (performance.now()), rounded for a log field. */
export function msSince(start: number): number {
  return Math.round(performance.now() - start);
}

/**
 * Fastify's per-request child logger, made only when the request logs something. A pino child
 * with redaction cost ~3% of a small answer (issue 20), and most requests never log. A class, so
 * each request costs one small object and no closures.
 */
class LazyChildLogger {
  #real: Log | undefined;
  constructor(
    private readonly parent: Log,
    private readonly bindings: Record<string, unknown>,
    private readonly opts: Record<string, unknown>,
  ) {}
  #get(): Log {
    return (this.#real ??= this.parent.child(this.bindings, this.opts));
  }
  get level() {
    return this.#real?.level ?? this.parent.level;
  }
  set level(v: string) {
    this.#get().level = v;
  }
  isLevelEnabled(level: string) {
    return (this.#real ?? this.parent).isLevelEnabled(level);
  }
  child(bindings: Record<string, unknown>, opts?: Record<string, unknown>) {
    return this.#get().child(bindings, opts);
  }
  silent() {}
  fatal(...args: unknown[]) {
    (this.#get().fatal as (...a: unknown[]) => void)(...args);
  }
  error(...args: unknown[]) {
    (this.#get().error as (...a: unknown[]) => void)(...args);
  }
  warn(...args: unknown[]) {
    (this.#get().warn as (...a: unknown[]) => void)(...args);
  }
  info(...args: unknown[]) {
    (this.#get().info as (...a: unknown[]) => void)(...args);
  }
  debug(...args: unknown[]) {
    (this.#get().debug as (...a: unknown[]) => void)(...args);
  }
  trace(...args: unknown[]) {
    (this.#get().trace as (...a: unknown[]) => void)(...args);
  }
}

export function lazyChildLogger(parent: Log, bindings: Record<string, unknown>, opts: Record<string, unknown>): Log {
  return new LazyChildLogger(parent, bindings, opts) as unknown as Log;
}
