/** Every time-dependent rule reads this, so tests move time instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that follows real time plus an offset the tests can advance. */
export class ManualClock implements Clock {
  private offsetMs = 0;
  private frozenAt: number | null = null;

  now(): Date {
    const base = this.frozenAt ?? Date.now();
    return new Date(base + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  advanceMinutes(minutes: number): void {
    this.advance(minutes * 60_000);
  }

  freeze(at?: Date): void {
    this.offsetMs = 0;
    this.frozenAt = (at ?? new Date()).getTime();
  }
}

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}
