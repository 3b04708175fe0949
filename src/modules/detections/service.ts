import { notFound } from '../../core/errors.ts';
import type { DetectionListFilter, DetectionRow, DetectionsRepo } from './repo.ts';

/**
 * A row as the API shows it: camelCase fields, ISO timestamps, and `calibrated_confidence`
 * (spec §2, named as the spec names it). No calibration exists yet, so it equals the raw confidence.
 */
export function detectionView(r: DetectionRow) {
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
    calibrated_confidence: r.confidence,
    detectedAt: new Date(r.detectedAt).toISOString(),
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
    createdAt: new Date(r.createdAt).toISOString(),
  };
}

export function createDetectionsService(deps: { repo: DetectionsRepo }) {
  const { repo } = deps;
  return {
    /** GET /detections: {detections, total (null when withCount=false), aggregation}. */
    async list(f: DetectionListFilter) {
      const { rows, total } = await repo.list(f);
      // No aggregation rules exist yet, so no detection is tentative and there is no rule to map.
      return { detections: rows.map(detectionView), total, aggregation: {} as Record<string, unknown> };
    },

    /** GET /detections/:id: the row plus where its audio lives. */
    async get(tenantId: string, id: string) {
      const r = await repo.find(tenantId, id);
      if (!r) throw notFound('No such detection');
      return { ...detectionView(r), storageKey: r.storageKey };
    },
  };
}

export type DetectionsService = ReturnType<typeof createDetectionsService>;
