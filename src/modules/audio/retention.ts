/**
 * Audio retention (issue 22): once a day, each team's chunks recorded more than its
 * `audio_retention_days` ago lose their audio object; the chunk row stays, marked
 * `audio_deleted_at`, so GET /audio/:chunkId answers 404 "no longer stored" and detections keep
 * their chunk id. Audio that people worked on is kept (docs/decisions.md "Audio retention").
 *
 * - Once across processes: a scheduled run claims its UTC day (unique index) and only one run is
 *   running at a time (unique index while running); the first tick of a day starts it.
 * - Bounded batches that resume: the run records its cursor (team, recorded_at, id) and counts
 *   after each batch and holds a lease; a run whose process stopped is taken over by the next
 *   tick once its lease ran out, and goes on from its cursor with the cutoffs fixed at its start.
 * - Objects are deleted BEFORE the rows are marked: a crash in between leaves a row pointing at
 *   nothing (the batch is redone, deleting a missing key is fine), never an orphan object.
 */
import crypto from 'node:crypto';
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import { type Actor, systemActor } from '../../core/actor.ts';
import type { AuditActor, AuditWriter } from '../audit/writer.ts';
import { newId } from '../../core/crypto.ts';
import { conflict } from '../../core/errors.ts';
import { createRetentionRepo, type RetentionRunRow, type RetentionTeam } from './retention-repo.ts';

export const RETENTION_BATCH = 500;
/** How long a process may work a run without recording progress before another may take it over. */
export const RETENTION_LEASE_MS = 5 * 60_000;

export interface RetentionOptions {
  /** Chunks per batch (default 500). */
  batchSize?: number;
  /** Tests: return after this many batches, leaving the run as a stopped process would. */
  maxBatches?: number;
}

class LostRun extends Error {}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
export const presentRun = (r: RetentionRunRow) => ({
  id: r.id,
  startedAt: iso(r.startedAt)!,
  finishedAt: iso(r.finishedAt),
  status: r.status,
  trigger: r.trigger,
  chunksRemoved: Number(r.chunksRemoved),
  bytesFreed: Number(r.bytesFreed),
  chunksKept: Number(r.chunksKept),
  error: r.error,
});
export type RetentionRun = ReturnType<typeof presentRun>;

