/**
 * The satellite's time: the hour it stamps on what it sends, and the timers its recording,
 * heartbeats, telemetry, upload retries, reconnects and live sessions run on. It is injected, so
 * tests move time instead of sleeping; the hub's ManualClock is one.
 */
export interface SatelliteClock {
  now(): Date;
  /** Calls `fn` once `ms` have passed on this clock. Returns the cancel (a no-op once `fn` ran). */
  after(ms: number, fn: () => void): () => void;
}

/** Real time. */
export const systemClock: SatelliteClock = {
  now: () => new Date(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};
