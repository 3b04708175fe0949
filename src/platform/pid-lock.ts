/**
 * A folder's lock file naming the process that uses it: written exclusively (`wx`), removed on
 * release or exit. The hub's data dir (src/ops/data-dir-lock.ts) and the reference satellite's
 * data dir (src/satellite/dir-lock.ts) both hold one; each decides what to do about a holder.
 * Ground code: it imports nothing of ours, so the hub and the satellite may both use it.
 */
import fs from 'node:fs';
import os from 'node:os';

export interface PidNote {
  pid: number;
  hostname: string;
  since: string;
}

/** Whether a process of this host with that id runs (ours does not count: it is taking over). */
export function pidAlive(pid: number): boolean {
  if (pid === process.pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The note in `file`; null when there is none; a nobody when it cannot be read (half written, garbage). */
export function readPidNote<N extends PidNote>(file: string): N | PidNote | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as N;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return { pid: 0, hostname: os.hostname(), since: '' };
  }
}

/**
 * Writes `note` into `file` unless another holds it. `onHeld` sees the holder and whether it runs
 * on this host: it throws to refuse, or returns to take the lock over (a stale or foreign note).
 * Returns the release (also run at exit), which removes only our own note.
 */
export function takePidLock<N extends PidNote>(
  file: string,
  note: N,
  onHeld: (holder: N | PidNote, aliveHere: boolean) => void,
): () => void {
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(note) + '\n', { flag: 'wx', mode: 0o644 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw e;
    }
    const holder = readPidNote<N>(file);
    if (holder) onHeld(holder, holder.hostname === note.hostname && pidAlive(holder.pid));
    fs.rmSync(file, { force: true });
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    // Only our own note: a forced take-over by another process is not ours to remove.
    if (readPidNote(file)?.pid === note.pid) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return release;
}
