/**
 * The suite's one polling helper. Tests wait for something positive to become true (a row, a
 * counter, a log line, a message) and never for a fixed time; a wait that runs out says what it
 * waited for and what it saw last.
 */
import { inspect } from 'node:util';
import type { JobQueue, QueueCounts } from '../../src/infra/queue/types.ts';

export interface WaitOptions {
  /** Real time to wait before failing (default 20 s). */
  timeoutMs?: number;
  /** Real time between two probes (default 25 ms). */
  intervalMs?: number;
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Calls `probe` until it returns a truthy value and resolves with that value. A probe that throws
 * (an assertion not holding yet, a connection refused) is called again; on timeout the error names
 * `what` and the last value or error the probe gave.
 */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, opts: WaitOptions = {}): Promise<Truthy<T>> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const intervalMs = opts.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let last: { value: unknown } | { error: unknown };
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as Truthy<T>;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) {
      const seen = 'error' in last ? `last error: ${shown(last.error)}` : `last value: ${shown(last.value)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${seen}`, { cause: 'error' in last ? last.error : undefined });
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Waits until `name` has no job waiting, delayed or running and at least `finished` jobs completed
 * or failed: past that point no job of the queue can still do anything. Resolves with the counts.
 */
export function queueSettled(
  queue: Pick<JobQueue, 'counts'>,
  name: string,
  opts: WaitOptions & { finished?: number } = {},
): Promise<QueueCounts> {
  const finished = opts.finished ?? 1;
  return waitFor(
    `the ${name} queue to settle with ${finished} finished job(s)`,
    async () => {
      const c = await queue.counts(name);
      return c.waiting + c.delayed + c.active === 0 && c.completed + c.failed >= finished && c;
    },
    opts,
  );
}

function shown(v: unknown): string {
  if (v instanceof Error) return v.message;
  const s = inspect(v, { depth: 3, breakLength: Infinity });
  return s.length > 2000 ? `${s.slice(0, 2000)}…` : s;
}
