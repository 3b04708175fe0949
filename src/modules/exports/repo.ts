import type { Db } from '../../infra/db/index.ts';

export interface ExportJobRow {
  id: string;
  tenantId: string;
  requestedBy: string | null;
  format: string;
  filters: Record<string, unknown>;
  status: 'queued' | 'running' | 'done' | 'failed';
  rowsDone: number;
  rowsTotal: number | null;
  storageKey: string | null;
  filename: string | null;
  contentType: string | null;
  bytes: number | null;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  expiresAt: Date;
}

export interface ScheduledRow {
  id: string;
  tenantId: string;
  name: string;
  format: 'csv' | 'json' | 'checklist' | 'observation';
  schedule: string;
  timeZone: string;
  filters: Record<string, unknown>;
  channelId: string | null;
  enabled: boolean;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  lastStatus: string | null;
  lastError: string | null;
  lastRows: number | null;
  createdAt: Date;
  updatedAt: Date;
}

const JOB = `id, tenant_id AS "tenantId", requested_by AS "requestedBy", format, filters, status, rows_done AS "rowsDone",
  rows_total AS "rowsTotal", storage_key AS "storageKey", filename, content_type AS "contentType", bytes::float8 AS bytes, error,
  created_at AS "createdAt", finished_at AS "finishedAt", expires_at AS "expiresAt"`;
const SCHEDULED = `id, tenant_id AS "tenantId", name, format, schedule, time_zone AS "timeZone", filters, channel_id AS "channelId",
  enabled, next_run_at AS "nextRunAt", last_run_at AS "lastRunAt", last_status AS "lastStatus", last_error AS "lastError",
  last_rows AS "lastRows", created_at AS "createdAt", updated_at AS "updatedAt"`;

export function createExportsRepo(db: Db) {
  return {
    // Background jobs
    insertJob: (
      j: Pick<ExportJobRow, 'id' | 'tenantId' | 'requestedBy' | 'format' | 'filters' | 'rowsTotal' | 'createdAt' | 'expiresAt'>,
    ) =>
      db.query(
        `INSERT INTO export_jobs (id, tenant_id, requested_by, format, filters, status, rows_total, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8)`,
        [j.id, j.tenantId, j.requestedBy, j.format, JSON.stringify(j.filters), j.rowsTotal, j.createdAt, j.expiresAt],
      ),
    findJob: (tenantId: string, id: string) =>
      db.maybeOne<ExportJobRow>(`SELECT ${JOB} FROM export_jobs WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    jobById: (id: string) => db.maybeOne<ExportJobRow>(`SELECT ${JOB} FROM export_jobs WHERE id = $1`, [id]),
    listJobs: (tenantId: string, limit: number) =>
      db.query<ExportJobRow>(`SELECT ${JOB} FROM export_jobs WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [
        tenantId,
        limit,
      ]),
    /** Takes a queued job; false when another process already did. */
    startJob: async (id: string) =>
      (await db.query(`UPDATE export_jobs SET status = 'running' WHERE id = $1 AND status = 'queued' RETURNING id`, [id])).length === 1,
    progress: (id: string, rowsDone: number) => db.query('UPDATE export_jobs SET rows_done = $2 WHERE id = $1', [id, rowsDone]),
    finishJob: (id: string, r: { storageKey: string; filename: string; contentType: string; bytes: number; rowsDone: number; at: Date }) =>
      db.query(
        `UPDATE export_jobs SET status = 'done', storage_key = $2, filename = $3, content_type = $4, bytes = $5, rows_done = $6, finished_at = $7
         WHERE id = $1`,
        [id, r.storageKey, r.filename, r.contentType, r.bytes, r.rowsDone, r.at],
      ),
    failJob: (id: string, error: string, at: Date) =>
      db.query(`UPDATE export_jobs SET status = 'failed', error = $2, finished_at = $3 WHERE id = $1`, [id, error, at]),
    expiredJobs: (now: Date) =>
      db.query<{ id: string; storageKey: string | null }>(
        `SELECT id, storage_key AS "storageKey" FROM export_jobs WHERE expires_at <= $1 LIMIT 200`,
        [now],
      ),
    deleteJobs: (ids: string[]) => db.query('DELETE FROM export_jobs WHERE id = ANY($1::uuid[])', [ids]),
    teamOfJob: async (id: string) =>
      (await db.maybeOne<{ t: string }>('SELECT tenant_id AS t FROM export_jobs WHERE id = $1', [id]))?.t ?? null,

    // Scheduled exports
    listScheduled: (tenantId: string) =>
      db.query<ScheduledRow>(`SELECT ${SCHEDULED} FROM scheduled_exports WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]),
    findScheduled: (tenantId: string, id: string) =>
      db.maybeOne<ScheduledRow>(`SELECT ${SCHEDULED} FROM scheduled_exports WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    saveScheduled: (tx: Db, r: ScheduledRow & { createdBy: string | null }) =>
      tx.query(
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
    deleteScheduled: (tx: Db, tenantId: string, id: string) =>
      tx.query<{ id: string }>('DELETE FROM scheduled_exports WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]),
    teamOfScheduled: async (id: string) =>
      (await db.maybeOne<{ t: string }>('SELECT tenant_id AS t FROM scheduled_exports WHERE id = $1', [id]))?.t ?? null,
    due: (now: Date) =>
      db.query<ScheduledRow>(
        `SELECT ${SCHEDULED} FROM scheduled_exports WHERE enabled AND next_run_at <= $1 ORDER BY next_run_at LIMIT 100`,
        [now],
      ),
    /** Claims one occurrence: only the process that still finds the due time moves it on. */
    claim: async (id: string, due: Date, next: Date | null, at: Date) =>
      (
        await db.query(
          `UPDATE scheduled_exports SET next_run_at = $3, last_run_at = $4, last_status = 'running' WHERE id = $1 AND next_run_at = $2 RETURNING id`,
          [id, due, next, at],
        )
      ).length === 1,
    recordRun: (id: string, r: { status: string; error: string | null; rows: number }) =>
      db.query('UPDATE scheduled_exports SET last_status = $2, last_error = $3, last_rows = $4 WHERE id = $1', [
        id,
        r.status,
        r.error,
        r.rows,
      ]),
  };
}

export type ExportsRepo = ReturnType<typeof createExportsRepo>;
