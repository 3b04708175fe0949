import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { EXPORT_KINDS, SCHEDULED_FORMATS, type ExportFilters, type ScheduledInput } from './schemas.ts';
import type { RenderOptions } from './render.ts';

/**
 * What a job keeps of its request (export_jobs.filters): the filters, and for a job that runs
 * here the render options and whether unconfirmed recordings are in (a scheduled export's file,
 * stored as a finished job, keeps the filters only), and whether it publishes its recordings (issue 34).
 */
export type JobFilters = ExportFilters & { options?: RenderOptions; includeUnverified?: boolean; publishAudio?: boolean };

const JOB = `id, tenant_id AS "tenantId", requested_by AS "requestedBy", format, filters, status, rows_done AS "rowsDone",
  rows_total AS "rowsTotal", storage_key AS "storageKey", filename, content_type AS "contentType", bytes::float8 AS bytes, error,
  created_at AS "createdAt", finished_at AS "finishedAt", expires_at AS "expiresAt"`;
export const ExportJobRow = shape({
  id: col.text(),
  tenantId: col.text(),
  requestedBy: col.nullable(col.text()),
  format: col.oneOf(EXPORT_KINDS),
  filters: col.json<JobFilters>(),
  status: col.oneOf(['queued', 'running', 'done', 'failed'] as const),
  rowsDone: col.int(),
  rowsTotal: col.nullable(col.int()),
  storageKey: col.nullable(col.text()),
  filename: col.nullable(col.text()),
  contentType: col.nullable(col.text()),
  bytes: col.nullable(col.num()),
  error: col.nullable(col.text()),
  createdAt: col.date(),
  finishedAt: col.nullable(col.date()),
  expiresAt: col.date(),
});
export type ExportJobRow = RowOf<typeof ExportJobRow>;

/** A scheduled export's filters (scheduled_exports.filters): those of ScheduledInput, no window. */
export type ScheduledFilters = NonNullable<ScheduledInput['filters']>;

const SCHEDULED = `id, tenant_id AS "tenantId", name, format, schedule, time_zone AS "timeZone", filters, channel_id AS "channelId",
  enabled, next_run_at AS "nextRunAt", last_run_at AS "lastRunAt", last_status AS "lastStatus", last_error AS "lastError",
  last_rows AS "lastRows", created_at AS "createdAt", updated_at AS "updatedAt"`;
export const ScheduledRow = shape({
  id: col.text(),
  tenantId: col.text(),
  name: col.text(),
  format: col.oneOf(SCHEDULED_FORMATS),
  schedule: col.text(),
  timeZone: col.text(),
  filters: col.json<ScheduledFilters>(),
  channelId: col.nullable(col.text()),
  enabled: col.bool(),
  nextRunAt: col.nullable(col.date()),
  lastRunAt: col.nullable(col.date()),
  lastStatus: col.nullable(col.text()),
  lastError: col.nullable(col.text()),
  lastRows: col.nullable(col.int()),
  createdAt: col.date(),
  updatedAt: col.date(),
});
export type ScheduledRow = RowOf<typeof ScheduledRow>;

const ExpiredJob = shape({ id: col.text(), storageKey: col.nullable(col.text()) });
const TeamOf = shape({ t: col.text() });

