/**
 * The SQL of the /stats endpoints. Two readers serve every count (docs/stats.md):
 * - `hourly` regroups detection_hour_counts (migration 0021) into local days and hours when every
 *   UTC hour of the window lies in one local hour (a whole-hour zone, edges on whole hours);
 *   otherwise it groups the detections themselves with the same expressions.
 * - `periodic` sums detection_period_counts over the whole UTC months and days of each range and
 *   adds the partial days at the edges from the detections.
 * Both count what the Detections page lists: promoted, non-tentative call representatives in the
 * categories each team shows. Satellite, user, chunk and species names are read here (read only)
 * because the counts join them row for row.
 */
import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { categoryCondition, type VisibleCategories } from '../detections/category-sql.ts';
import { piecesOf, type Range } from './pieces.ts';
import { tunedRead } from './tuned-read.ts';

export interface Scope {
  /** null: every team (a hub admin without tenantId) */
  tenantIds: readonly string[] | null;
  categories: VisibleCategories;
  satelliteId?: string;
  /** lower-cased species code */
  species?: string;
}

/** One satellite's diversity sums over a window (see `diversityTerms`). */
export const DiversityTerms = shape({
  satellite: col.text(),
  species: col.int(),
  detections: col.num(),
  nLnN: col.num(),
  nSquared: col.num(),
});
export type DiversityTerms = RowOf<typeof DiversityTerms>;

/** Positional parameters of one statement. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** Listed rows of detections `d`: promoted, non-tentative call representatives. */
const LISTED = 'd.call_id IS NULL AND d.promoted AND NOT d.tentative';

function teamCondition(tenantIds: readonly string[] | null, p: Params, alias: string): string[] {
  if (!tenantIds) return [];
  // One team is `=`: PostgreSQL reads the index range under `=`, not always under `= ANY(array)`.
  return [tenantIds.length === 1 ? `${alias}.tenant_id = ${p.add(tenantIds[0])}` : `${alias}.tenant_id = ANY(${p.add(tenantIds)}::uuid[])`];
}

/** The raw-row conditions of a scope on detections `d` (window conditions added by the caller). */
function rawWhere(s: Scope, p: Params, satelliteIds?: readonly string[]): string[] {
  const where = [...teamCondition(s.tenantIds, p, 'd'), LISTED];
  if (s.satelliteId) where.push(`d.satellite_id = ${p.add(s.satelliteId)}::uuid`);
  if (satelliteIds) where.push(`d.satellite_id = ANY(${p.add(satelliteIds)}::uuid[])`);
  if (s.species) where.push(`lower(d.species_code) = ${p.add(s.species)}`);
  where.push(categoryCondition(s.categories, s.tenantIds, (v) => p.add(v), 'd'));
  return where;
}

/** `hourly`: a count by key (satellite or ''), local day ('' when not by day) and local hour (0 when not by hour). */
export const HourRow = shape({ key: col.text(), day: col.text(), hour: col.int(), n: col.int() });
export type HourRow = RowOf<typeof HourRow>;

/** `periodic`: sums of one range group by satellite and species ('' where not grouped). */
export const PeriodRow = shape({
  grp: col.int(),
  satellite: col.text(),
  code: col.text(),
  listed: col.int(),
  pendingReview: col.int(),
  confirmed: col.int(),
  rejected: col.int(),
});
export type PeriodRow = RowOf<typeof PeriodRow>;

const SatelliteHourRow = shape({ satellite: col.text(), grp: col.int(), hod: col.int(), n: col.int() });
const SatellitesOfSpecies = shape({ code: col.text(), satellites: col.int() });
const SpeciesNameRow = shape({
  key: col.text(),
  code: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  category: col.text(),
});
const SatelliteName = shape({ id: col.text(), name: col.text() });
const VoterRow = shape({
  userId: col.text(),
  name: col.text(),
  votes: col.int(),
  confirms: col.int(),
  rejects: col.int(),
  unsure: col.int(),
});
const At = shape({ at: col.date() });
const ConfidenceBin = shape({ bin: col.int(), n: col.int() });
const RecentRow = shape({
  id: col.text(),
  detectedAt: col.date(),
  satelliteId: col.text(),
  confidence: col.num(),
  verificationStatus: col.text(),
});

