/**
 * Recording sessions, derived (spec hub-http-api §2 "Session", §8 "Session gap"): a read model
 * over chunks and detections, like stats. A satellite's chunks in time order form one session
 * until the silence between one chunk's end and the next chunk's start reaches SESSION_GAP.
 * Computed with window functions, so it runs the same on PGlite and PostgreSQL.
 */
import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { categoryCondition, type VisibleCategories } from '../detections/category-sql.ts';

export const SESSION_GAP_MINUTES = 5;

export interface SessionFilter {
  /** null: every team (hub admins without a tenantId). */
  tenantIds: string[] | null;
  satelliteId?: string;
  filter?: 'with-detections' | 'empty';
  /** Only chunks recorded in [start, end): bounds the work on long histories (a session crossing a bound is cut there). */
  start?: Date;
  end?: Date;
  sortBy: 'date' | 'duration' | 'detections' | 'species' | 'chunks';
  sortDir: 'asc' | 'desc';
  limit: number;
  offset: number;
  /** Detections in categories their team hides are not counted; absent: every category (the service always sets it). */
  categories?: VisibleCategories;
}

export const SessionRow = shape({
  id: col.text(),
  tenantId: col.text(),
  satelliteId: col.text(),
  satelliteName: col.nullable(col.text()),
  start: col.date(),
  end: col.date(),
  chunkCount: col.int(),
  detectionCount: col.int(),
  speciesCount: col.int(),
  topSpecies: col.nullable(col.json<Array<{ speciesCode: string; commonName: string; count: number }>>()),
  total: col.int(),
});
export type SessionRow = RowOf<typeof SessionRow>;

const Found = shape({ found: col.int() });
const TimelineChunk = shape({ id: col.text(), recordedAt: col.date(), durationMs: col.int() });
const TimelineDetection = shape({
  id: col.text(),
  audioChunkId: col.text(),
  speciesCode: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  confidence: col.num(),
  modelId: col.text(),
  detectedAt: col.date(),
  startMs: col.int(),
  endMs: col.int(),
  callChunks: col.int(),
  callEndAt: col.date(),
  verificationStatus: col.text(),
});

const SORT: Record<SessionFilter['sortBy'], string> = {
  date: 's.start',
  duration: 's."end" - s.start',
  detections: 's.detection_count',
  species: 's.species_count',
  chunks: 's.chunk_count',
};

/** Rows a session counts: what the Detections page lists (promoted, one row per stitched call, in categories the team shows). */
const LISTED = 'NOT d.tentative AND d.call_id IS NULL';

