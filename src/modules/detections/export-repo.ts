/**
 * What an export reads of the detections table (issue 18, 34): the rows the Detections page lists
 * under the export's filter, oldest first, either as rows for the writers built in JavaScript or
 * as finished lines the database writes itself (CSV and JSON: src/modules/exports/formats/lines-sql.ts).
 */
import type { Readable } from 'node:stream';
import { col, shape, type CopyColumnOptions, type Db, type RowOf } from '../../infra/db/index.ts';
import { CALL_END, Params, utcIso, VERIFICATION_STATUSES, whereOf, type DetectionListFilter } from './list-sql.ts';

/**
 * What an export lists of a detection (its rows are the exports' ExportRow, src/modules/exports/types.ts):
 * the call from its start to its end, and the satellite's name and position. ISO 8601 UTC times.
 * The satellite always exists (detections.satellite_id is NOT NULL, ON DELETE CASCADE): the join is inner.
 */
const EXPORT_ROW = `d.id, d.tenant_id AS "tenantId", ${utcIso('d.detected_at')} AS "detectedAt", ${utcIso(CALL_END)} AS "endAt",
  d.species_code AS "speciesCode", d.common_name AS "commonName", d.scientific_name AS "scientificName", d.category, d.confidence,
  d.satellite_id AS "satelliteId", s.name AS "satelliteName", s.latitude, s.longitude, d.verification_status AS "verificationStatus",
  d.chunk_id AS "chunkId", d.call_chunks AS "callChunks", d.model_id AS "modelId", d.is_rare AS "isRare"`;
export const DetectionExportRow = shape({
  id: col.text(),
  tenantId: col.text(),
  /** When the call starts. */
  detectedAt: col.text(),
  /** When the call ends (its last chunk's window). */
  endAt: col.text(),
  speciesCode: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  category: col.text(),
  confidence: col.num(),
  satelliteId: col.text(),
  satelliteName: col.text(),
  latitude: col.nullable(col.num()),
  longitude: col.nullable(col.num()),
  verificationStatus: col.oneOf(VERIFICATION_STATUSES),
  /** The chunk holding the call's first window (GET /audio/:chunkId). */
  chunkId: col.text(),
  /** Chunks the stitched call spans (1 for a single window). */
  callChunks: col.int(),
  modelId: col.text(),
  isRare: col.bool(),
});
export type DetectionExportRow = RowOf<typeof DetectionExportRow>;

/** Where the export's scan goes on from: the last row of the batch before. */
export interface ExportKeyset {
  detectedAt: string;
  id: string;
}

/**
 * An export's line as SQL over detections `d` and satellites `s` (values through `add`, the
 * statement's parameters): the line itself (NULL for a row the format leaves out), and the condition that makes a row one whose place
 * in the file must not tell its time (a sensitive species outside the team; `false` for none).
 */
export type ExportLineSql = (add: (value: unknown) => string) => {
  line: string;
  coarsened: string;
  /** Written a UTC day at a time (exportLinesStatement): a file the hub deflates whole. */
  dayByDay?: boolean;
  /**
   * Cells that depend on the satellite alone, as SQL over satellites `s` by name (a plain
   * identifier): computed once a satellite, and read by the line as `sp.<name>`. The statement
   * then joins them in place of satellites `s`, so the line reads no other satellite column.
   */
  satelliteCells?: Readonly<Record<string, string>>;
};

/**
 * A whole statement of the team's detections `d` and satellites `s` under the export's filter
 * (`where`: its WHERE clause, empty for none), values through `add`; its one column is the file's
 * text (eBird: a checklist a row, src/modules/exports/formats/ebird-lines.ts).
 */
export type ExportTeamStatement = (add: (value: unknown) => string, where: string) => string;

const Satellite = shape({ name: col.text(), latitude: col.nullable(col.num()), longitude: col.nullable(col.num()) });