export function createStatsRepo(db: Db) {
  const read = tunedRead(db);
  return {
    /**
     * Counts in [from, to) grouped by local day and/or local hour in `zone`, and by satellite
     * when `bySatellite`. `aligned`: the hourly aggregate regroups exactly (window.ts hourAligned).
     */
    async hourly(
      s: Scope,
      w: { from: Date; to: Date; timeZone: string },
      by: { day: boolean; hour: boolean; bySatellite?: boolean },
      aligned: boolean,
    ): Promise<HourRow[]> {
      const p = new Params();
      const z = p.add(w.timeZone);
      const dayExpr = by.day ? `to_char(x.t AT TIME ZONE ${z}, 'YYYY-MM-DD')` : `''`;
      const hourExpr = by.hour ? `extract(hour FROM x.t AT TIME ZONE ${z})::int` : '0';
      // Satellite and species at once is no dim of the hourly table: those read the rows.
      const useAggregate = aligned && !(s.species && (s.satelliteId || by.bySatellite));
      let inner: string;
      if (useAggregate) {
        const where = teamCondition(s.tenantIds, p, 'c');
        if (by.bySatellite || s.satelliteId) {
          where.push(`c.dim = 'satellite'`);
          if (s.satelliteId) where.push(`c.key = ${p.add(s.satelliteId.toLowerCase())}`);
        } else if (s.species) where.push(`c.dim = 'species' AND c.key = ${p.add(s.species)}`);
        else where.push(`c.dim = 'all' AND c.key = ''`);
        where.push(`c.hour >= ${p.add(w.from)} AND c.hour < ${p.add(w.to)}`);
        where.push(categoryCondition(s.categories, s.tenantIds, (v) => p.add(v), 'c'));
        inner = `SELECT c.key, c.hour AS t, c.listed AS n FROM detection_hour_counts c WHERE ${where.join(' AND ')}`;
      } else {
        const where = rawWhere(s, p);
        where.push(`d.detected_at >= ${p.add(w.from)} AND d.detected_at < ${p.add(w.to)}`);
        inner = `SELECT ${by.bySatellite ? 'd.satellite_id::text' : `''`} AS key, d.detected_at AS t, 1 AS n FROM detections d WHERE ${where.join(' AND ')}`;
      }
      return read(
        HourRow,
        `SELECT x.key, ${dayExpr} AS day, ${hourExpr} AS hour, sum(x.n)::int AS n FROM (${inner}) x GROUP BY 1, 2, 3 HAVING sum(x.n) <> 0`,
        p.values,
      );
    },

    /**
     * Each satellite's counts per UTC hour of day and offset stretch (`grp` = index into
     * `segments`): whole UTC months and days from detection_hod_counts, the edges from the rows.
     * For an hour-aligned window; the caller turns UTC hours of day
     * into local ones with each stretch's offset.
     */
    async satelliteHours(s: Scope, segments: ReadonlyArray<{ from: Date; to: Date }>) {
      const { periods, raws } = piecesOf(segments.map((x, group) => ({ from: x.from, to: x.to, group })));
      const p = new Params();
      const parts: string[] = [];
      if (periods.length) {
        const where = [...teamCondition(s.tenantIds, p, 'c'), 'c.grain = w.grain', 'c.period = w.period'];
        if (s.satelliteId) where.push(`c.satellite = ${p.add(s.satelliteId.toLowerCase())}`);
        where.push(categoryCondition(s.categories, s.tenantIds, (v) => p.add(v), 'c'));
        parts.push(
          `SELECT w.grp, c.satellite, c.hod::int, c.listed * w.sign
           FROM unnest(${p.add(periods.map((x) => x.grain))}::text[], ${p.add(periods.map((x) => x.period))}::date[],
             ${p.add(periods.map((x) => x.group))}::int[], ${p.add(periods.map((x) => x.sign))}::int[]) AS w (grain, period, grp, sign)
           CROSS JOIN LATERAL (SELECT c.satellite, c.hod, c.listed FROM detection_hod_counts c WHERE ${where.join(' AND ')} OFFSET 0) c`,
        );
      }
      if (raws.length) {
        const where = rawWhere(s, p);
        parts.push(
          `SELECT r.grp, d.satellite_id::text, extract(hour FROM d.detected_at AT TIME ZONE 'UTC')::int, r.sign
           FROM unnest(${p.add(raws.map((r) => r.from))}::timestamptz[], ${p.add(raws.map((r) => r.to))}::timestamptz[],
             ${p.add(raws.map((r) => r.group))}::int[], ${p.add(raws.map((r) => r.sign))}::int[]) AS r (s, e, grp, sign)
           JOIN detections d ON d.detected_at >= r.s AND d.detected_at < r.e
           WHERE ${where.join(' AND ')}`,
        );
      }
      if (!parts.length) return [];
      return read(
        SatelliteHourRow,
        `SELECT x.satellite, x.grp, x.hod, sum(x.n)::int AS n FROM (${parts.join(' UNION ALL ')}) AS x (grp, satellite, hod, n)
         GROUP BY 1, 2, 3 HAVING sum(x.n) <> 0`,
        p.values,
      );
    },

    /**
     * Sums per range group, by satellite and/or species (`''` where not grouped), with the
     * verification states. `satelliteIds` narrows to those satellites.
     */
    async periodic(
      s: Scope,
      ranges: readonly Range[],
      by: { satellite: boolean; code: boolean },
      satelliteIds?: readonly string[],
    ): Promise<PeriodRow[]> {
      const { p, parts } = periodParts(s, ranges, by, satelliteIds);
      if (!parts.length) return [];
      const sat = by.satellite ? 'x.satellite' : `''`;
      const code = by.code ? 'x.code' : `''`;
      return read(
        PeriodRow,
        `SELECT x.grp, ${sat} AS satellite, ${code} AS code, sum(x.listed)::int AS listed, sum(x.pending_review)::int AS "pendingReview",
           sum(x.confirmed)::int AS confirmed, sum(x.rejected)::int AS rejected
         FROM (${parts.join(' UNION ALL ')}) AS x (grp, satellite, code, listed, pending_review, confirmed, rejected)
         GROUP BY 1, 2, 3 HAVING sum(x.listed) <> 0`,
        p.values,
      );
    },

    /** Per species over the ranges: how many satellites heard it (counted in SQL, as `diversityTerms`). */
    async satellitesPerSpecies(s: Scope, ranges: readonly Range[]): Promise<Array<{ code: string; satellites: number }>> {
      const { p, parts } = periodParts(s, ranges, { satellite: true, code: true });
      if (!parts.length) return [];
      return read(
        SatellitesOfSpecies,
        `SELECT y.code, count(*)::int AS satellites
         FROM (
           SELECT x.satellite, x.code FROM (${parts.join(' UNION ALL ')}) AS x (grp, satellite, code, listed, pending_review, confirmed, rejected)
           GROUP BY 1, 2 HAVING sum(x.listed) > 0
         ) y GROUP BY 1`,
        p.values,
      );
    },

    /**
     * Per satellite over the ranges: species heard (S), detections (N), Σ n ln n and Σ n² of the
     * per-species counts n, from which the diversity indices follow (indices.ts). Summed in SQL so
     * a month of satellite × species rows (~13,000 for 50 satellites × 300 species) never leaves
     * the database.
     */
    async diversityTerms(s: Scope, ranges: readonly Range[], satelliteIds?: readonly string[]): Promise<DiversityTerms[]> {
      const { p, parts } = periodParts(s, ranges, { satellite: true, code: true }, satelliteIds);
      if (!parts.length) return [];
      return read(
        DiversityTerms,
        `SELECT y.satellite, count(*)::int AS species, sum(y.n)::float8 AS detections, sum(y.n * ln(y.n))::float8 AS "nLnN",
           sum(y.n * y.n)::float8 AS "nSquared"
         FROM (
           SELECT x.satellite, x.code, sum(x.listed) AS n
           FROM (${parts.join(' UNION ALL ')}) AS x (grp, satellite, code, listed, pending_review, confirmed, rejected)
           GROUP BY 1, 2 HAVING sum(x.listed) > 0
         ) y GROUP BY 1`,
        p.values,
      );
    },

    /** Audio chunks received in [from, to). */
    async chunkCount(tenantIds: readonly string[] | null, from: Date, to: Date, satelliteId?: string): Promise<number> {
      const p = new Params();
      const where = [...teamCondition(tenantIds, p, 'k'), `k.recorded_at >= ${p.add(from)}`, `k.recorded_at < ${p.add(to)}`];
      if (satelliteId) where.push(`k.satellite_id = ${p.add(satelliteId)}::uuid`);
      const r = await db.one(Count, `SELECT count(*)::int AS n FROM chunks k WHERE ${where.join(' AND ')}`, p.values);
      return r.n;
    },

    /** Names of species keys (lower-cased codes): the catalog's, else the latest detection's. */
    async speciesNames(tenantIds: readonly string[] | null, keys: readonly string[]) {
      const names = new Map<string, { code: string; commonName: string; scientificName: string; category: string }>();
      if (!keys.length) return names;
      const rows = await db.query(
        SpeciesNameRow,
        `SELECT lower(code) AS key, code, common_name AS "commonName", scientific_name AS "scientificName", category
         FROM species WHERE lower(code) = ANY($1::text[])`,
        [keys],
      );
      for (const r of rows) names.set(r.key, r);
      const missing = keys.filter((k) => !names.has(k));
      if (missing.length) {
        const p = new Params();
        const where = [...teamCondition(tenantIds, p, 'd'), `lower(d.species_code) = ANY(${p.add(missing)}::text[])`];
        const more = await db.query(
          SpeciesNameRow,
          `SELECT DISTINCT ON (lower(d.species_code)) lower(d.species_code) AS key, d.species_code AS code, d.common_name AS "commonName",
             d.scientific_name AS "scientificName", d.category
           FROM detections d WHERE ${where.join(' AND ')} ORDER BY lower(d.species_code), d.detected_at DESC`,
          p.values,
        );
        for (const r of more) names.set(r.key, r);
      }
      return names;
    },

    /** Satellites of the teams (all, or those named), by name. */
    satellites(tenantIds: readonly string[] | null, ids?: readonly string[]) {
      const p = new Params();
      const where = teamCondition(tenantIds, p, 's');
      if (ids) where.push(`s.id = ANY(${p.add(ids)}::uuid[])`);
      return db.query(
        SatelliteName,
        `SELECT s.id, s.name FROM satellites s ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY s.name, s.id`,
        p.values,
      );
    },

    /**
     * Verification votes on listed detections of the window, per voter (names only, never
     * addresses), from the votes alone: each carries its detection's time, category, satellite,
     * species and whether it is listed (migration 0040; a trigger keeps `listed` in step).
     */
    leaderboard(s: Scope, from: Date, to: Date, limit: number) {
      const p = new Params();
      const where = [...teamCondition(s.tenantIds, p, 'v'), 'v.listed', `v.detected_at >= ${p.add(from)} AND v.detected_at < ${p.add(to)}`];
      if (s.satelliteId) where.push(`v.satellite_id = ${p.add(s.satelliteId)}::uuid`);
      if (s.species) where.push(`v.species_key = ${p.add(s.species)}`);
      where.push(categoryCondition(s.categories, s.tenantIds, (x) => p.add(x), 'v'));
      return read(
        VoterRow,
        `SELECT v.user_id AS "userId", u.name, count(*)::int AS votes, count(*) FILTER (WHERE v.vote = 'confirm')::int AS confirms,
           count(*) FILTER (WHERE v.vote = 'reject')::int AS rejects, count(*) FILTER (WHERE v.vote = 'unsure')::int AS unsure
         FROM detection_votes v JOIN users u ON u.id = v.user_id
         WHERE ${where.join(' AND ')}
         GROUP BY v.user_id, u.name ORDER BY votes DESC, u.name, v.user_id LIMIT ${p.add(limit)}`,
        p.values,
      );
    },

    /** First and last listed detection of a species in the window. */
    async firstLast(s: Scope, from: Date, to: Date) {
      const one = async (dir: 'ASC' | 'DESC') => {
        const p = new Params();
        const where = rawWhere(s, p);
        where.push(`d.detected_at >= ${p.add(from)} AND d.detected_at < ${p.add(to)}`);
        const r = await db.maybeOne(
          At,
          `SELECT d.detected_at AS at FROM detections d WHERE ${where.join(' AND ')} ORDER BY d.detected_at ${dir} LIMIT 1`,
          p.values,
        );
        return r ? new Date(r.at).toISOString() : null;
      };
      const [first, last] = await Promise.all([one('ASC'), one('DESC')]);
      return { first, last };
    },

    /** Listed detections per tenth of confidence (the last bin holds 1.0). */
    confidenceBins(s: Scope, from: Date, to: Date) {
      const p = new Params();
      const where = rawWhere(s, p);
      where.push(`d.detected_at >= ${p.add(from)} AND d.detected_at < ${p.add(to)}`);
      return db.query(
        ConfidenceBin,
        `SELECT least(floor(d.confidence * 10)::int, 9) AS bin, count(*)::int AS n FROM detections d WHERE ${where.join(' AND ')} GROUP BY 1`,
        p.values,
      );
    },

    /** The latest listed detections of the window. */
    recent(s: Scope, from: Date, to: Date, limit: number) {
      const p = new Params();
      const where = rawWhere(s, p);
      where.push(`d.detected_at >= ${p.add(from)} AND d.detected_at < ${p.add(to)}`);
      return db.query(
        RecentRow,
        `SELECT d.id, d.detected_at AS "detectedAt", d.satellite_id AS "satelliteId", d.confidence, d.verification_status AS "verificationStatus"
         FROM detections d WHERE ${where.join(' AND ')} ORDER BY d.detected_at DESC, d.id DESC LIMIT ${p.add(limit)}`,
        p.values,
      );
    },
  };
}