export function createSessionsRepo(db: Db) {
  return {
    async list(f: SessionFilter): Promise<{ rows: SessionRow[]; total: number }> {
      const params: unknown[] = [];
      const p = (v: unknown) => {
        params.push(v);
        return `$${params.length}`;
      };
      const where: string[] = [];
      if (f.tenantIds) where.push(`c.tenant_id = ANY(${p(f.tenantIds)}::uuid[])`);
      if (f.satelliteId) where.push(`c.satellite_id = ${p(f.satelliteId)}`);
      if (f.start) where.push(`c.recorded_at >= ${p(f.start)}`);
      if (f.end) where.push(`c.recorded_at < ${p(f.end)}`);
      const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
      const having =
        f.filter === 'with-detections' ? 'WHERE s.detection_count > 0' : f.filter === 'empty' ? 'WHERE s.detection_count = 0' : '';
      const dir = f.sortDir === 'asc' ? 'ASC' : 'DESC';
      const gap = p(`${SESSION_GAP_MINUTES} minutes`);
      const shown = f.categories ? ` AND ${categoryCondition(f.categories, f.tenantIds, p)}` : '';
      const rows = await db.query(
        SessionRow,
        `WITH marked AS (
           SELECT c.id, c.tenant_id, c.satellite_id, c.recorded_at, c.recorded_at + c.duration_ms * interval '1 millisecond' AS ends_at,
             CASE WHEN c.recorded_at - lag(c.recorded_at + c.duration_ms * interval '1 millisecond') OVER w < ${gap}::interval THEN 0 ELSE 1 END AS starts
           FROM chunks c ${w}
           WINDOW w AS (PARTITION BY c.satellite_id ORDER BY c.recorded_at, c.id)
         ), numbered AS (
           SELECT *, sum(starts) OVER (PARTITION BY satellite_id ORDER BY recorded_at, id ROWS UNBOUNDED PRECEDING) AS session_no FROM marked
         ), per_species AS (
           SELECT n.satellite_id, n.session_no, d.species_code, min(d.common_name) AS common_name, count(*)::int AS n
           FROM numbered n JOIN detections d ON d.chunk_id = n.id AND ${LISTED}${shown}
           GROUP BY n.satellite_id, n.session_no, d.species_code
         ), species AS (
           SELECT satellite_id, session_no, sum(n)::int AS detection_count, count(*)::int AS species_count,
             (array_agg(json_build_object('speciesCode', species_code, 'commonName', common_name, 'count', n) ORDER BY n DESC, species_code))[1:3] AS top_species
           FROM per_species GROUP BY satellite_id, session_no
         ), sessions AS (
           SELECT n.satellite_id, n.session_no, min(n.tenant_id::text) AS tenant_id, (array_agg(n.id ORDER BY n.recorded_at, n.id))[1] AS id,
             min(n.recorded_at) AS start, max(n.ends_at) AS "end", count(*)::int AS chunk_count
           FROM numbered n GROUP BY n.satellite_id, n.session_no
         ), s AS (
           SELECT se.*, coalesce(sp.detection_count, 0) AS detection_count, coalesce(sp.species_count, 0) AS species_count, sp.top_species
           FROM sessions se LEFT JOIN species sp ON sp.satellite_id = se.satellite_id AND sp.session_no = se.session_no
         )
         SELECT s.id, s.tenant_id AS "tenantId", s.satellite_id AS "satelliteId", sat.name AS "satelliteName", s.start, s."end",
           s.chunk_count AS "chunkCount", s.detection_count AS "detectionCount", s.species_count AS "speciesCount",
           to_json(s.top_species) AS "topSpecies", count(*) OVER ()::int AS total
         FROM s LEFT JOIN satellites sat ON sat.id = s.satellite_id
         ${having}
         ORDER BY ${SORT[f.sortBy]} ${dir}, s.start ${dir}, s.satellite_id ${dir}
         LIMIT ${p(f.limit)} OFFSET ${p(f.offset)}`,
        params,
      );
      // A page past the end has no row to carry the total: count again without paging.
      let total = rows[0]?.total ?? 0;
      if (rows.length === 0 && f.offset > 0) total = (await this.list({ ...f, offset: 0, limit: 1 })).total;
      return { rows, total };
    },

    satelliteInTeam: async (tenantId: string, satelliteId: string) =>
      (await db.maybeOne(Found, 'SELECT 1 AS found FROM satellites WHERE id = $1 AND tenant_id = $2', [satelliteId, tenantId])) !== null,

    /** A satellite's chunks that overlap [from, to). */
    chunksIn: (tenantId: string, satelliteId: string, from: Date, to: Date) =>
      db.query(
        TimelineChunk,
        `SELECT id, recorded_at AS "recordedAt", duration_ms AS "durationMs" FROM chunks
         WHERE tenant_id = $1 AND satellite_id = $2 AND recorded_at < $4 AND recorded_at >= $3::timestamptz - interval '1 minute'
           AND recorded_at + duration_ms * interval '1 millisecond' > $3
         ORDER BY recorded_at, id`,
        [tenantId, satelliteId, from, to],
      ),

    /** The satellite's listed detections (promoted call representatives in `categories`, those the team shows) in [from, to). */
    detectionsIn: (tenantId: string, satelliteId: string, from: Date, to: Date, categories: readonly string[]) =>
      db.query(
        TimelineDetection,
        `SELECT d.id, d.chunk_id AS "audioChunkId", d.species_code AS "speciesCode", d.common_name AS "commonName", d.scientific_name AS "scientificName",
           d.confidence, d.model_id AS "modelId", d.detected_at AS "detectedAt", d.start_ms AS "startMs", d.end_ms AS "endMs", d.call_chunks AS "callChunks",
           coalesce(d.call_end_at, d.detected_at + (d.end_ms - d.start_ms) * interval '1 millisecond') AS "callEndAt", d.verification_status AS "verificationStatus"
         FROM detections d
         WHERE d.tenant_id = $1 AND d.satellite_id = $2 AND d.detected_at >= $3 AND d.detected_at < $4 AND ${LISTED} AND d.category = ANY($5::text[])
         ORDER BY d.detected_at, d.id`,
        [tenantId, satelliteId, from, to, [...categories]],
      ),
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
