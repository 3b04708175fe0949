/**
 * Named crash points for the crash-recovery tests: `CHORUS_FAILPOINT=<name>` makes the process die
 * (SIGKILL, no cleanup, as a power cut or the OOM killer would) when it reaches that point.
 * Unset in every real deployment; reading one variable per point costs nothing measurable.
 */
const armed = process.env.CHORUS_FAILPOINT ?? '';

export function failpoint(name: 'ingest.after-object'): void {
  if (armed === name) process.kill(process.pid, 'SIGKILL');
}
