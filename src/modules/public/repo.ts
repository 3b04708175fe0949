/**
 * The public team page's read model: aggregates over the team's detections (call representatives,
 * promoted, not tentative, not rejected, in the categories the team shows, without the species left out)
 * and the team's satellites. Read-only, like the sessions read model.
 */
import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';

export const PublicTeamRow = shape({ id: col.text(), name: col.text(), slug: col.text(), description: col.text(), createdAt: col.date() });
export type PublicTeamRow = RowOf<typeof PublicTeamRow>;

const DetectionCounts = shape({ species: col.int(), detections: col.int() });
const TopSpeciesRow = shape({ code: col.text(), commonName: col.text(), scientificName: col.text(), detections: col.int() });
const FirstRow = shape({ code: col.text(), commonName: col.text(), scientificName: col.text(), firstAt: col.date() });
const DayRow = shape({ day: col.text(), detections: col.int() });
const Id = shape({ id: col.text() });

export interface Scope {
  tenantId: string;
  categories: readonly string[];
  /** Lower-case species codes the page leaves out. */
  omit: readonly string[];
}

/** The rows every figure of the page counts, as a WHERE clause over `d` with its parameters. */
function kept(s: Scope): { where: string; params: unknown[] } {
  return {
    // One row per call, as the dashboard counts (stats LISTED): a stitched call's continuations
    // (call_id set) are the same call, not more detections (issue 36 point 6).
    where: `d.tenant_id = $1 AND d.call_id IS NULL AND d.promoted AND NOT d.tentative AND d.verification_status <> 'rejected'
      AND d.category = ANY($2::text[]) AND NOT (lower(d.species_code) = ANY($3::text[]))`,
    params: [s.tenantId, [...s.categories], [...s.omit]],
  };
}

export function createPublicRepo(db: Db) {
  return {
    teamBySlug: (slug: string) =>
      db.maybeOne(PublicTeamRow, `SELECT id, name, slug, description, created_at AS "createdAt" FROM tenants WHERE slug = $1`, [slug]),

    async counts(s: Scope) {
      const k = kept(s);
      const [d, sat] = await Promise.all([
        db.one(
          DetectionCounts,
          `SELECT count(DISTINCT d.species_code)::int AS species, count(*)::int AS detections FROM detections d WHERE ${k.where}`,
          k.params,
        ),
        db.one(Count, `SELECT count(*)::int AS n FROM satellites WHERE tenant_id = $1 AND NOT archived`, [s.tenantId]),
      ]);
      return { species: d.species, detections: d.detections, devices: sat.n };
    },

    topSpecies: (s: Scope, limit: number) => {
      const k = kept(s);
      return db.query(
        TopSpeciesRow,
        `SELECT d.species_code AS code, max(d.common_name) AS "commonName", max(d.scientific_name) AS "scientificName", count(*)::int AS detections
         FROM detections d WHERE ${k.where}
         GROUP BY d.species_code ORDER BY count(*) DESC, d.species_code LIMIT ${Math.trunc(limit)}`,
        k.params,
      );
    },

    /** Species whose first kept detection falls at or after `since`. */
    firstsSince: (s: Scope, since: Date) => {
      const k = kept(s);
      return db.query(
        FirstRow,
        `SELECT d.species_code AS code, max(d.common_name) AS "commonName", max(d.scientific_name) AS "scientificName", min(d.detected_at) AS "firstAt"
         FROM detections d WHERE ${k.where}
         GROUP BY d.species_code HAVING min(d.detected_at) >= $4 ORDER BY min(d.detected_at) DESC`,
        [...k.params, since],
      );
    },

    /** Kept detections per local day (YYYY-MM-DD in `timeZone`) since `since`. */
    dailySince: (s: Scope, since: Date, timeZone: string) => {
      const k = kept(s);
      return db.query(
        DayRow,
        `SELECT to_char(d.detected_at AT TIME ZONE $5, 'YYYY-MM-DD') AS day, count(*)::int AS detections
         FROM detections d WHERE ${k.where} AND d.detected_at >= $4
         GROUP BY 1`,
        [...k.params, since, timeZone],
      );
    },

    satelliteIds: async (tenantId: string) =>
      (await db.query(Id, `SELECT id FROM satellites WHERE tenant_id = $1 AND NOT archived ORDER BY id`, [tenantId])).map((r) => r.id),
  };
}

export type PublicRepo = ReturnType<typeof createPublicRepo>;
