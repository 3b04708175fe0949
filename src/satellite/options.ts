/**
 * What a satellite is given: its credentials from registration and the knobs of the protocol
 * client, each with the default it takes when it is not given.
 */
import type { SoundClassifier } from './sound-filter.ts';
import { PACKAGE_VERSION } from '../protocol/version.ts';
import { CHUNK_DURATION_MS } from '../protocol/wav.ts';
import { systemClock, type SatelliteClock } from './clock.ts';
import type { Outbox, OutboxCaps } from './outbox.ts';
import type { ChunkSource } from './source-types.ts';

export interface SatelliteCredentials {
  satelliteId: string;
  tenantId: string;
  username: string;
  password: string;
  /** mqtt://host:port from the registration reply. */
  brokerUrl: string;
  /** ws://host:port/mqtt when the hub told it. */
  wsUrl?: string | null;
}

export interface SatelliteOptions {
  credentials: SatelliteCredentials;
  source: ChunkSource;
  outbox: Outbox;
  /** Dial this instead of the registration's address. */
  url?: string;
  /** tcp (brokerUrl, default) or ws (wsUrl). */
  transport?: 'tcp' | 'ws';
  /** Where the pushed config and the filter counters persist (and whose free space telemetry reports). */
  dataDir?: string;
  /** The time and the timers the satellite runs on (default: real time). */
  clock?: SatelliteClock;
  /** Receives every journal line (the CLI prints them). */
  logSink?: (line: string) => void;
  version?: string;
  latitude?: number | null;
  longitude?: number | null;
  /** Time between recorded chunks (default 3000 = real time). 0: only record() records. */
  chunkIntervalMs?: number;
  /** Overrides the pushed heartbeatIntervalSec (tests). */
  heartbeatIntervalMs?: number;
  telemetryIntervalMs?: number;
  reconnectMs?: number;
  maxReconnectMs?: number;
  ackTimeoutMs?: number;
  /** After a reconnect, until the hub is heard from: the first ack time-out (doubling up to ackTimeoutMs). */
  reconnectAckTimeoutMs?: number;
  maxInFlight?: number;
  /** Error acks a chunk may get before it is no longer retried (default 3). */
  maxErrorRetries?: number;
  /** Wait before a refused chunk is sent again (default 60 s; also retried on every reconnect). */
  errorRetryMs?: number;
  /**
   * A passing refusal ("send again later": the hub's database, storage or queue is away) never
   * counts toward giving up: the satellite waits, then offers the oldest chunk alone, the wait
   * doubling from `retryBaseMs` (default 2 s) up to `retryMaxMs` (default 5 min), each one
   * somewhere between half and all of it (jitter, so a fleet does not come back at one instant).
   */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** The jitter's random numbers in [0, 1) (tests). */
  random?: () => number;
  /** Stop recording after this many chunks went into the outbox (the CLI's --chunks). */
  recordLimit?: number;
  liveIntervalMs?: number;
  liveTimeoutMs?: number;
  /** Device limits: the outbox uses the smaller of these and the pushed caps. */
  localCaps?: Partial<OutboxCaps>;
  /** A sound classifier run before upload (sound-filter.ts); none: only the silence gate filters. */
  soundClassifier?: SoundClassifier;
}

const OPTION_DEFAULTS = {
  clock: systemClock,
  version: PACKAGE_VERSION,
  chunkIntervalMs: CHUNK_DURATION_MS,
  heartbeatIntervalMs: 0,
  telemetryIntervalMs: 60_000,
  reconnectMs: 1000,
  // Bounds how long after a broker restart the satellite comes back (issue 21: ingest flowing within 5 s).
  maxReconnectMs: 4000,
  ackTimeoutMs: 30_000,
  reconnectAckTimeoutMs: 2000,
  maxInFlight: 1,
  maxErrorRetries: 3,
  errorRetryMs: 60_000,
  retryBaseMs: 2000,
  retryMaxMs: 300_000,
  random: Math.random,
  recordLimit: Infinity,
  liveIntervalMs: CHUNK_DURATION_MS,
  liveTimeoutMs: 60_000,
};

export type ResolvedOptions = SatelliteOptions & typeof OPTION_DEFAULTS;

/** The given options over the defaults; one given as undefined (the CLI passes some) takes the default. */
export function resolveOptions(opts: SatelliteOptions): ResolvedOptions {
  const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as SatelliteOptions;
  return { ...OPTION_DEFAULTS, ...given };
}
