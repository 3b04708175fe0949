/**
 * Turns in the order jobs were taken. The worker runs several jobs at once so that one chunk's
 * database work moves while another's model runs (docs/model.md "At BirdNET's size"), but a
 * satellite's chunks must be recorded in the order they came: stitching joins a call to the
 * detection just before it, and the first of the day is the first recorded. Each job takes a
 * place when it starts; its turn comes once every earlier job has had its turn or given it up
 * (finished without recording, failed, or waiting for a later chunk).
 */
export interface Place {
  /** Resolves when every earlier place is done. */
  readonly turn: Promise<void>;
  /** This job has recorded, or will not: later places may go. Safe to call twice. */
  done(): void;
}

export function inOrder(): { take(): Place } {
  let last: Promise<unknown> = Promise.resolve();
  return {
    take() {
      const before = last;
      let done!: () => void;
      const mine = new Promise<void>((resolve) => (done = resolve));
      last = Promise.all([before, mine]);
      return { turn: before.then(() => undefined), done };
    },
  };
}
