import type { CopyColumnOptions, Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { notFound } from '../../core/errors.ts';
import { createDetectionsRepo, type DetectionRow } from './repo.ts';
import type { DetectionListFilter } from './list-sql.ts';
import {
  createExportScanRepo,
  type DetectionExportRow,
  type ExportKeyset,
  type ExportLineRow,
  type ExportLineSql,
  type ExportTeamStatement,
} from './export-repo.ts';
import type { VisibleCategories } from './category-sql.ts';

export type { DetectionExportRow, ExportLineRow, ExportLineSql, ExportTeamStatement };
/** SQL of the export's columns (an export's lines are written over detections `d` and satellites `s`). */
export { CALL_END, CALL_HAS_LENGTH, utcIso } from './list-sql.ts';
import { createReviewRepo } from './review-repo.ts';
import type { AggregationRule } from './aggregation.ts';
import type { CategoryVisibility } from './visibility.ts';
import { announcement, createDetectionRecorder } from './recorder.ts';
import { recordingsOf, type ObservationRule } from './observations.ts';

export type { DetectionRow };

/** What the list needs from calibration, the aggregation rules and category visibility (src/modules/calibration, the settings service, visibility.ts). */
export interface DetectionReaders {
  calibrated(rows: ReadonlyArray<{ tenantId: string; modelId: string; confidence: number }>): Promise<number[]>;
  aggregationRule(tenantId: string): Promise<AggregationRule>;
  visibility: Pick<CategoryVisibility, 'of'>;
  /** The credit the model's licence asks for beside its detections (models service attributionOf). */
  modelAttribution(modelId: string): Promise<string | null>;
  /** The team's per-species thresholds in force (src/modules/species-thresholds appliedFor); absent: none. */
  speciesThresholds?: (tenantId: string, codes: readonly string[]) => Promise<Map<string, number>>;
  /** The team's rule for one call heard by several satellites (observations.ts); absent: never merged. */
  observationRule?: (tenantId: string) => Promise<ObservationRule>;
}

/**
 * A row as the API shows it: camelCase fields, ISO timestamps, and `calibrated_confidence`
 * (spec §2, named as the spec names it): the (team, model) curve's reading, else the raw confidence.
 */
export function detectionView(r: DetectionRow, calibrated = r.confidence) {
  return {
    id: r.id,
    tenantId: r.tenantId,
    satelliteId: r.satelliteId,
    satelliteName: r.satelliteName,
    audioChunkId: r.chunkId,
    speciesCode: r.speciesCode,
    scientificName: r.scientificName,
    commonName: r.commonName,
    category: r.category,
    confidence: r.confidence,
    calibrated_confidence: calibrated,
    detectedAt: r.detectedAt,
    startMs: r.startMs,
    endMs: r.endMs,
    modelId: r.modelId,
    verificationStatus: r.verificationStatus,
    tentative: r.tentative,
    promoted: r.promoted,
    isFirstOfSeason: r.isFirstOfSeason,
    isFirstOfDay: r.isFirstOfDay,
    isRare: r.isRare,
    rareReason: r.rareReason,
    createdAt: r.createdAt,
    pinned: r.pinned,
    callId: r.callId ?? r.id,
    callChunks: r.callChunks,
    recorders: r.recorders,
    callEndAt: r.callEndAt,
    spanChunkIds: r.spanChunkIds,
    padded: r.padded,
    belowThreshold: r.belowThreshold,
    outOfRange: r.outOfRange,
    rangeSource: r.rangeSource,
    rangeScore: r.rangeScore,
  };
}

/** One row of an export: the repository's export row and the confidence as calibrated for the team and model. */
export type ExportRow = DetectionExportRow & { calibratedConfidence: number };

/** What an export is filtered by: the list's filter without its paging and order. */
export type ExportFilter = Omit<DetectionListFilter, 'sortBy' | 'sortDir' | 'limit' | 'offset' | 'withCount'>;

/**
 * Rows per statement of an export's scan. The next batch is read ahead, so memory holds two; with the round trip
 * hidden behind the writer, 250, 1,000 and 5,000 rows read at the same rate (docs/exports.md "Performance").
 */
export const EXPORT_BATCH_ROWS = 1000;

/** The list filter an export scans with (exportBatches; the export bench's COPY floor builds its statement from it). */
export function exportListFilter(f: ExportFilter, categories: VisibleCategories): DetectionListFilter {
  return {
    ...f,
    includeTentative: false,
    categories,
    sortBy: 'date',
    sortDir: 'asc',
    limit: EXPORT_BATCH_ROWS,
    offset: 0,
    withCount: false,
  };
}

/**
 * Keyset batches, oldest first: the next batch is read while the caller handles the one in hand
 * (the database and the writer work at once), so memory holds two. A batch shorter than
 * `batchSize` is the last.
 */
async function* keysetBatches<R extends ExportKeyset>(read: (after: ExportKeyset | null) => Promise<R[]>, batchSize: number) {
  let next: Promise<R[]> | null = read(null);
  try {
    while (next) {
      const rows: R[] = await next;
      next = null;
      if (rows.length === 0) return;
      if (rows.length === batchSize) {
        const last = rows[rows.length - 1]!;
        next = read({ detectedAt: last.detectedAt, id: last.id });
        // Caught here, thrown where awaited: a reader gone away must not leave an unhandled rejection.
        next.catch(() => {});
      }
      yield rows;
    }
  } finally {
    // Abandoned with a read in flight: let it finish (its connection back to the pool) before returning.
    if (next) await next.catch(() => {});
  }
}

export function createDetectionsService(deps: { db: Db; clock: Clock; readers: DetectionReaders }) {
  const { db, clock, readers } = deps;
  const repo = createDetectionsRepo(db);
  const exportScan = createExportScanRepo(db);
  const review = createReviewRepo(db);
  // The inference worker's side: what the model heard in a chunk becomes rows and announcements.
  const recorder = createDetectionRecorder({
    db,
    clock,
    aggregationRule: readers.aggregationRule,
    speciesThresholds: readers.speciesThresholds,
    observationRule: readers.observationRule,
  });

  /** Spec §4: the aggregation member maps the team of each tentative detection listed to its rule. */
  async function rulesOfTentative(rows: DetectionRow[]): Promise<Record<string, AggregationRule>> {
    const teams = [...new Set(rows.filter((r) => r.tentative).map((r) => r.tenantId))];
    const rules = await Promise.all(teams.map((t) => readers.aggregationRule(t)));
    return Object.fromEntries(teams.map((t, i) => [t, rules[i]]));
  }

  return {
    /** GET /detections: {detections, total (null when withCount=false), aggregation}. */
    async list(f: DetectionListFilter) {
      // Hidden categories are neither listed nor counted (spec §4 Stats note, 0.78).
      const categories = await readers.visibility.of(f.tenantIds);
      const { rows, total } = await repo.list({ ...f, categories });
      const [calibrated, aggregation] = await Promise.all([readers.calibrated(rows), rulesOfTentative(rows)]);
      return { detections: rows.map((r, i) => detectionView(r, calibrated[i])), total, aggregation };
    },

    /** GET /detections/:id: the row, where its audio lives and its review (votes per value, the caller's vote, counts). */
    async get(tenantId: string, id: string, userId: string | null) {
      const r = await repo.find(tenantId, id);
      if (!r) throw notFound('No such detection');
      const [[calibrated], modelAttribution] = await Promise.all([readers.calibrated([r]), readers.modelAttribution(r.modelId)]);
      const [summary, recordings] = await Promise.all([review.reviewSummary(id, userId), recordingsOf(db, tenantId, id)]);
      // Each satellite's recording of the observation (issue 35 point 3): one for a call one satellite heard.
      return { ...detectionView(r, calibrated), modelAttribution, storageKey: r.storageKey, ...summary, recordings };
    },

    /**
     * What an export lists (issue 18), batch by batch, oldest first: the list's rows under its
     * filter (promoted, one per stitched call, categories the team shows), with calibrated
     * confidence and the satellite's position. The next batch is read while the caller writes
     * the one in hand (the database and the writer work at once), so memory holds two batches.
     */
    async *exportBatches(f: ExportFilter, batchSize = EXPORT_BATCH_ROWS) {
      const filter = exportListFilter(f, await readers.visibility.of(f.tenantIds));
      const read = async (after: ExportKeyset | null) => {
        const rows = await exportScan.rows(filter, after, batchSize);
        const calibrated = rows.length ? await readers.calibrated(rows) : [];
        // The rows are the driver's fresh objects: completed in place, not copied (the type checks each against ExportRow).
        const out: ExportRow[] = rows.map((r, i) => Object.assign(r, { calibratedConfidence: calibrated[i] ?? r.confidence }));
        return out;
      };
      yield* keysetBatches(read, batchSize);
    },

    /** Whether the database streams an export's lines under COPY (PostgreSQL; not PGlite). */
    exportStreamsLines: () => exportScan.streams,

    /**
     * An export's lines written by the database (CSV, JSON: `line`), oldest first, as bytes end to
     * end in one statement where the database streams COPY (PostgreSQL; `opts`: Db.copyColumn's);
     * null elsewhere (PGlite), where exportLineBatches reads them.
     */
    async exportLineBytes(f: ExportFilter, line: ExportLineSql, opts: CopyColumnOptions) {
      return exportScan.lineBytes(exportListFilter(f, await readers.visibility.of(f.tenantIds)), line, opts);
    },

    /** A file the database aggregates itself (eBird) under the export's filter, as bytes under COPY; null without COPY. */
    async exportStatementBytes(f: ExportFilter, statement: ExportTeamStatement, opts: CopyColumnOptions) {
      return exportScan.statementBytes(exportListFilter(f, await readers.visibility.of(f.tenantIds)), statement, opts);
    },

    /** The team's species keys, the hub's model ids and the team's satellites (exportStatementBytes' eBird file names them). */
    exportTeamFacts: (tenantId: string) => exportScan.teamFacts(tenantId),

    /** The team's species and satellite names that are not plain ASCII (an export in Latin-1 spells them first). */
    exportNonAsciiNames: (tenantId: string) => exportScan.nonAsciiNames(tenantId),

    /** The same lines batch by batch, each with its key and whether it is coarsened (a file that leaves the team reorders those). */
    async *exportLineBatches(f: ExportFilter, line: ExportLineSql, batchSize = EXPORT_BATCH_ROWS): AsyncGenerator<ExportLineRow[]> {
      const filter = exportListFilter(f, await readers.visibility.of(f.tenantIds));
      yield* keysetBatches((after) => exportScan.lines(filter, line, after, batchSize), batchSize);
    },

    /** The chunks of a call's audio, oldest first, at most `limit` (the xeno-canto export's whole-call recording). */
    callChunkIds: (tenantId: string, detectionId: string, limit: number) => repo.callChunkIds(tenantId, detectionId, limit),

    /** Per species, what an export under this filter lists, and how many. */
    async exportTally(f: Omit<DetectionListFilter, 'sortBy' | 'sortDir' | 'limit' | 'offset' | 'withCount'>) {
      const categories = await readers.visibility.of(f.tenantIds);
      return repo.speciesTally({
        ...f,
        includeTentative: false,
        categories,
        sortBy: 'date',
        sortDir: 'asc',
        limit: 1,
        offset: 0,
        withCount: false,
      });
    },

    /** What alert rules read of a stored detection the Detections page lists (a call's head, not tentative), or null. */
    async announcementOf(tenantId: string, id: string) {
      const d = await repo.find(tenantId, id);
      return d && !d.tentative && !d.callId ? announcement(d, d.modelId) : null;
    },

    /** The stored row (a share link checks it as it is now), or null. */
    find: (tenantId: string, id: string) => repo.find(tenantId, id),

    /** The team of a detection (the guard's resolver, share links), or null. */
    teamOfDetection: (id: string) => repo.teamOfDetection(id),

    chunkToClassify: recorder.chunkToClassify,
    followingChunks: recorder.followingChunks,
    recordChunk: recorder.recordChunk,
  };
}

export type DetectionsService = ReturnType<typeof createDetectionsService>;