export type StatsRepo = ReturnType<typeof createStatsRepo>;

/**
 * The signed pieces of the ranges (pieces.ts) as one UNION ALL's parts: aggregate rows of the
 * dims `by` needs, and detections for the edges; columns grp, satellite, code, listed,
 * pending_review, confirmed, rejected.
 */
function periodParts(
  s: Scope,
  ranges: readonly Range[],
  by: { satellite: boolean; code: boolean },
  satelliteIds?: readonly string[],
): { p: Params; parts: string[] } {
  const { periods, raws } = piecesOf(ranges);
  const p = new Params();
  const satKey = by.satellite || s.satelliteId || satelliteIds;
  const codeKey = by.code || s.species;
  const dims = satKey && codeKey ? 'pair' : satKey ? 'satellite' : codeKey ? 'species' : 'all';
  const parts: string[] = [];
  if (periods.length) {
    const where = [...teamCondition(s.tenantIds, p, 'c'), `c.dims = ${p.add(dims)}`, 'c.grain = w.grain', 'c.period = w.period'];
    if (s.satelliteId) where.push(`c.satellite = ${p.add(s.satelliteId.toLowerCase())}`);
    if (satelliteIds) where.push(`c.satellite = ANY(${p.add(satelliteIds.map((i) => i.toLowerCase()))}::text[])`);
    if (s.species) where.push(`c.code = ${p.add(s.species)}`);
    where.push(categoryCondition(s.categories, s.tenantIds, (v) => p.add(v), 'c'));
    // OFFSET 0 keeps the lateral subquery apart: one primary-key range per period, never a scan of the table.
    parts.push(
      `SELECT w.grp, c.satellite, c.code, c.listed * w.sign, c.pending_review * w.sign, c.confirmed * w.sign, c.rejected * w.sign
       FROM unnest(${p.add(periods.map((x) => x.grain))}::text[], ${p.add(periods.map((x) => x.period))}::date[],
         ${p.add(periods.map((x) => x.group))}::int[], ${p.add(periods.map((x) => x.sign))}::int[]) AS w (grain, period, grp, sign)
       CROSS JOIN LATERAL (SELECT c.satellite, c.code, c.listed, c.pending_review, c.confirmed, c.rejected
         FROM detection_period_counts c WHERE ${where.join(' AND ')} OFFSET 0) c`,
    );
  }
  if (raws.length) {
    const where = rawWhere(s, p, satelliteIds);
    parts.push(
      `SELECT r.grp, d.satellite_id::text, lower(d.species_code), r.sign, (d.verification_status = 'pending_review')::int * r.sign,
         (d.verification_status = 'confirmed')::int * r.sign, (d.verification_status = 'rejected')::int * r.sign
       FROM unnest(${p.add(raws.map((r) => r.from))}::timestamptz[], ${p.add(raws.map((r) => r.to))}::timestamptz[],
         ${p.add(raws.map((r) => r.group))}::int[], ${p.add(raws.map((r) => r.sign))}::int[]) AS r (s, e, grp, sign)
       JOIN detections d ON d.detected_at >= r.s AND d.detected_at < r.e
       WHERE ${where.join(' AND ')}`,
    );
  }
  return { p, parts };
}
