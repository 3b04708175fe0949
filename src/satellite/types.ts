/**
 * What the parts of a satellite share: who it is, its options, its outbox, journal and events,
 * and the public state the Satellite exposes. Each field of that state is written by one part
 * only (noted beside it); the others read it. These shapes live apart from the parts that use
 * them, so no two parts import each other.
 */
import type { ScheduleWindow } from '../protocol/schedule.ts';
import type { SatelliteClock } from './clock.ts';
import type { ResolvedOptions } from './options.ts';
import type { Outbox } from './outbox.ts';

export interface RecordingProfile {
  type: string;
  schedule: ScheduleWindow[];
  sampleRate: number;
  chunkDurationMs: number;
  overlapMs: number;
  gain: number;
}

/** The config push body (satellite protocol §2), without the ids. */
export interface SatelliteConfig {
  recordingProfile: RecordingProfile;
  heartbeatIntervalSec: number;
  filterEnabled: boolean;
  filterMinRms: number;
  classifierMinBirdProb: number;
  excludedClassifierCategories: string[];
  outboxSoftSizeMb: number;
  outboxHardSizeMb: number;
  outboxMaxAgeHours: number;
  deviceInference: boolean;
}

export type LogLevel = 'info' | 'warn' | 'error';

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
  /** Every timer of the satellite runs on it. */
  readonly clock: SatelliteClock;
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
