/**
 * Scheduled exports (issue 18): a cron expression in a time zone, the export's filters, and an
 * alert channel (email attachment or signed webhook POST). Each occurrence runs once however
 * many processes tick: the run claims it by moving next_run_at on from the due time it read.
 * A run covers what was detected since the previous run (the first run: one interval of the
 * schedule back, at most a week).
 */
import fsp from 'node:fs/promises';
import { Cron } from 'croner';
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { TeamActor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId } from '../../core/crypto.ts';
import { badRequest, conflict, notFound } from '../../core/errors.ts';
import { createExportsRepo, type ScheduledRow } from './repo.ts';
import type { ScheduledInput } from './schemas.ts';
import type { ExportKind } from './schemas.ts';
import type { ExportsService } from './service.ts';

/** A file up to this size travels with the message; a larger one is stored and linked. */
export const ATTACH_MAX_BYTES = 5 * 1024 * 1024;
const FIRST_WINDOW_MAX_MS = 7 * 86_400_000;
/** A run still marked running after this long was left by a stopped process: "Run now" may start another. */
const RUN_STALE_MS = 15 * 60_000;

const KIND_OF: Record<ScheduledRow['format'], ExportKind> = {
  csv: 'csv',
  json: 'json',
  checklist: 'checklist',
  observation: 'inaturalist',
};

export interface FileSender {
  send(
    tenantId: string,
    channelId: string,
    file: {
      name: string;
      format: string;
      filename: string;
      contentType: string;
      rows: number;
      content: Buffer | null;
      link: string | null;
    },
  ): Promise<{ delivered: boolean; status: number | null; error: string | null }>;
  channelType(tenantId: string, channelId: string): Promise<string | null>;
}

/** The next occurrence after `after`, or the reason the expression is refused. */
export function nextRun(schedule: string, timeZone: string, after: Date): Date | null {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 5) throw new Error('use five fields: minute hour day-of-month month day-of-week');
  const cron = new Cron(schedule, { timezone: timeZone, paused: true });
  return cron.nextRun(after);
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
export const presentScheduled = (r: ScheduledRow) => ({
  id: r.id,
  tenantId: r.tenantId,
  name: r.name,
  format: r.format,
  schedule: r.schedule,
  timeZone: r.timeZone,
  filters: r.filters,
  channelId: r.channelId,
  enabled: r.enabled,
  nextRunAt: iso(r.nextRunAt),
  lastRunAt: iso(r.lastRunAt),
  lastStatus: r.lastStatus,
  lastError: r.lastError,
  lastRows: r.lastRows,
  createdAt: iso(r.createdAt)!,
  updatedAt: iso(r.updatedAt)!,
});

