/**
 * Exports (issue 18): the rows the Detections page lists under the caller's filters, written in
 * the format asked for and streamed (memory holds one batch), or, for large recording archives
 * and on request, written by a background job to object storage and downloaded from there.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Db } from '../../infra/db/index.ts';
import type { JobQueue } from '../../infra/queue/types.ts';
import type { ObjectStorage } from '../../infra/storage/types.ts';
import type { Clock } from '../../core/clock.ts';
import type { TeamActor } from '../../core/actor.ts';
import { newId } from '../../core/crypto.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import type { DetectionsService } from '../detections/service.ts';
import { createExportsRepo, type ExportJobRow } from './repo.ts';
import type { Audience, ExportContext, RowSource } from './types.ts';
import type { ExportFilters, ExportKind } from './schemas.ts';
import { renderExport, renderLines, skippedOf, type RenderOptions } from './render.ts';
import type { CurveBucket } from './formats/lines-sql.ts';
import { createLineFiles } from './line-files.ts';
import { MAX_CALL_CHUNKS } from './formats/xenocanto.ts';
import { generalised } from './generalise.ts';
import type { PublishedAudio } from '../published-audio/service.ts';
import type { AuditActor } from '../audit/writer.ts';
import { findSetting } from '../settings/registry.ts';
import { GBIF_LICENSE_WARNING, gbifLicenseWarning, licenseOf, type PublicationLicenseId } from './licenses.ts';

export const EXPORT_QUEUE = 'export';
/** Recording archives carry audio: past this many recordings they run as a background job. */
export const RECORDINGS_INLINE_MAX = 300;
/** A background export's file is kept this long. */
export const JOB_TTL_MS = 24 * 3600_000;
export const REPORT_DEFAULT_DAYS = 30;

export interface ExportRequest {
  kind: ExportKind;
  filters: ExportFilters;
  options: RenderOptions;
  /** Recording archives: confirmed detections only unless asked. */
  includeUnverified?: boolean;
  /** Publish the recordings the file names as public links (issue 34 item 4; team setting publish_audio too). */
  publishAudio?: boolean;
}

export type { Audience };

/**
 * The formats whose media URL importers fetch without signing in (Darwin Core multimedia,
 * iNaturalist, xeno-canto): they carry a recording's public link when the export published it,
 * else nothing; never the team's /api/audio link, which answers 401 outside (issue 34 item 4).
 */
export const MEDIA_KINDS: ReadonlySet<ExportKind> = new Set(['inaturalist', 'dwca', 'recording']);

/** Statuses of rows no one has confirmed (a submission file sends them unreviewed). */
const UNREVIEWED = ['unverified', 'pending_review'] as const;

/**
 * The formats made to be submitted elsewhere (eBird, iNaturalist, GBIF, xeno-canto): whoever
 * downloads them, they leave the team, so sensitive species are generalised in them (issue 33).
 * The team's own CSV, JSON and PDF keep every row as it is unless a schedule sends them out.
 */
export const SUBMISSION_KINDS: ReadonlySet<ExportKind> = new Set(['checklist', 'inaturalist', 'dwca', 'recording']);

export const audienceOf = (kind: ExportKind, asked: Audience): Audience => (SUBMISSION_KINDS.has(kind) ? 'outside' : asked);

export type Opened =
  { mode: 'stream'; contentType: string; filename: string; body: Readable } | { mode: 'job'; job: ReturnType<typeof presentJob> };

export function presentJob(j: ExportJobRow) {
  return {
    id: j.id,
    tenantId: j.tenantId,
    format: j.format,
    status: j.status,
    rowsDone: j.rowsDone,
    rowsTotal: j.rowsTotal,
    filename: j.filename,
    bytes: j.bytes === null ? null : Number(j.bytes),
    error: j.error,
    downloadUrl: j.status === 'done' ? `/api/export/jobs/${j.id}/file` : null,
    createdAt: new Date(j.createdAt).toISOString(),
    finishedAt: j.finishedAt ? new Date(j.finishedAt).toISOString() : null,
    expiresAt: new Date(j.expiresAt).toISOString(),
  };
}

