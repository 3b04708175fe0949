import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { notFound } from '../../core/errors.ts';
import { createDetectionsRepo, type DetectionExportRow, type DetectionListFilter, type DetectionRow } from './repo.ts';

export type { DetectionExportRow };
import { createReviewRepo } from './review-repo.ts';
import type { AggregationRule } from './aggregation.ts';
import type { CategoryVisibility } from './visibility.ts';
import { announcement, createDetectionRecorder } from './recorder.ts';

export type { DetectionRow };

/** What the list needs from calibration, the aggregation rules and category visibility (src/modules/calibration, the settings service, visibility.ts). */
export interface DetectionReaders {
  calibrated(rows: ReadonlyArray<{ tenantId: string; modelId: string; confidence: number }>): Promise<number[]>;
  aggregationRule(tenantId: string): Promise<AggregationRule>;
  visibility: Pick<CategoryVisibility, 'of'>;
  /** The credit the model's licence asks for beside its detections (models service attributionOf). */
  modelAttribution(modelId: string): Promise<string | null>;
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
    callEndAt: r.callEndAt,
    spanChunkIds: r.spanChunkIds,
    padded: r.padded,
  };
}

export function createDetectionsService(deps: { db: Db; clock: Clock; readers: DetectionReaders }) {
  const { db, clock, readers } = deps;
  const repo = createDetectionsRepo(db);
  const review = createReviewRepo(db);
  // The inference worker's side: what the model heard in a chunk becomes rows and announcements.
  const recorder = createDetectionRecorder({ db, clock, aggregationRule: readers.aggregationRule });

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
      return { ...detectionView(r, calibrated), modelAttribution, storageKey: r.storageKey, ...(await review.reviewSummary(id, userId)) };
    },

    /**
     * What an export lists (issue 18), batch by batch, oldest first: the list's rows under its
     * filter (promoted, one per stitched call, categories the team shows), with calibrated
     * confidence and the satellite's position. Memory holds one batch at a time.
     */
    async *exportBatches(f: Omit<DetectionListFilter, 'sortBy' | 'sortDir' | 'limit' | 'offset' | 'withCount'>, batchSize = 5000) {
      const categories = await readers.visibility.of(f.tenantIds);
      const filter: DetectionListFilter = {
        ...f,
        includeTentative: false,
        categories,
        sortBy: 'date',
        sortDir: 'asc',
        limit: batchSize,
        offset: 0,
        withCount: false,
      };
      let after: { detectedAt: string; id: string } | null = null;
      for (;;) {
        const rows = await repo.scanForExport(filter, after, batchSize);
        if (rows.length === 0) return;
        const calibrated = await readers.calibrated(rows);
        yield rows.map((r, i) => ({ ...r, calibratedConfidence: calibrated[i] ?? r.confidence }));
        if (rows.length < batchSize) return;
        const last = rows[rows.length - 1]!;
        after = { detectedAt: last.detectedAt, id: last.id };
      }
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
