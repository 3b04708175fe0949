/**
 * The SQL of the day at a glance (issue 36 point 1): one local day's calls grouped by species,
 * local hour and model (calibration is per team and model, so the best confidence of a cell is
 * calibrated after the read). A day's rows are few enough to group from the detections
 * themselves, through the (tenant_id, detected_at) index.
 *
 * Counted rows are what the Detections page lists: promoted, non-tentative call representatives
 * (`call_id IS NULL`: one row per stitched call) in the categories each team shows — the rows
 * /stats/dashboard counts.
 */
import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { categoryCondition, type VisibleCategories } from '../detections/category-sql.ts';
import { tunedRead } from './tuned-read.ts';

export interface DayScope {
  /** null: every team (a hub admin without tenantId) */
  tenantIds: readonly string[] | null;
  categories: VisibleCategories;
  satelliteId?: string;
  /** Lower-case species codes left out (the public page's sensitive species when it hides them). */
  omit?: readonly string[];
  /** The public page leaves rejected calls out of every figure. */
  withoutRejected?: boolean;
}

export const DayCell = shape({
  key: col.text(),
  code: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  tenantId: col.text(),
  modelId: col.text(),
  hour: col.int(),
  n: col.int(),
  best: col.num(),
  last: col.date(),
});
export type DayCell = RowOf<typeof DayCell>;

export function createDayRepo(db: Db) {
  const read = tunedRead(db);
  return {
    /** Counted calls in [from, to) by species, local hour in `timeZone`, team and model. */
    cells(s: DayScope, from: Date, to: Date, timeZone: string): Promise<DayCell[]> {
      const values: unknown[] = [];
      const add = (v: unknown) => {
        values.push(v);
        return `$${values.length}`;
      };
      const where = ['d.call_id IS NULL AND d.promoted AND NOT d.tentative'];
      if (s.tenantIds)
        where.push(s.tenantIds.length === 1 ? `d.tenant_id = ${add(s.tenantIds[0])}` : `d.tenant_id = ANY(${add(s.tenantIds)}::uuid[])`);
      where.push(`d.detected_at >= ${add(from)} AND d.detected_at < ${add(to)}`);
      if (s.satelliteId) where.push(`d.satellite_id = ${add(s.satelliteId)}::uuid`);
      if (s.omit?.length) where.push(`NOT (lower(d.species_code) = ANY(${add([...s.omit])}::text[]))`);
      if (s.withoutRejected) where.push(`d.verification_status <> 'rejected'`);
      where.push(categoryCondition(s.categories, s.tenantIds, add, 'd'));
      const zone = add(timeZone);
      return read(
        DayCell,
        `SELECT lower(d.species_code) AS key, max(d.species_code) AS code, max(d.common_name) AS "commonName",
           max(d.scientific_name) AS "scientificName", d.tenant_id::text AS "tenantId", d.model_id::text AS "modelId",
           extract(hour FROM d.detected_at AT TIME ZONE ${zone})::int AS hour,
           count(*)::int AS n, max(d.confidence) AS best, max(d.detected_at) AS last
         FROM detections d WHERE ${where.join(' AND ')}
         GROUP BY 1, 5, 6, 7`,
        values,
      );
    },
  };
}
