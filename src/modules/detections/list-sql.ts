/**
 * The SQL the detections queries share (the list, the counts, the exports): the list's filter and
 * its WHERE over detections `d`, positional parameters, and the call's times as the API writes them.
 */
import { containsPattern } from '../../infra/db/index.ts';
import { categoryCondition, type VisibleCategories } from './category-sql.ts';

export const VERIFICATION_STATUSES = ['unverified', 'pending_review', 'confirmed', 'rejected'] as const;

export interface DetectionListFilter {
  /** null: every team (hub admins without a tenantId). */
  tenantIds: string[] | null;
  satelliteId?: string;
  species?: string;
  speciesSearch?: string;
  minConfidence?: number;
  verificationStatus?: (typeof VERIFICATION_STATUSES)[number];
  includeTentative: boolean;
  /** The rows of one stitched call (its representative and continuations); else representatives only. */
  callId?: string;
  start?: Date;
  end?: Date;
  sortBy: 'date' | 'confidence' | 'species';
  sortDir: 'asc' | 'desc';
  limit: number;
  offset: number;
  withCount: boolean;
  /** Only rows in the categories their team shows; absent: every category (the service always sets it). */
  categories?: VisibleCategories;
  /** One category (exports' filter). */
  category?: string;
  /** true: only detections flagged out of range; false: only the others; absent: both (issue 35). */
  outOfRange?: boolean;
}

/** A timestamptz as JavaScript's toISOString prints it (milliseconds truncated, as a Date keeps them). */
export const utcIso = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Where a call ends: its last window's end (a stitched call), else the row's own window's. */
export const CALL_END = "coalesce(d.call_end_at, d.detected_at + (d.end_ms - d.start_ms) * interval '1 millisecond')";

/**
 * Whether CALL_END falls on another millisecond than the start (the API writes the two apart):
 * without a stitched end exactly when the window has a length (whole milliseconds), which spares
 * an export line two truncations and an addition a row.
 */
export const CALL_HAS_LENGTH =
  "CASE WHEN d.call_end_at IS NULL THEN d.end_ms <> d.start_ms ELSE date_trunc('milliseconds', d.call_end_at) <> date_trunc('milliseconds', d.detected_at) END";

/** Positional parameters of one statement. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** `alias.tenant_id` in the teams: one team is `=`, so PostgreSQL reads an index in order (not under `= ANY(array)`). */
export function teamIs(tenantIds: readonly string[], p: Params, alias: string): string {
  return tenantIds.length === 1 ? `${alias}.tenant_id = ${p.add(tenantIds[0])}` : `${alias}.tenant_id = ANY(${p.add(tenantIds)}::uuid[])`;
}

/** The list's WHERE for detections `d`, over [from, to) when given. */
export function whereOf(f: DetectionListFilter, p: Params, from: Date | undefined, to: Date | undefined): string {
  const where: string[] = [];
  if (f.tenantIds) where.push(teamIs(f.tenantIds, p, 'd'));
  if (f.satelliteId) where.push(`d.satellite_id = ${p.add(f.satelliteId)}`);
  if (f.species) where.push(`lower(d.species_code) = lower(${p.add(f.species)})`);
  if (f.speciesSearch) {
    const q = p.add(containsPattern(f.speciesSearch));
    where.push(`(d.common_name ILIKE ${q} OR d.scientific_name ILIKE ${q})`);
  }
  if (f.minConfidence !== undefined) where.push(`d.confidence >= ${p.add(f.minConfidence)}`);
  if (f.verificationStatus) where.push(`d.verification_status = ${p.add(f.verificationStatus)}`);
  if (!f.includeTentative) where.push('NOT d.tentative');
  // One row per stitched call (spec §4 Stats note): continuations are listed only when their call is asked for.
  if (f.callId) {
    const c = p.add(f.callId);
    where.push(`(d.id = ${c} OR d.call_id = ${c})`);
  } else where.push('d.call_id IS NULL');
  if (from) where.push(`d.detected_at >= ${p.add(from)}`);
  if (to) where.push(`d.detected_at < ${p.add(to)}`);
  if (f.categories) where.push(categoryCondition(f.categories, f.tenantIds, (v) => p.add(v)));
  if (f.category) where.push(`d.category = ${p.add(f.category)}`);
  if (f.outOfRange !== undefined) where.push(f.outOfRange ? 'd.out_of_range' : 'NOT d.out_of_range');
  return where.length ? `WHERE ${where.join(' AND ')}` : '';
}
