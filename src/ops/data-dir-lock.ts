/**
 * Who uses a data dir with an embedded database. PGlite keeps no lock of its own, and two
 * processes opening one database folder corrupt it, so `chorus serve` (on embedded PGlite),
 * `chorus backup`, `chorus restore` and `chorus models` hold `${dataDir}/chorus.lock` while they run: a JSON note
 * of the process id, host and purpose, written exclusively and removed on exit.
 *
 * A lock whose process is gone (a hub killed with SIGKILL) is stale and taken over. A lock
 * written on another host (another container sharing the volume) cannot be checked from here:
 * the hub takes it over with a warning, so a restarted container never needs hand-work, while
 * backup and restore refuse unless forced, since reading a live database would be worse.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const LOCK_FILE = 'chorus.lock';

export interface LockNote {
  pid: number;
  hostname: string;
  purpose: string;
  since: string;
  /** A running hub that answers `chorus backup` itself (src/ops/online-backup.ts). */
  onlineBackup?: boolean;
}

export class DataDirInUse extends Error {
  constructor(
    message: string,
    readonly holder: LockNote,
  ) {
    super(message);
  }
}

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readNote(file: string): LockNote | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockNote;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // Half written or garbage: nobody can be named as its holder.
    return { pid: 0, hostname: os.hostname(), purpose: 'unknown', since: '' };
  }
}

export interface LockOptions {
  purpose: 'serve' | 'backup' | 'restore' | 'models';
  /** Take over a lock written on another host (the hub does, with `onForeign` told). */
  takeForeign?: boolean;
  onForeign?: (holder: LockNote) => void;
  /** Written into the note: the hub says it answers online backup requests. */
  onlineBackup?: boolean;
}

export function lockDataDir(dataDir: string, opts: LockOptions): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const note: LockNote = {
    pid: process.pid,
    hostname: os.hostname(),
    purpose: opts.purpose,
    since: new Date().toISOString(),
    ...(opts.onlineBackup ? { onlineBackup: true } : {}),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(note) + '\n', { flag: 'wx', mode: 0o644 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw e;
    }
    const holder = readNote(file);
    if (holder && holder.hostname === note.hostname && alive(holder.pid)) {
      throw new DataDirInUse(
        `The data dir ${dataDir} is in use: chorus ${holder.purpose} runs as process ${holder.pid} (since ${holder.since}). Stop it first.`,
        holder,
      );
    }
    if (holder && holder.hostname !== note.hostname) {
      if (!opts.takeForeign) {
        throw new DataDirInUse(
          `The data dir ${dataDir} is marked in use by chorus ${holder.purpose} on host ${holder.hostname} (process ${holder.pid}, since ${holder.since}). ` +
            `If no hub runs there any more, run again with --force or delete ${file}.`,
          holder,
        );
      }
      opts.onForeign?.(holder);
    }
    fs.rmSync(file, { force: true });
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    // Only our own note: a forced take-over by another process is not ours to remove.
    if (readNote(file)?.pid === note.pid) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return { file, release };
}
