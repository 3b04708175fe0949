/**
 * Named crash points for the crash-recovery tests: `CHORUS_FAILPOINT=<name>` makes the process die
 * (SIGKILL, no cleanup, as a power cut or the OOM killer would) when it reaches that point.
 * `CHORUS_FAILPOINT=<name>:hold` holds the work there for ever and `<name>:sleep=MS` for MS
 * milliseconds (a job caught mid-run, for a test to kill or to stop with SIGTERM).
 * Unset in every real deployment; reading one variable per point costs nothing measurable.
 */
const [armed = '', action = 'kill'] = (process.env.CHORUS_FAILPOINT ?? '').split(':');

export type Failpoint = 'ingest.after-object' | 'inference.before-record';

export function failpoint(name: Failpoint): void {
  if (armed === name && action === 'kill') process.kill(process.pid, 'SIGKILL');
}

/** Where a point may also hold: resolves at once unless armed; `onHold` runs before the wait (the test waits for its log line). */
export async function holdpoint(name: Failpoint, onHold: () => void): Promise<void> {
  if (armed !== name) return;
  if (action === 'kill') process.kill(process.pid, 'SIGKILL');
  onHold();
  const ms = action === 'hold' ? 2 ** 31 - 1 : Number(/^sleep=(\d+)$/.exec(action)?.[1] ?? 0);
  await new Promise((r) => setTimeout(r, ms));
}