export function createScheduledExports(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  exports: Pick<ExportsService, 'toFile' | 'startJobFromFile'>;
  files: FileSender;
  teamTimeZone: (tenantId: string) => Promise<string>;
  publicUrl: string;
}) {
  const { db, clock, audit } = deps;
  const repo = createExportsRepo(db);

  async function save(actor: TeamActor, existing: ScheduledRow | null, input: ScheduledInput) {
    const tenantId = actor.teamId;
    const timeZone = input.timeZone ?? existing?.timeZone ?? (await deps.teamTimeZone(tenantId));
    if (!Intl.supportedValuesOf('timeZone').includes(timeZone) && timeZone !== 'UTC')
      throw badRequest(`Unknown time zone ${timeZone}`, 'INVALID_SCHEDULE');
    const now = clock.now();
    let next: Date | null;
    try {
      next = nextRun(input.schedule, timeZone, now);
    } catch (err) {
      throw badRequest(`schedule: ${err instanceof Error ? err.message : String(err)}`, 'INVALID_SCHEDULE');
    }
    if (!next) throw badRequest('schedule: the expression never fires', 'INVALID_SCHEDULE');
    const type = await deps.files.channelType(tenantId, input.channelId);
    if (!type) throw badRequest('channelId names a channel the team does not have', 'UNKNOWN_CHANNEL');
    if (type !== 'email' && type !== 'webhook')
      throw badRequest(`A ${type} channel cannot carry a file: use an email or webhook channel`, 'CHANNEL_CANNOT_CARRY_FILES');
    const row: ScheduledRow = {
      id: existing?.id ?? newId(),
      tenantId,
      name: input.name,
      format: input.format,
      schedule: input.schedule.trim(),
      timeZone,
      filters: input.filters ?? {},
      channelId: input.channelId,
      enabled: input.enabled ?? true,
      nextRunAt: next,
      lastRunAt: existing?.lastRunAt ?? null,
      lastStatus: existing?.lastStatus ?? null,
      lastError: existing?.lastError ?? null,
      lastRows: existing?.lastRows ?? null,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await db.tx(async (tx) => {
      await repo.saveScheduled(tx, { ...row, createdBy: actor.userId });
      await audit.write(tx, actor, {
        action: existing ? 'admin.scheduled_export_updated' : 'admin.scheduled_export_created',
        tenantId,
        targetType: 'scheduled_export',
        targetId: row.id,
        details: { name: row.name, format: row.format, schedule: row.schedule, timeZone },
      });
    });
    return presentScheduled(row);
  }

  /** Where a run's window starts: the last run, or one interval of the schedule back (a daily export starts with the day before). */
  function windowStart(s: ScheduledRow, due: Date): Date {
    const interval = (nextRun(s.schedule, s.timeZone, due)?.getTime() ?? due.getTime()) - due.getTime();
    return s.lastRunAt ? new Date(s.lastRunAt) : new Date(due.getTime() - Math.min(Math.max(interval, 60_000), FIRST_WINDOW_MAX_MS));
  }

  /** One occurrence: the file for the window since the last run, through the channel. */
  async function run(s: ScheduledRow, due: Date) {
    const since = windowStart(s, due);
    const now = clock.now();
    if (!(await repo.claim(s.id, due, nextRun(s.schedule, s.timeZone, now), now))) return false;
    await deliver(s, since, now);
    return true;
  }

  /** Renders the window [since, now) and sends it through the channel; the outcome is recorded on the row. */
  async function deliver(s: ScheduledRow, since: Date, now: Date) {
    let rows = 0;
    try {
      const req = {
        kind: KIND_OF[s.format],
        filters: { ...s.filters, start: since.toISOString(), end: now.toISOString() },
        options: {},
      };
      // It leaves the team through a channel: sensitive species generalised (issue 20).
      const out = await deps.exports.toFile(s.tenantId, req, () => {}, 'outside');
      rows = out.rows;
      let content: Buffer | null = null;
      let link: string | null = null;
      try {
        if (out.size <= ATTACH_MAX_BYTES) content = await fsp.readFile(out.file);
        else link = `${deps.publicUrl}${(await deps.exports.startJobFromFile(s.tenantId, req, out)).downloadUrl}`;
      } finally {
        await fsp.rm(out.file, { force: true });
      }
      if (!s.channelId) throw new Error('the channel was deleted');
      const sent = await deps.files.send(s.tenantId, s.channelId, {
        name: s.name,
        format: s.format,
        filename: out.filename,
        contentType: out.contentType,
        rows,
        content,
        link,
      });
      await repo.recordRun(s.id, { status: sent.delivered ? 'delivered' : 'failed', error: sent.error, rows });
    } catch (err) {
      await repo.recordRun(s.id, { status: 'failed', error: err instanceof Error ? err.message : String(err), rows });
    }
  }

  return {
    list: async (tenantId: string) => (await repo.listScheduled(tenantId)).map(presentScheduled),
    create: (actor: TeamActor, input: ScheduledInput) => save(actor, null, input),
    async update(actor: TeamActor, id: string, input: ScheduledInput) {
      const existing = await repo.findScheduled(actor.teamId, id);
      if (!existing) throw notFound('No such scheduled export');
      return save(actor, existing, input);
    },
    async remove(actor: TeamActor, id: string) {
      const tenantId = actor.teamId;
      const removed = await db.tx(async (tx) => {
        if (!(await repo.deleteScheduled(tx, tenantId, id))) return false;
        await audit.write(tx, actor, { action: 'admin.scheduled_export_deleted', tenantId, targetType: 'scheduled_export', targetId: id });
        return true;
      });
      if (!removed) throw notFound('No such scheduled export');
    },
    /**
     * "Run now" (issue 36 point 6): the window since the last run, sent at once; the next scheduled
     * run stays where it was and starts its window here, so no row is sent twice. Audited: the file
     * leaves the team.
     */
    async runNow(actor: TeamActor, id: string) {
      const s = await repo.findScheduled(actor.teamId, id);
      if (!s) throw notFound('No such scheduled export');
      if (!s.channelId) throw badRequest('The channel of this export was deleted: choose another one first', 'VALIDATION_FAILED');
      const now = clock.now();
      const since = windowStart(s, now);
      const claimed = await db.tx(async (tx) => {
        if (!(await repo.claimNow(tx, actor.teamId, id, now, new Date(now.getTime() - RUN_STALE_MS)))) return false;
        await audit.write(tx, actor, {
          action: 'admin.scheduled_export_run',
          tenantId: actor.teamId,
          targetType: 'scheduled_export',
          targetId: id,
          details: { name: s.name, format: s.format, since: since.toISOString() },
        });
        return true;
      });
      if (!claimed) throw conflict('a run of this export is under way');
      await deliver(s, since, now);
      return presentScheduled((await repo.findScheduled(actor.teamId, id)) ?? s);
    },
    /** Runs every occurrence due by now; returns how many this process ran. */
    async tick() {
      let ran = 0;
      for (const s of await repo.due(clock.now())) if (s.nextRunAt && (await run(s, new Date(s.nextRunAt)))) ran++;
      return ran;
    },
    teamOfScheduled: repo.teamOfScheduled,
  };
}

export type ScheduledExports = ReturnType<typeof createScheduledExports>;
