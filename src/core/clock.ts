/** Every time-dependent rule reads this, so tests move time instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

interface PendingTimer {
  due: number;
  fn: () => void;
  real: NodeJS.Timeout | null;
}

/**
 * A clock that follows real time plus an offset the tests can advance. Its timers (`after`, the
 * satellite's clock) run when the clock reaches them: as real time passes, unless frozen, or at
 * once when advance() or freeze() moves the clock past them, in the order they fall due.
 */
export class ManualClock implements Clock {
  private offsetMs = 0;
  private frozenAt: number | null = null;
  private readonly timers = new Set<PendingTimer>();

  now(): Date {
    const base = this.frozenAt ?? Date.now();
    return new Date(base + this.offsetMs);
  }

  /** Moves the clock on by `ms`, stopping at each timer on the way, so what a timer sets counts from when it ran. */
  advance(ms: number): void {
    let left = ms;
    for (;;) {
      const now = this.now().getTime();
      const next = this.firstDue(now + left);
      if (!next) break;
      const step = Math.max(0, next.due - now);
      this.offsetMs += step;
      left -= step;
      this.run(next);
    }
    this.offsetMs += left;
    this.rearm();
  }

  advanceMinutes(minutes: number): void {
    this.advance(minutes * 60_000);
  }

  freeze(at?: Date): void {
    this.offsetMs = 0;
    this.frozenAt = (at ?? new Date()).getTime();
    for (let next = this.firstDue(this.now().getTime()); next; next = this.firstDue(this.now().getTime())) this.run(next);
    this.rearm();
  }

  after(ms: number, fn: () => void): () => void {
    // At least 1 ms, as Node's own timers: a timer that sets itself again cannot hold the clock still.
    const timer: PendingTimer = { due: this.now().getTime() + Math.max(1, ms), fn, real: null };
    this.timers.add(timer);
    this.arm(timer);
    return () => this.cancel(timer);
  }

  /** The pending timer that falls due first, if it falls due by `until`. */
  private firstDue(until: number): PendingTimer | null {
    let first: PendingTimer | null = null;
    for (const t of this.timers) if (t.due <= until && (!first || t.due < first.due)) first = t;
    return first;
  }

  private run(timer: PendingTimer): void {
    this.cancel(timer);
    timer.fn();
  }

  /** The clock moved: each pending timer waits for the real time that is left until it falls due. */
  private rearm(): void {
    for (const t of this.timers) this.arm(t);
  }

  /** A real timer for when real time brings the clock to `due`; a frozen clock only gets there by advancing. */
  private arm(timer: PendingTimer): void {
    if (timer.real) clearTimeout(timer.real);
    timer.real = null;
    const wait = timer.due - this.now().getTime();
    if (this.frozenAt !== null && wait > 0) return;
    timer.real = setTimeout(() => this.run(timer), Math.max(0, wait));
  }

  private cancel(timer: PendingTimer): void {
    if (timer.real) clearTimeout(timer.real);
    timer.real = null;
    this.timers.delete(timer);
  }
}

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}
