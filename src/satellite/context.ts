/**
 * What the parts of a satellite share: who it is, its options, its outbox, journal and events,
 * and the public state the Satellite exposes. Each field of that state is written by one part
 * only (noted beside it); the others read it.
 */
import type { SatelliteConfig } from './config.ts';
import type { LogLevel } from './journal.ts';
import type { ResolvedOptions } from './options.ts';
import type { Outbox } from './outbox.ts';

export type SatelliteState = 'recording' | 'paused' | 'scheduled_off' | 'error';

/** The Satellite's public state. */
export interface SatelliteStatus {
  /** Written by the config applier. */
  config: SatelliteConfig;
  /** Written by the recorder. */
  state: SatelliteState;
  /** Written by the connection. */
  connected: boolean;
  /** Written by the recorder. */
  sourceEnded: boolean;
  /** Written by the uploader. */
  ackedCount: number;
  /** Written by the recorder. */
  recordedCount: number;
  /** Written by the uploader. */
  errorAcks: Array<{ chunkId: string; error: string }>;
}

export interface SatelliteContext {
  readonly id: string;
  readonly tenantId: string;
  readonly options: ResolvedOptions;
  readonly outbox: Outbox;
  readonly status: SatelliteStatus;
  now(): Date;
  /** True before start() and from stop() on. */
  isStopped(): boolean;
  /** Writes to the journal. */
  log(level: LogLevel, message: string): void;
  /** Emits one of the Satellite's events. */
  emit(event: string, ...args: unknown[]): void;
  /** This satellite's topic of a channel. */
  topic(channel: string): string;
  /** A file in the data dir (only when options.dataDir is set). */
  file(name: string): string;
}