/** The detections filter of an export request (a bad window is refused); the export bench builds its floor's statement from it too. */
export function exportFilterOf(tenantId: string, f: ExportFilters, req?: Pick<ExportRequest, 'kind' | 'includeUnverified'>) {
  const start = f.start ? new Date(f.start) : undefined;
  const end = f.end ? new Date(f.end) : undefined;
  if (start && end && start >= end) throw badRequest('start must be before end', 'VALIDATION_FAILED');
  const confirmedOnly = req?.kind === 'recording' && !req.includeUnverified && !f.verificationStatus;
  return {
    tenantIds: [tenantId],
    satelliteId: f.satelliteId,
    species: f.species,
    minConfidence: f.minConfidence,
    verificationStatus: confirmedOnly ? ('confirmed' as const) : f.verificationStatus,
    category: f.category,
    start,
    end,
    includeTentative: false,
  };
}

export function createExportsService(deps: {
  db: Db;
  clock: Clock;
  queue: JobQueue;
  storage: Pick<ObjectStorage, 'putFile' | 'stream' | 'delete'>;
  detections: Pick<
    DetectionsService,
    | 'exportBatches'
    | 'exportLineBytes'
    | 'exportLineBatches'
    | 'exportStreamsLines'
    | 'exportNonAsciiNames'
    | 'exportStatementBytes'
    | 'exportTeamFacts'
    | 'exportTally'
    | 'list'
    | 'callChunkIds'
  >;
  audio: (tenantId: string, chunkId: string) => Promise<Buffer | null>;
  timeZone: (tenantId: string) => Promise<string>;
  teamName: (tenantId: string) => Promise<string | null>;
  publicUrl: string;
  /** Sensitive species of a team (lower-case codes): generalised in exports that leave the team. */
  sensitiveCodes?: (tenantId: string) => Promise<ReadonlySet<string>>;
  /** Public links to recordings (src/modules/published-audio); without it the media kinds name no recording. */
  publishing?: Pick<PublishedAudio, 'enabled' | 'requireEnabled' | 'publish'>;
  /** The team's publication licence (setting publication_license); without it, the registry default. */
  license?: (tenantId: string) => Promise<PublicationLicenseId>;
  /** The team's calibration curves (calibration service curvesOf); without it, raw confidences. */
  calibrationCurves?: (tenantId: string) => Promise<Array<{ modelId: string; buckets: CurveBucket[] }>>;
}) {
  const { clock } = deps;
  const repo = createExportsRepo(deps.db);

  const filterOf = exportFilterOf;
  const lineFiles = createLineFiles(deps);

  const teamLicense = async (tenantId: string) =>
    licenseOf(deps.license ? await deps.license(tenantId) : (findSetting('publication_license')!.default as PublicationLicenseId));

  async function contextOf(tenantId: string): Promise<ExportContext> {
    const [teamName, timeZone, licenseInfo] = await Promise.all([
      deps.teamName(tenantId).then((n) => n ?? ''),
      deps.timeZone(tenantId),
      teamLicense(tenantId),
    ]);
    return {
      teamName,
      timeZone,
      generatedAt: clock.now(),
      detectionUrl: (id) => `${deps.publicUrl}/detections/${id}`,
      // A withheld chunk (a sensitive species outside the team) has no audio link.
      audioUrl: (chunkId) => (chunkId ? `${deps.publicUrl}/api/audio/${chunkId}` : ''),
      recordist: teamName,
      license: licenseInfo.name,
      licenseInfo,
    };
  }

  /**
   * Rows under the filter that nobody confirmed (unverified, or votes pending) and the lowest
   * model confidence among them: what a submission file would send as an observation unreviewed.
   * Counted on the listed rows (rejected ones, left out of every submission file, are not counted).
   */
  async function unverifiedOf(filter: ReturnType<typeof filterOf>) {
    const statuses = UNREVIEWED.filter((s) => !filter.verificationStatus || filter.verificationStatus === s);
    const pages = await Promise.all(
      statuses.map((verificationStatus) =>
        deps.detections.list({ ...filter, verificationStatus, sortBy: 'confidence', sortDir: 'asc', limit: 1, offset: 0, withCount: true }),
      ),
    );
    const lowest = pages.flatMap((p) => p.detections.map((d) => d.confidence));
    return {
      rows: pages.reduce((n, p) => n + (p.total ?? 0), 0),
      lowestConfidence: lowest.length ? Math.min(...lowest) : null,
    };
  }

  /** The rows, counted as they pass (job progress, a schedule's row count). */
  function counted(source: RowSource, onBatch: (n: number) => void): RowSource {
    return (async function* () {
      let n = 0;
      for await (const batch of source) {
        n += batch.length;
        onBatch(n);
        yield batch;
      }
    })();
  }

  async function total(tenantId: string, req: ExportRequest): Promise<number> {
    const f = filterOf(tenantId, req.filters, req);
    const page = await deps.detections.list({ ...f, sortBy: 'date', sortDir: 'desc', limit: 1, offset: 0, withCount: true });
    return page.total ?? 0;
  }

  /** A report without a window covers the last 30 days (docs/decisions.md "Exports"). */
  function withReportWindow(req: ExportRequest): ExportRequest {
    if (req.kind !== 'report') return req;
    const end = req.filters.end ?? clock.now().toISOString();
    const start = req.filters.start ?? new Date(new Date(end).getTime() - REPORT_DEFAULT_DAYS * 86_400_000).toISOString();
    return { ...req, filters: { ...req.filters, start, end }, options: { ...req.options, period: { start, end } } };
  }

  /**
   * Who an export is for: the team's own (a member downloads CSV, JSON or the report: everything)
   * or `outside` (a scheduled export sent to a channel, and every submission format), where
   * sensitive species are generalised. CSV and JSON are lines the database writes; Darwin Core and
   * iNaturalist too where it streams them under COPY and the file publishes no recording (the
   * public links are signed here); everything else is written from rows in JavaScript.
   * `how.fromRows`: Darwin Core and iNaturalist from rows even so (tests hold the two writers to
   * the same bytes).
   */
  async function render(
    tenantId: string,
    request: ExportRequest,
    onRows: (n: number) => void = () => {},
    asked: Audience = 'team',
    by?: AuditActor,
    how: { fromRows?: boolean } = {},
  ) {
    const req = withReportWindow(request);
    const audience = audienceOf(req.kind, asked);
    const kind = req.kind;
    if (kind === 'csv' || kind === 'json') {
      const ctx = await contextOf(tenantId);
      return renderLines(
        kind,
        await lineFiles.detections(tenantId, kind, filterOf(tenantId, req.filters, req), audience, onRows, ctx),
        ctx,
      );
    }
    if (kind === 'checklist' && !how.fromRows && !req.options.partLimit && deps.detections.exportStreamsLines()) {
      const ctx = await contextOf(tenantId);
      return lineFiles.checklist(tenantId, filterOf(tenantId, req.filters, req), onRows, ctx, {
        listed: await total(tenantId, req),
        counts: req.options.counts,
      });
    }
    if (
      (kind === 'dwca' || kind === 'inaturalist') &&
      !how.fromRows &&
      !req.options.partLimit &&
      deps.detections.exportStreamsLines() &&
      !(await publishes(tenantId, req, by))
    ) {
      const ctx = await contextOf(tenantId);
      const listed = kind === 'inaturalist' ? await total(tenantId, req) : 0;
      return lineFiles.submission(tenantId, kind, filterOf(tenantId, req.filters, req), audience, onRows, ctx, {
        listed,
        geoprivacy: req.options.geoprivacy,
      });
    }
    let source: RowSource = deps.detections.exportBatches(filterOf(tenantId, req.filters, req));
    if (audience === 'outside' && deps.sensitiveCodes) source = generalised(source, await deps.sensitiveCodes(tenantId));
    const { rows, ctx } = await withMedia(tenantId, req, counted(source, onRows), await contextOf(tenantId), by);
    // iNaturalist's one-file-or-zip is decided from the count, so its first byte waits for no part to fill (docs/exports.md "Performance").
    const listed = req.kind === 'inaturalist' && !req.options.partLimit ? await total(tenantId, req) : undefined;
    // A withheld recording (chunkId '') has no audio.
    return renderExport(kind, rows, ctx, {
      ...req.options,
      listed,
      audio: (chunkId) => (chunkId ? deps.audio(tenantId, chunkId) : Promise.resolve(null)),
      // xeno-canto's recording is the whole call: every chunk it spans (formats/xenocanto.ts).
      callChunks: (r) => (r.chunkId ? deps.detections.callChunkIds(tenantId, r.id, MAX_CALL_CHUNKS + 1) : Promise.resolve([])),
    });
  }

  /** Whether an export publishes its recordings: asked, a media kind, by someone, and the team's setting on (withMedia). */
  async function publishes(tenantId: string, req: ExportRequest, by?: AuditActor) {
    return Boolean(req.publishAudio && by && MEDIA_KINDS.has(req.kind) && deps.publishing && (await deps.publishing.enabled(tenantId)));
  }

  /**
   * The media URL of the formats importers fetch from (MEDIA_KINDS): each batch's recordings are
   * published before the writers see the batch (created by `by`, audited), and ctx.audioUrl names
   * their public links. The writers read a batch whole before pulling the next (the sources are
   * pull-based generators), so the links of the batch in hand are the ones they ask for. Without
   * publishing (not asked, the team setting off, or a scheduled export) the URL is empty.
   */
  async function withMedia(tenantId: string, req: ExportRequest, rows: RowSource, ctx: ExportContext, by?: AuditActor) {
    if (!MEDIA_KINDS.has(req.kind)) return { rows, ctx };
    const publishing = deps.publishing;
    if (!req.publishAudio || !by || !publishing || !(await publishing.enabled(tenantId)))
      return { rows, ctx: { ...ctx, audioUrl: () => '' } };
    let links = new Map<string, string>();
    const published = (async function* () {
      for await (const batch of rows) {
        links = await publishing.publish(
          by,
          tenantId,
          batch.map((r) => r.chunkId),
          req.kind,
        );
        yield batch;
      }
    })();
    return { rows: published, ctx: { ...ctx, audioUrl: (chunkId: string) => links.get(chunkId) ?? '' } };
  }

  /** Writes an export to a temp file; the caller moves it and removes the file. */
  async function toFile(tenantId: string, req: ExportRequest, onRows: (n: number) => void, audience: Audience = 'team', by?: AuditActor) {
    let rows = 0;
    const out = await render(
      tenantId,
      req,
      (n) => {
        rows = n;
        onRows(n);
      },
      audience,
      by,
    );
    const file = path.join(os.tmpdir(), `chorus-export-${newId()}`);
    try {
      await pipeline(out.body, fs.createWriteStream(file));
    } catch (err) {
      await fsp.rm(file, { force: true });
      throw err;
    }
    const { size } = await fsp.stat(file);
    return { file, size, rows, contentType: out.contentType, filename: out.filename };
  }

  async function startJob(actor: TeamActor | null, tenantId: string, req: ExportRequest, rowsTotal: number | null) {
    const now = clock.now();
    const id = newId();
    await repo.insertJob({
      id,
      tenantId,
      requestedBy: actor?.userId ?? null,
      format: req.kind,
      filters: {
        ...req.filters,
        options: req.options,
        includeUnverified: req.includeUnverified ?? false,
        publishAudio: req.publishAudio ?? false,
      },
      rowsTotal,
      createdAt: now,
      expiresAt: new Date(now.getTime() + JOB_TTL_MS),
    });
    // Read before it is queued: a worker may take it at once, and the answer is the job as created (queued).
    const created = presentJob((await repo.findJob(tenantId, id))!);
    await deps.queue.enqueue(EXPORT_QUEUE, id, { jobId: id });
    return created;
  }

  /** Runs one queued job (the export queue's handler). */
  async function runJob(id: string) {
    const job = await repo.jobById(id);
    if (!job || !(await repo.startJob(id))) return;
    const { options = {}, includeUnverified, publishAudio, ...filters } = job.filters;
    const req: ExportRequest = { kind: job.format, filters, options, includeUnverified, publishAudio };
    // Links a job publishes are audited as the person who started it, as retention runs are.
    const by: AuditActor | undefined = job.requestedBy
      ? { kind: 'session', userId: job.requestedBy, apiKeyId: null, email: null, ip: '', teamId: job.tenantId, declaredAudit: null }
      : undefined;
    let last = 0;
    try {
      const out = await toFile(
        job.tenantId,
        req,
        (n) => {
          if (n - last >= 5000) {
            last = n;
            void repo.progress(id, n).catch(() => {});
          }
        },
        'team',
        by,
      );
      const key = `exports/${job.tenantId}/${id}/${out.filename}`;
      try {
        await deps.storage.putFile(key, out.file, out.contentType);
      } finally {
        await fsp.rm(out.file, { force: true });
      }
      await repo.finishJob(id, {
        storageKey: key,
        filename: out.filename,
        contentType: out.contentType,
        bytes: out.size,
        rowsDone: out.rows,
        at: clock.now(),
      });
    } catch (err) {
      await repo.failJob(id, err instanceof Error ? err.message : String(err), clock.now());
    }
  }

  return {
    filterOf,
    contextOf,
    toFile,
    render,

    /** Streams the export, or starts a background job when asked or when the archive is large. */
    async open(actor: TeamActor, req: ExportRequest, background: boolean): Promise<Opened> {
      const tenantId = actor.teamId;
      filterOf(tenantId, req.filters, req); // refuses a bad window before anything runs
      if (req.publishAudio && MEDIA_KINDS.has(req.kind)) await deps.publishing?.requireEnabled(tenantId);
      const count = background || req.kind === 'recording' ? await total(tenantId, req) : null;
      if (background || (req.kind === 'recording' && (count ?? 0) > RECORDINGS_INLINE_MAX)) {
        return { mode: 'job', job: await startJob(actor, tenantId, req, count) };
      }
      return { mode: 'stream', ...(await render(tenantId, req, undefined, 'team', actor)) };
    },

    /**
     * The first rows of what an export under these filters lists, the total, (checklists) what
     * eBird cannot take, the team's licence, and (submission formats) how many rows nobody has
     * confirmed with the lowest confidence among them; a Darwin Core preview warns when GBIF would
     * refuse the licence (issue 34).
     */
    async preview(tenantId: string, req: ExportRequest, limit: number) {
      const filter = filterOf(tenantId, req.filters, req);
      const [page, license] = await Promise.all([
        deps.detections.list({ ...filter, sortBy: 'date', sortDir: 'asc', limit, offset: 0, withCount: true }),
        teamLicense(tenantId),
      ]);
      const count = page.total ?? 0;
      const warnings = req.kind === 'dwca' && !license.gbif ? [{ code: GBIF_LICENSE_WARNING, message: gbifLicenseWarning(license) }] : [];
      return {
        rows: page.detections,
        total: count,
        background: req.kind === 'recording' && count > RECORDINGS_INLINE_MAX,
        license,
        warnings,
        ...(SUBMISSION_KINDS.has(req.kind) ? { unverified: await unverifiedOf(filter) } : {}),
        ...(req.kind === 'checklist' ? { skipped: skippedOf(await deps.detections.exportTally(filter)) } : {}),
      };
    },

    startJob,
    runJob,

    /** Keeps a file made elsewhere (a scheduled export too large to attach) as a finished job. */
    async startJobFromFile(
      tenantId: string,
      req: ExportRequest,
      out: { file: string; size: number; rows: number; contentType: string; filename: string },
    ) {
      const now = clock.now();
      const id = newId();
      const key = `exports/${tenantId}/${id}/${out.filename}`;
      await deps.storage.putFile(key, out.file, out.contentType);
      await repo.insertJob({
        id,
        tenantId,
        requestedBy: null,
        format: req.kind,
        filters: { ...req.filters },
        rowsTotal: out.rows,
        createdAt: now,
        expiresAt: new Date(now.getTime() + JOB_TTL_MS),
      });
      await repo.finishJob(id, {
        storageKey: key,
        filename: out.filename,
        contentType: out.contentType,
        bytes: out.size,
        rowsDone: out.rows,
        at: now,
      });
      return presentJob((await repo.findJob(tenantId, id))!);
    },
    jobs: async (tenantId: string) => (await repo.listJobs(tenantId, 50)).map(presentJob),
    async job(tenantId: string, id: string) {
      const j = await repo.findJob(tenantId, id);
      if (!j) throw notFound('No such export');
      return presentJob(j);
    },
    async download(tenantId: string, id: string) {
      const j = await repo.findJob(tenantId, id);
      if (!j) throw notFound('No such export');
      if (j.status !== 'done' || !j.storageKey) throw badRequest('The export is not ready', 'EXPORT_NOT_READY');
      const body = await deps.storage.stream(j.storageKey);
      if (!body) throw notFound('The export file has expired');
      return { body, filename: j.filename!, contentType: j.contentType!, bytes: Number(j.bytes) };
    },
    /** Forgets jobs past their time and their files. */
    async sweep() {
      const expired = await repo.expiredJobs(clock.now());
      for (const j of expired) if (j.storageKey) await deps.storage.delete(j.storageKey);
      if (expired.length) await repo.deleteJobs(expired.map((j) => j.id));
      return expired.length;
    },
    teamOfJob: repo.teamOfJob,
    start: () => deps.queue.process<{ jobId: string }>(EXPORT_QUEUE, 1, (job) => runJob(job.data.jobId)),
  };
}

export type ExportsService = ReturnType<typeof createExportsService>;
