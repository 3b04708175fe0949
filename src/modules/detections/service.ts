import { notFound } from '../../core/errors.ts';
import { createDetectionsRepo, defaultVisibility, type DetectionListFilter, type DetectionRow, type DetectionsRepo, type VisibleCategories } from './repo.ts';
import type { ReviewRepo } from './review-repo.ts';
import type { AggregationRule } from '../../inference/aggregation.ts';
import type { Db } from '../../infra/db/index.ts';
import type { SettingsService } from '../settings/service.ts';
import { VISIBLE_CATEGORIES_KEY } from './visibility.ts';

/** The categories each team of `tenantIds` (null: every team) shows; see VisibleCategories. */
export type VisibleCategoriesReader = (tenantIds: readonly string[] | null) => Promise<VisibleCategories>;

/**
 * The reader over the settings (team value, else hub value, else the registry default; a hub lock
 * wins): one settings read per team named; over every team, one read of which teams have a value
 * of their own plus one per such team. Wired in src/app.ts for the list, summary and sessions.
 */
export function visibleCategoriesReader(db: Db, settings: Pick<SettingsService, 'teamSetting' | 'hubSetting'>): VisibleCategoriesReader {
  const repo = createDetectionsRepo(db);
  const read = async (ids: readonly string[]) => new Map(await Promise.all(ids.map(async (t) => [t, await settings.teamSetting<string[]>(t, VISIBLE_CATEGORIES_KEY)] as const)));
  return async (tenantIds) => {
    if (tenantIds) return { teams: await read(tenantIds), others: [] };
    const [own, others] = await Promise.all([repo.teamsWithOwnSetting(VISIBLE_CATEGORIES_KEY), settings.hubSetting<string[]>(VISIBLE_CATEGORIES_KEY)]);
    return { teams: await read(own), others };
  };
}

/** What the list needs from calibration and the aggregation rules (src/modules/calibration, src/inference/aggregation.ts). */
export interface DetectionReaders {
  calibrated(rows: ReadonlyArray<{ tenantId: string; modelId: string; confidence: number }>): Promise<number[]>;
  aggregationRule(tenantId: string): Promise<AggregationRule>;
  /** Absent: every team shows the registry default. */
  visibleCategories?: VisibleCategoriesReader;
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
  };
}

export function createDetectionsService(deps: { repo: DetectionsRepo; review: Pick<ReviewRepo, 'reviewSummary'>; readers?: DetectionReaders }) {
  const { repo, review } = deps;
  const readers: DetectionReaders = deps.readers ?? {
    calibrated: async (rows) => rows.map((r) => r.confidence),
    aggregationRule: async () => {
      throw new Error('no aggregation rules wired');
    },
  };

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
      const categories = readers.visibleCategories ? await readers.visibleCategories(f.tenantIds) : defaultVisibility();
      const { rows, total } = await repo.list({ ...f, categories });
      const [calibrated, aggregation] = await Promise.all([readers.calibrated(rows), rulesOfTentative(rows)]);
      return { detections: rows.map((r, i) => detectionView(r, calibrated[i])), total, aggregation };
    },

    /** GET /detections/:id: the row, where its audio lives and its review (votes per value, the caller's vote, counts). */
    async get(tenantId: string, id: string, userId: string | null) {
      const r = await repo.find(tenantId, id);
      if (!r) throw notFound('No such detection');
      const [calibrated] = await readers.calibrated([r]);
      return { ...detectionView(r, calibrated), storageKey: r.storageKey, ...(await review.reviewSummary(id, userId)) };
    },
  };
}

export type DetectionsService = ReturnType<typeof createDetectionsService>;
