/**
 * GET /workers and GET /workers/jobs (spec §4 "Workers and system"), read from the workers'
 * reports in the key-value store (reporter.ts) and the queue's counts.
 *
 * Workers are deduplicated by IP: the processes seen on one address in the last 60 s are one
 * entry (a restarted worker, or several on one machine) with their counts summed, the id and
 * hostname of the one seen last, and `processes` saying how many there were.
 *
 * Hub admins see everything. A team admin sees the queue's counts and the workers' counts (the
 * queue is shared, its depth explains a team's waiting chunks), not their addresses and host
 * names (ip and hostname are null), and only the jobs of the teams they administer.
 */
import type { Kv } from '../../infra/kv/index.ts';
import type { JobQueue } from '../../infra/queue/index.ts';
import type { Clock } from '../../core/clock.ts';
import { INFERENCE_QUEUE } from '../../protocol/jobs.ts';
import { readWorkers as readAll, WORKER_TTL_SECONDS, type JobReport, type WorkerRecord } from './reporter.ts';

export interface WorkerView {
  id: string;
  ip: string | null;
  hostname: string | null;
  processes: number;
  jobsProcessed: number;
  jobsSucceeded: number;
  jobsFailed: number;
  avgDurationMs: number | null;
  lastSeen: string;
}

export function dedupeByIp(records: WorkerRecord[]): Array<Omit<WorkerView, 'ip' | 'hostname'> & { ip: string; hostname: string }> {
  const byIp = new Map<string, WorkerRecord[]>();
  for (const r of records) byIp.set(r.ip, [...(byIp.get(r.ip) ?? []), r]);
  return [...byIp.entries()]
    .map(([ip, rs]) => {
      const last = rs.reduce((a, b) => (b.lastSeen > a.lastSeen ? b : a));
      const sum = (k: 'jobsProcessed' | 'jobsSucceeded' | 'jobsFailed' | 'totalDurationMs') => rs.reduce((n, r) => n + r[k], 0);
      const processed = sum('jobsProcessed');
      return {
        id: last.id,
        ip,
        hostname: last.hostname,
        processes: rs.length,
        jobsProcessed: processed,
        jobsSucceeded: sum('jobsSucceeded'),
        jobsFailed: sum('jobsFailed'),
        avgDurationMs: processed ? Math.round((sum('totalDurationMs') / processed) * 10) / 10 : null,
        lastSeen: last.lastSeen,
      };
    })
    .sort((a, b) => a.ip.localeCompare(b.ip));
}

export function createWorkersService(deps: { kv: Kv; queue: Pick<JobQueue, 'counts'>; clock: Clock }) {
  // Redis expires entries on its own time; the hub clock decides (tests move it), as for every kv rule.
  const readWorkers = async (kv: Kv) => {
    const since = deps.clock.now().getTime() - WORKER_TTL_SECONDS * 1000;
    return (await readAll(kv)).filter((r) => Date.parse(r.lastSeen) > since);
  };
  return {
    /** `full`: hub admin view (addresses and host names). */
    async overview(full: boolean) {
      const [queue, records] = await Promise.all([deps.queue.counts(INFERENCE_QUEUE), readWorkers(deps.kv)]);
      const workers: WorkerView[] = dedupeByIp(records).map((w) => (full ? w : { ...w, ip: null, hostname: null }));
      return { queue, workers };
    },

    /** Recent finished jobs (completed or failed attempts), newest first; `tenantIds` null = every team. */
    async recentJobs(tenantIds: string[] | null, limit: number): Promise<{ jobs: Array<JobReport & { workerId: string }> }> {
      const records = await readWorkers(deps.kv);
      const allowed = tenantIds ? new Set(tenantIds) : null;
      const jobs = records
        .flatMap((r) => r.recentJobs.map((j) => ({ ...j, workerId: r.id })))
        .filter((j) => !allowed || allowed.has(j.tenantId))
        .sort((a, b) => (a.finishedAt < b.finishedAt ? 1 : a.finishedAt > b.finishedAt ? -1 : 0))
        .slice(0, limit);
      return { jobs };
    },
  };
}

export type WorkersService = ReturnType<typeof createWorkersService>;