export function createRetentionService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  storage: Pick<ObjectStorage, 'deleteMany'>;
  /** The team's `audio_retention_days` (0 or null: kept forever). */
  retentionDays: (tenantId: string) => Promise<number | null>;
  /** The hub switch `retention_enabled`. */
  enabled: () => Promise<boolean>;
}) {
  const { db, clock, audit, storage } = deps;
  const repo = createRetentionRepo(db);
  /** This service instance, as the owner of the runs it works. */
  const me = crypto.randomBytes(8).toString('hex');
  const working = new Set<string>();
  const inflight = new Set<Promise<unknown>>();
  const actors = new Map<string, AuditActor>();
  let stopping = false;
  let ticking = false;

  const leaseFrom = (now: Date) => new Date(now.getTime() + RETENTION_LEASE_MS);

  /** Teams with a retention, in id order, each with its cutoff from now. */
  async function teamsNow(now: Date): Promise<Record<string, RetentionTeam>> {
    const teams: Record<string, RetentionTeam> = {};
    for (const id of await repo.teamIds()) {
      const days = Number((await deps.retentionDays(id)) ?? 0);
      if (!(days > 0)) continue;
      teams[id] = { days, cutoff: new Date(now.getTime() - days * 86_400_000).toISOString(), removed: 0, bytes: 0, kept: 0 };
    }
    return teams;
  }

  async function begin(trigger: 'schedule' | 'manual', day: string | null, startedBy: string | null) {
    const now = clock.now();
    const teams = await teamsNow(now);
    return repo.insert({
      id: newId(),
      trigger,
      day,
      startedAt: now,
      startedBy,
      teams,
      cursorTenantId: Object.keys(teams).sort()[0] ?? null,
      owner: me,
      leaseUntil: leaseFrom(now),
    });
  }

  /** Who the audit entry names: the hub admin who pressed "Run now", else the hub itself. */
  function auditActor(run: RetentionRunRow): AuditActor {
    const known = actors.get(run.id);
    if (known) return known;
    if (run.startedBy) {
      // Taken over from another process: the admin who started it, without their request's address.
      return { kind: 'session', userId: run.startedBy, apiKeyId: null, email: null, ip: '', teamId: null, declaredAudit: null };
    }
    return systemActor(['admin.retention_run']);
  }

  async function end(run: RetentionRunRow, status: 'finished' | 'failed', error: string | null) {
    return db.tx(async (tx) => {
      const done = await repo.finish(tx, run.id, me, status, error, clock.now());
      if (!done) return null;
      await audit.write(tx, auditActor(run), {
        action: 'admin.retention_run',
        tenantId: null,
        targetType: 'retention_run',
        targetId: run.id,
        details: {
          trigger: run.trigger,
          status,
          chunksRemoved: Number(done.chunksRemoved),
          bytesFreed: Number(done.bytesFreed),
          chunksKept: Number(done.chunksKept),
          teams: done.teams,
          ...(error ? { error } : {}),
        },
      });
      return done;
    });
  }

  /** Works a run this process holds from its cursor to the end (or until told to stop). */
  async function work(start: RetentionRunRow, opts: RetentionOptions): Promise<RetentionRunRow> {
    const batchSize = opts.batchSize ?? RETENTION_BATCH;
    working.add(start.id);
    const teams: Record<string, RetentionTeam> = structuredClone(start.teams);
    const order = Object.keys(teams).sort();
    let cursor = {
      tenantId: start.cursorTenantId,
      after:
        start.cursorRecordedAt && start.cursorChunkId ? { recordedAt: new Date(start.cursorRecordedAt), id: start.cursorChunkId } : null,
    };
    let batches = 0;
    try {
      while (cursor.tenantId) {
        if (stopping) {
          await repo.release(start.id, me, clock.now());
          return start;
        }
        if (opts.maxBatches !== undefined && batches >= opts.maxBatches) return start;
        const tenantId = cursor.tenantId;
        const team = teams[tenantId];
        const rows = team ? await repo.batch(tenantId, new Date(team.cutoff), cursor.after, batchSize) : [];
        const gone = rows.filter((r) => !r.keep);
        // Objects first: a crash before the rows are marked redoes this batch.
        if (gone.length > 0) await storage.deleteMany(gone.map((r) => r.storageKey));
        const last = rows.at(-1);
        const next =
          last && rows.length === batchSize
            ? { tenantId, after: { recordedAt: new Date(last.recordedAt), id: last.id } }
            : { tenantId: order[order.indexOf(tenantId) + 1] ?? null, after: null };
        await db.tx(async (tx) => {
          const marked = await repo.markGone(
            tx,
            tenantId,
            gone.map((r) => r.id),
            clock.now(),
          );
          if (team) {
            team.removed += marked.length;
            team.bytes += marked.reduce((n, r) => n + Number(r.bytes), 0);
            team.kept += rows.length - gone.length;
          }
          const held = await repo.progress(tx, start.id, me, {
            teams,
            cursorTenantId: next.tenantId,
            cursorRecordedAt: next.after?.recordedAt ?? null,
            cursorChunkId: next.after?.id ?? null,
            leaseUntil: leaseFrom(clock.now()),
          });
          if (!held) throw new LostRun();
        });
        cursor = next;
        batches++;
      }
      return (await end(start, 'finished', null)) ?? start;
    } catch (err) {
      if (err instanceof LostRun) return start;
      return (await end(start, 'failed', err instanceof Error ? err.message : String(err))) ?? start;
    } finally {
      working.delete(start.id);
      actors.delete(start.id);
    }
  }

  function track<T>(p: Promise<T>): Promise<T> {
    inflight.add(p);
    void p.finally(() => inflight.delete(p)).catch(() => {});
    return p;
  }

  return {
    /**
     * The once-a-minute timer: goes on with a run whose process stopped, else starts the day's
     * scheduled run (UTC day) unless claimed. Answers the run this call worked, or null.
     */
    async tick(opts: RetentionOptions = {}): Promise<RetentionRun | null> {
      if (ticking || stopping) return null;
      ticking = true;
      try {
        if (!(await deps.enabled())) return null;
        const now = clock.now();
        const running = await repo.running();
        if (running) {
          if (working.has(running.id) || (running.leaseUntil && new Date(running.leaseUntil) > now)) return null;
          const mine = await repo.takeOver(running.id, me, now, leaseFrom(now));
          return mine ? presentRun(await track(work(mine, opts))) : null;
        }
        const day = now.toISOString().slice(0, 10);
        if (await repo.scheduledExists(day)) return null;
        const run = await begin('schedule', day, null);
        return run ? presentRun(await track(work(run, opts))) : null;
      } finally {
        ticking = false;
      }
    },

    /**
     * POST /admin/retention/run: starts a run now in the background (started) or answers the run
     * already going (not started). 409 while the hub switch retention_enabled is off.
     */
    async start(actor: Actor, opts: RetentionOptions = {}): Promise<{ run: RetentionRun; started: boolean }> {
      if (!(await deps.enabled())) throw conflict('Retention is switched off for this hub (retention_enabled)', 'RETENTION_DISABLED');
      const run = await begin('manual', null, actor.userId);
      if (!run) {
        const current = await repo.running();
        if (current) return { run: presentRun(current), started: false };
        throw conflict('A retention run is starting; try again', 'RETENTION_BUSY');
      }
      actors.set(run.id, actor);
      void track(work(run, opts)).catch(() => {});
      return { run: presentRun(run), started: true };
    },

    /** The last runs, newest first. */
    list: async (limit = 20) => (await repo.list(limit)).map(presentRun),

    /** Resolves once the runs this instance works have stopped (tests, shutdown). */
    async idle() {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },

    /** Stops after the current batch and hands the run back for another process to finish. */
    async stop() {
      stopping = true;
      await this.idle();
    },
  };
}

export type RetentionService = ReturnType<typeof createRetentionService>;
