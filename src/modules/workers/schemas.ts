import { Type } from 'typebox';
import { Nullable, Open } from '../../core/schemas.ts';

/** The inference queue and its workers as the service shows them: response schemas for the generated client. */

export const QueueCountsView = Open({
  waiting: Type.Integer(),
  active: Type.Integer(),
  completed: Type.Integer(),
  failed: Type.Integer(),
  delayed: Type.Integer(),
});

export const WorkerView = Open({
  id: Type.String(),
  ip: Nullable(Type.String()),
  hostname: Nullable(Type.String()),
  processes: Type.Integer(),
  jobsProcessed: Type.Integer(),
  jobsSucceeded: Type.Integer(),
  jobsFailed: Type.Integer(),
  avgDurationMs: Nullable(Type.Number()),
  lastSeen: Type.String(),
});

export const WorkersOverview = Open({ queue: QueueCountsView, workers: Type.Array(WorkerView) });

/** reporter.ts JobReport and the worker that ran it. */
export const JobReportView = Open({
  workerId: Type.String(),
  jobId: Type.String(),
  chunkId: Type.String(),
  tenantId: Type.String(),
  attempt: Type.Integer(),
  status: Type.String(),
  durationMs: Type.Number(),
  detections: Type.Integer(),
  modelId: Nullable(Type.String()),
  finishedAt: Type.String(),
  error: Nullable(Type.String()),
});

export const RecentJobs = Open({ jobs: Type.Array(JobReportView) });