export function createExportsRepo(db: Db) {
  return {
    // Background jobs
    insertJob: (
      j: Pick<ExportJobRow, 'id' | 'tenantId' | 'requestedBy' | 'format' | 'filters' | 'rowsTotal' | 'createdAt' | 'expiresAt'>,
    ) =>
      db.run(
        `INSERT INTO export_jobs (id, tenant_id, requested_by, format, filters, status, rows_total, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8)`,
        [j.id, j.tenantId, j.requestedBy, j.format, JSON.stringify(j.filters), j.rowsTotal, j.createdAt, j.expiresAt],
      ),
    findJob: (tenantId: string, id: string) =>
      db.maybeOne(ExportJobRow, `SELECT ${JOB} FROM export_jobs WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    jobById: (id: string) => db.maybeOne(ExportJobRow, `SELECT ${JOB} FROM export_jobs WHERE id = $1`, [id]),
    listJobs: (tenantId: string, limit: number) =>
      db.query(ExportJobRow, `SELECT ${JOB} FROM export_jobs WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [
        tenantId,
        limit,
      ]),
    /** Takes a queued job; false when another process already did. */
    startJob: async (id: string) =>
      (await db.run(`UPDATE export_jobs SET status = 'running' WHERE id = $1 AND status = 'queued'`, [id])) === 1,
    progress: (id: string, rowsDone: number) => db.run('UPDATE export_jobs SET rows_done = $2 WHERE id = $1', [id, rowsDone]),
    finishJob: (id: string, r: { storageKey: string; filename: string; contentType: string; bytes: number; rowsDone: number; at: Date }) =>
      db.run(
        `UPDATE export_jobs SET status = 'done', storage_key = $2, filename = $3, content_type = $4, bytes = $5, rows_done = $6, finished_at = $7
         WHERE id = $1`,
        [id, r.storageKey, r.filename, r.contentType, r.bytes, r.rowsDone, r.at],
      ),
    failJob: (id: string, error: string, at: Date) =>
      db.run(`UPDATE export_jobs SET status = 'failed', error = $2, finished_at = $3 WHERE id = $1`, [id, error, at]),
    expiredJobs: (now: Date) =>
      db.query(ExpiredJob, `SELECT id, storage_key AS "storageKey" FROM export_jobs WHERE expires_at <= $1 LIMIT 200`, [now]),
    deleteJobs: (ids: string[]) => db.run('DELETE FROM export_jobs WHERE id = ANY($1::uuid[])', [ids]),
    teamOfJob: async (id: string) => (await db.maybeOne(TeamOf, 'SELECT tenant_id AS t FROM export_jobs WHERE id = $1', [id]))?.t ?? null,

    // Scheduled exports
    listScheduled: (tenantId: string) =>
      db.query(ScheduledRow, `SELECT ${SCHEDULED} FROM scheduled_exports WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]),
    findScheduled: (tenantId: string, id: string) =>
      db.maybeOne(ScheduledRow, `SELECT ${SCHEDULED} FROM scheduled_exports WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    saveScheduled: (tx: Db, r: ScheduledRow & { createdBy: string | null }) =>
      tx.run(
        `INSERT INTO scheduled_exports (id, tenant_id, name, format, schedule, time_zone, filters, channel_id, enabled, next_run_at, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (id) DO UPDATE SET name = $3, format = $4, schedule = $5, time_zone = $6, filters = $7, channel_id = $8, enabled = $9,
           next_run_at = $10, updated_at = $13`,
        [
          r.id,
          r.tenantId,
          r.name,
          r.format,
          r.schedule,
          r.timeZone,
          JSON.stringify(r.filters),
          r.channelId,
          r.enabled,
          r.nextRunAt,
          r.createdBy,
          r.createdAt,
          r.updatedAt,
        ],
      ),
    /** Whether it was there. */
    deleteScheduled: async (tx: Db, tenantId: string, id: string) =>
      (await tx.run('DELETE FROM scheduled_exports WHERE tenant_id = $1 AND id = $2', [tenantId, id])) > 0,
    teamOfScheduled: async (id: string) =>
      (await db.maybeOne(TeamOf, 'SELECT tenant_id AS t FROM scheduled_exports WHERE id = $1', [id]))?.t ?? null,
    due: (now: Date) =>
      db.query(
        ScheduledRow,
        `SELECT ${SCHEDULED} FROM scheduled_exports WHERE enabled AND next_run_at <= $1 ORDER BY next_run_at LIMIT 100`,
        [now],
      ),
    /** Claims one occurrence: only the process that still finds the due time moves it on. */
    claim: async (id: string, due: Date, next: Date | null, at: Date) =>
      (await db.run(
        `UPDATE scheduled_exports SET next_run_at = $3, last_run_at = $4, last_status = 'running' WHERE id = $1 AND next_run_at = $2`,
        [id, due, next, at],
      )) === 1,
    /**
     * Claims a run asked for now ("Run now"), leaving the schedule's next run as it is: refused while
     * a run of the same export is under way, unless that one started before `staleBefore` (a
     * process that stopped mid-run never blocks it for good).
     */
    claimNow: async (tx: Db, tenantId: string, id: string, at: Date, staleBefore: Date) =>
      (await tx.run(
        `UPDATE scheduled_exports SET last_run_at = $3, last_status = 'running'
          WHERE tenant_id = $1 AND id = $2 AND (last_status IS DISTINCT FROM 'running' OR last_run_at < $4)`,
        [tenantId, id, at, staleBefore],
      )) === 1,
    recordRun: (id: string, r: { status: string; error: string | null; rows: number }) =>
      db.run('UPDATE scheduled_exports SET last_status = $2, last_error = $3, last_rows = $4 WHERE id = $1', [
        id,
        r.status,
        r.error,
        r.rows,
      ]),
  };
}

export type ExportsRepo = ReturnType<typeof createExportsRepo>;