/** A line (null: left out) with the key it was read at (the next batch goes on from it) and whether it is coarsened. */
const ExportLineRow = shape({ line: col.nullable(col.text()), id: col.text(), detectedAt: col.text(), coarsened: col.bool() });
export type ExportLineRow = RowOf<typeof ExportLineRow>;

const Text = shape({ v: col.text() });

/** A row's exact time, microseconds kept, as the key a batch goes on from. */
const exactIso = (c: string) => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The statement of an export's scan: the rows after `after`, oldest first, at most `limit` (all
 * when null), with `select`'s columns (the export row's by default). Exported so the export bench
 * runs the very same text under COPY as its floor.
 */
export function exportScanStatement(
  f: DetectionListFilter,
  after: ExportKeyset | null,
  limit: number | null,
  select: (add: (value: unknown) => string) => string = () => EXPORT_ROW,
): { sql: string; params: unknown[] } {
  const p = new Params();
  const columns = select((v) => p.add(v));
  let where = whereOf(f, p, f.start, f.end);
  if (after) {
    const keyset = `(d.detected_at, d.id) > (${p.add(after.detectedAt)}::timestamptz, ${p.add(after.id)}::uuid)`;
    where = where ? `${where} AND ${keyset}` : `WHERE ${keyset}`;
  }
  return {
    sql: `SELECT ${columns} FROM detections d JOIN satellites s ON s.id = d.satellite_id
         ${where} ORDER BY d.detected_at, d.id${limit === null ? '' : ` LIMIT ${p.add(limit)}`}`,
    params: p.values,
  };
}

/** Where a coarsened row goes (reorderCoarsened): after the rows of its UTC hour, before those of the next, by id. */
const lineOrder = (coarsened: string) =>
  coarsened === 'false'
    ? 'd.detected_at, d.id'
    : `CASE WHEN ${coarsened} THEN date_trunc('hour', d.detected_at, 'UTC') + interval '1 hour' ELSE d.detected_at END, ${coarsened} DESC, d.id`;

/**
 * The statement that writes every line of an export under COPY. One statement over the whole
 * filter lets PostgreSQL build the lines in parallel workers, but it sorts the finished lines
 * before sending the first: fine where the hub only passes the bytes on (CSV, JSON), while a file
 * the hub deflates whole (Darwin Core) left the hub idle for seconds and then PostgreSQL idle
 * while the hub deflated. Such a line asks for `dayByDay`: a UTC day at a time, each day's rows by
 * an index range scan, put in order in memory and sent before the next day is read, so the two
 * work side by side (docs/exports.md "Performance"). A coarsened row's place (the end of its UTC
 * hour) lies within its own day, so the days' order is the file's.
 */
function exportLinesStatement(f: DetectionListFilter, line: ExportLineSql): { sql: string; params: unknown[] } {
  const p = new Params();
  const l = line((v) => p.add(v));
  const order = lineOrder(l.coarsened);
  const where = whereOf(f, p, f.start, f.end);
  const perSatellite = Object.entries(l.satelliteCells ?? {});
  const teams = () => (f.tenantIds ? ` WHERE s.tenant_id = ANY(${p.add(f.tenantIds)}::uuid[])` : '');
  // MATERIALIZED: a CTE inlined into the join would compute its cells for every row again.
  const withCells = perSatellite.length
    ? `WITH sp AS MATERIALIZED (SELECT s.id, ${perSatellite.map(([name, sql]) => `${sql} AS ${name}`).join(', ')} FROM satellites s${teams()}) `
    : '';
  const from = perSatellite.length
    ? 'FROM detections d JOIN sp ON sp.id = d.satellite_id'
    : 'FROM detections d JOIN satellites s ON s.id = d.satellite_id';
  if (!l.dayByDay) return { sql: `${withCells}SELECT ${l.line} ${from} ${where} ORDER BY ${order}`, params: p.values };
  // 24 hours, not '1 day': under the team's zone (the COPY session's) a day can have 23 or 25.
  const day = `d.detected_at >= days.d0 AND d.detected_at < days.d0 + interval '24 hours'`;
  return {
    sql: `${withCells}SELECT x.line FROM (SELECT min(d.detected_at) AS lo, max(d.detected_at) AS hi FROM detections d ${where}) b
        CROSS JOIN generate_series(date_trunc('day', b.lo, 'UTC'), b.hi, interval '24 hours') AS days(d0)
        CROSS JOIN LATERAL (SELECT ${l.line} AS line ${from} ${where ? `${where} AND` : 'WHERE'} ${day} ORDER BY ${order}) x`,
    params: p.values,
  };
}

