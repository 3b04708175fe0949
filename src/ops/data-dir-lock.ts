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
import { takePidLock, type PidNote } from '../platform/pid-lock.ts';

export const LOCK_FILE = 'chorus.lock';

export interface LockNote extends PidNote {
  purpose: string;
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
  const release = takePidLock(file, note, (holder, aliveHere) => {
    const h = holder as LockNote;
    if (aliveHere) {
      throw new DataDirInUse(
        `The data dir ${dataDir} is in use: chorus ${h.purpose} runs as process ${h.pid} (since ${h.since}). Stop it first.`,
        h,
      );
    }
    if (h.hostname !== note.hostname) {
      if (!opts.takeForeign) {
        throw new DataDirInUse(
          `The data dir ${dataDir} is marked in use by chorus ${h.purpose} on host ${h.hostname} (process ${h.pid}, since ${h.since}). ` +
            `If no hub runs there any more, run again with --force or delete ${file}.`,
          h,
        );
      }
      opts.onForeign?.(h);
    }
  });
  return { file, release };
}
