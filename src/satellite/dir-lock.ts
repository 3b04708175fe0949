/**
 * One satellite process per data dir (issue 32): two on one dir share its credentials, so each
 * knocks the other off the broker every second (and the hub writes an audit entry each time). The
 * second refuses to start, naming the first's process id. A lock left by a process that is gone
 * (killed, the board's power cut) is taken over.
 */
import os from 'node:os';
import path from 'node:path';
import { takePidLock, type PidNote } from '../platform/pid-lock.ts';

export const SATELLITE_LOCK_FILE = 'satellite.lock';

export class SatelliteDirInUse extends Error {}

/** Holds `<dataDir>/satellite.lock` until the returned release (or the process's exit). */
export function lockSatelliteDir(dataDir: string): () => void {
  const file = path.join(dataDir, SATELLITE_LOCK_FILE);
  const note: PidNote = { pid: process.pid, hostname: os.hostname(), since: new Date().toISOString() };
  return takePidLock(file, note, (holder, aliveHere) => {
    if (aliveHere) {
      throw new SatelliteDirInUse(
        `another satellite (process ${holder.pid}, since ${holder.since}) uses the data dir ${dataDir}; stop it first, or give this one its own --data`,
      );
    }
  });
}