export function createExportScanRepo(db: Db) {
  return {
    /** Whether lineBytes streams (the database has COPY). */
    streams: Boolean(db.copyColumn),

    /** One batch of export rows after `after` (keyset on detected_at, id, which the team's time index reads in order). */
    rows(f: DetectionListFilter, after: ExportKeyset | null, limit: number) {
      const q = exportScanStatement(f, after, limit);
      return db.query(DetectionExportRow, q.sql, q.params);
    },

    /** One batch of lines after `after`, each with its key and whether it is coarsened. */
    lines(f: DetectionListFilter, line: ExportLineSql, after: ExportKeyset | null, limit: number) {
      const q = exportScanStatement(f, after, limit, (add) => {
        const l = line(add);
        return `${l.line} AS line, d.id, ${exactIso('d.detected_at')} AS "detectedAt", ${l.coarsened} AS coarsened`;
      });
      return db.query(ExportLineRow, q.sql, q.params);
    },

    /**
     * The team's species names and satellite names that are not plain ASCII: what a file in
     * another character set must spell its own way (iNaturalist's Latin-1) before the database
     * writes its lines.
     */
    async nonAsciiNames(tenantId: string) {
      const rows = await db.query(
        Text,
        `SELECT v FROM (SELECT common_name AS v FROM detection_name_pairs WHERE tenant_id = $1
            UNION SELECT scientific_name FROM detection_name_pairs WHERE tenant_id = $1
            UNION SELECT name FROM satellites WHERE tenant_id = $1) n
         WHERE v !~ '^[\x01-\x7f]*$'`,
        [tenantId],
      );
      return rows.map((r) => r.v);
    },

    /**
     * What a file aggregated by the database names besides the rows (eBird): the team's species
     * keys (lower-case codes, from the day counts, not the rows), the hub's model ids, and the
     * team's satellites with their places.
     */
    async teamFacts(tenantId: string) {
      const [species, models, satellites] = await Promise.all([
        db.query(Text, `SELECT DISTINCT key AS v FROM detection_day_counts WHERE tenant_id = $1 AND dim = 'species'`, [tenantId]),
        db.query(Text, 'SELECT id AS v FROM inference_models', []),
        db.query(Satellite, 'SELECT name, latitude, longitude FROM satellites WHERE tenant_id = $1', [tenantId]),
      ]);
      return { speciesKeys: species.map((r) => r.v), models: models.map((r) => r.v), satellites };
    },

    /** A whole statement's text as bytes under COPY (Db.copyColumn); null where the database has no COPY stream. */
    statementBytes(f: DetectionListFilter, statement: ExportTeamStatement, opts: CopyColumnOptions): Readable | null {
      if (!db.copyColumn) return null;
      const p = new Params();
      const where = whereOf(f, p, f.start, f.end);
      return db.copyColumn(
        statement((v) => p.add(v), where),
        p.values,
        opts,
      );
    },

    /**
     * Every line as bytes, end to end, in one statement under COPY (PostgreSQL: no JavaScript row
     * per detection; Db.copyColumn); null where the database has no COPY stream (PGlite).
     */
    lineBytes(f: DetectionListFilter, line: ExportLineSql, opts: CopyColumnOptions): Readable | null {
      if (!db.copyColumn) return null;
      const q = exportLinesStatement(f, line);
      return db.copyColumn(q.sql, q.params, opts);
    },
  };
}
