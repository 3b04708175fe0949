import type { Db } from '../../infra/db/index.ts';
import { badRequest } from '../../core/errors.ts';
import type { AggregationRule } from './aggregation.ts';
import { createReviewRepo, type BucketUnit } from './review-repo.ts';
import type { CategoryVisibility } from './visibility.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Longest window either endpoint answers (a year, leap day included). */
export const MAX_WINDOW_DAYS = 366;

/** Timeline bucket size from the window: hourly up to 2 days, daily up to 92 days, weekly beyond. */
export function bucketFor(start: Date, end: Date): BucketUnit {
  const span = end.getTime() - start.getTime();
  if (span <= 2 * DAY) return 'hour';
  if (span <= 92 * DAY) return 'day';
  return 'week';
}

/** The required window of both endpoints: start inclusive, end exclusive. */
export function windowOf(q: { start?: string; end?: string }): { start: Date; end: Date } {
  if (!q.start || !q.end) throw badRequest('start and end are required (ISO 8601)', 'WINDOW_REQUIRED');
  const start = new Date(q.start);
  const end = new Date(q.end);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()))
    throw badRequest('start and end must be ISO 8601 times', 'INVALID_WINDOW');
  if (end <= start) throw badRequest('end must be after start', 'INVALID_WINDOW');
  if (end.getTime() - start.getTime() > MAX_WINDOW_DAYS * DAY)
    throw badRequest(`The window spans at most ${MAX_WINDOW_DAYS} days`, 'INVALID_WINDOW');
  return { start, end };
}

const iso = (d: Date) => new Date(d).toISOString();

/** The rule reader is the one GET /detections uses (the settings service's), so both show the same rule. */
export function createSummaryService(deps: {
  db: Db;
  aggregationRule: (tenantId: string) => Promise<AggregationRule>;
  /** The list's, so both leave out the same categories (spec §4 Stats note: counts cover what the Detections page lists). */
  visibility: Pick<CategoryVisibility, 'visible'>;
}) {
  const repo = createReviewRepo(deps.db);
  const shown = (tenantId: string) => deps.visibility.visible(tenantId);

  /** {tenantId: rule}, the shape of the list's `aggregation` member. */
  const aggregation = async (tenantId: string): Promise<Record<string, AggregationRule>> => ({
    [tenantId]: await deps.aggregationRule(tenantId),
  });

  return {
    /** GET /detections/summary: promoted detections per species, plus what still waits on the rule. */
    async summary(tenantId: string, start: Date, end: Date) {
      const [categories, agg] = await Promise.all([shown(tenantId), aggregation(tenantId)]);
      const [rows, tentative] = await Promise.all([
        repo.speciesSummary(tenantId, start, end, categories),
        repo.tentativeCounts(tenantId, start, end, categories),
      ]);
      return {
        tenantId,
        start: iso(start),
        end: iso(end),
        species: rows.map((r) => ({
          speciesCode: r.speciesCode,
          commonName: r.commonName,
          scientificName: r.scientificName,
          count: r.count,
          maxConfidence: r.maxConfidence,
          firstDetectedAt: iso(r.firstAt),
          lastDetectedAt: iso(r.lastAt),
        })),
        total_detections: rows.reduce((n, r) => n + r.count, 0),
        tentative_detections: tentative.detections,
        tentative_species: tentative.species,
        aggregation: agg,
      };
    },

    /** GET /detections/species-timeline: per species, promoted and tentative detections per UTC bucket. */
    async timeline(tenantId: string, start: Date, end: Date) {
      const unit = bucketFor(start, end);
      const [categories, agg] = await Promise.all([shown(tenantId), aggregation(tenantId)]);
      const rows = await repo.timeline(tenantId, start, end, unit, categories);
      type Bucket = { start: string; count: number; maxConfidence: number };
      type Entry = {
        speciesCode: string;
        commonName: string;
        scientificName: string;
        count: number;
        buckets: Bucket[];
        tentative?: true;
        tentative_count?: number;
        tentative_buckets?: Bucket[];
      };
      const bySpecies = new Map<string, Entry>();
      for (const r of rows) {
        let e = bySpecies.get(r.speciesCode);
        if (!e) {
          e = { speciesCode: r.speciesCode, commonName: r.commonName, scientificName: r.scientificName, count: 0, buckets: [] };
          bySpecies.set(r.speciesCode, e);
        }
        const b = { start: iso(r.bucket), count: r.count, maxConfidence: r.maxConfidence };
        if (r.tentative) {
          e.tentative = true;
          e.tentative_count = (e.tentative_count ?? 0) + r.count;
          (e.tentative_buckets ??= []).push(b);
        } else {
          e.count += r.count;
          e.buckets.push(b);
        }
      }
      const species = [...bySpecies.values()].sort(
        (a, b) => b.count - a.count || (b.tentative_count ?? 0) - (a.tentative_count ?? 0) || a.commonName.localeCompare(b.commonName),
      );
      return { tenantId, start: iso(start), end: iso(end), bucket: unit, species, aggregation: agg };
    },
  };
}

export type SummaryService = ReturnType<typeof createSummaryService>;
