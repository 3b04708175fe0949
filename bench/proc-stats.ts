/** What Linux says of a process and of the machine (/proc), for the benches' figures. */
import fs from 'node:fs';

const CLK_TCK = 100; // USER_HZ on Linux

const kb = (s: string, field: string) => Number(s.match(new RegExp(`^${field}:\\s*(\\d+) kB`, 'm'))?.[1] ?? 0) / 1024;

/** Resident memory now and its high-water mark, in MB. */
export function memOf(pid: number): { rssMb: number; hwmMb: number } {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rssMb: kb(s, 'VmRSS'), hwmMb: kb(s, 'VmHWM') };
}

/** User + system CPU seconds the process has used. */
export function cpuSecondsOf(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** All cores' busy and total ticks since boot (every column but idle and iowait is busy). */
export function machineTicks(): { busy: number; total: number } {
  const t = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = t.reduce((a, b) => a + b, 0);
  return { busy: total - t[3] - t[4], total };
}
