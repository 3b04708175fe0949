/**
 * The detections the weather correlation, expected species and map views count. Like every
 * stats view they count what the Detections page lists (spec §4 Stats note): promoted, not
 * tentative, one row per stitched call (call_id IS NULL), in the categories the team shows.
 */
import { col, shape, type Db } from '../../infra/db/index.ts';
import { categoryCondition, type VisibleCategories } from '../detections/category-sql.ts';
import { piecesOf } from './pieces.ts';
import { tunedRead } from './tuned-read.ts';

const MAP_SETTINGS = { enable_sort: 'off', work_mem: '16MB' } as const;

const HOUR = 3_600_000;
/** Up to this many satellites, the pair rows are filtered by satellite in SQL. */
const FEW_SATELLITES = 8;

/** Counted detections of a satellite in one UTC hour (hours since the epoch). */
const HourCount = shape({ satelliteId: col.text(), hour: col.int(), count: col.int() });
/** A satellite's counted detections and species of a window. */
const SatelliteSums = shape({ satellite: col.text(), listed: col.int(), species: col.int() });
const Latest = shape({ satelliteId: col.text(), at: col.date() });
const SpeciesHeard = shape({
  code: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  count: col.int(),
  lastDetectedAt: col.date(),
});
/** A counted detection where its chunk was recorded (only chunks with a position). */
const Point = shape({
  detectionId: col.text(),
  satelliteId: col.text(),
  speciesCode: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  confidence: col.num(),
  detectedAt: col.date(),
  latitude: col.num(),
  longitude: col.num(),
});

export interface GeoFilter {
  /** The teams counted; null: every team (a hub admin without ?tenantId=). */
  tenantIds: readonly string[] | null;
  start: Date;
  end: Date;
  /** The categories each team shows (detections/visibility.ts). */
  visible: VisibleCategories;
  satelliteIds: readonly string[];
  species?: string;
  /** Only this category besides visibility (eBird lists birds). */
  category?: string;
}

/**
 * The WHERE of counted detections under a filter, alias `d`; `values` receives its parameters.
 * `satellite`: an SQL expression the satellite must equal instead of the filter's list.
 */
function counted(f: GeoFilter, values: unknown[], satellite?: string): string {
  const add = (v: unknown) => `$${values.push(v)}`;
  const parts = [
    `d.detected_at >= ${add(f.start)}`,
    `d.detected_at < ${add(f.end)}`,
    'd.promoted',
    'NOT d.tentative',
    'd.call_id IS NULL',
    categoryCondition(f.visible, f.tenantIds, add, 'd'),
    satellite ? `d.satellite_id = ${satellite}` : `d.satellite_id = ANY(${add([...f.satelliteIds])}::uuid[])`,
  ];
  if (f.tenantIds)
    parts.unshift(
      f.tenantIds.length === 1 ? `d.tenant_id = ${add(f.tenantIds[0])}` : `d.tenant_id = ANY(${add([...f.tenantIds])}::uuid[])`,
    );
  if (f.category) parts.push(`d.category = ${add(f.category)}`);
  if (f.species) parts.push(`lower(d.species_code) = ${add(f.species.toLowerCase())}`);
  return parts.join(' AND ');
}

export function createGeoRepo(db: Db) {
  const readMap = tunedRead(db, MAP_SETTINGS);
  return {
    /**
     * Counted detections per satellite and UTC hour (hours since the epoch); hours without any are
     * absent. From the hourly aggregate (0021) when the window starts and ends on whole hours and
     * no species is asked (the aggregate has no satellite × species rows), else from the rows.
     */
    hourlyCounts(f: GeoFilter) {
      const values: unknown[] = [];
      const add = (v: unknown) => `$${values.push(v)}`;
      if (!f.species && f.start.getTime() % HOUR === 0 && f.end.getTime() % HOUR === 0) {
        const where = [
          `c.dim = 'satellite'`,
          `c.key = ANY(${add(f.satelliteIds.map((id) => id.toLowerCase()))}::text[])`,
          `c.hour >= ${add(f.start)}`,
          `c.hour < ${add(f.end)}`,
          categoryCondition(f.visible, f.tenantIds, add, 'c'),
        ];
        if (f.tenantIds)
          where.unshift(
            f.tenantIds.length === 1 ? `c.tenant_id = ${add(f.tenantIds[0])}` : `c.tenant_id = ANY(${add([...f.tenantIds])}::uuid[])`,
          );
        return db.query(
          HourCount,
          `SELECT c.key AS "satelliteId", floor(extract(epoch FROM c.hour) / 3600)::int AS hour, sum(c.listed)::int AS count
           FROM detection_hour_counts c WHERE ${where.join(' AND ')} GROUP BY 1, 2 HAVING sum(c.listed) <> 0`,
          values,
        );
      }
      return db.query(
        HourCount,
        `SELECT d.satellite_id AS "satelliteId", floor(extract(epoch FROM d.detected_at) / 3600)::int AS hour, count(*)::int AS count
         FROM detections d WHERE ${counted(f, values)} GROUP BY 1, 2`,
        values,
      );
    },

    /**
     * Per satellite: counted detections and distinct species of the window from the period
     * aggregates (stats repo), and its latest counted detection, read newest first per satellite.
     */
    async satelliteSummaries(f: GeoFilter) {
      const [pairs, latest] = await Promise.all([
        (() => {
          // Signed month and day pieces from the satellite × species aggregate and edge rows (pieces.ts),
          // summed per species first so a species only in a subtracted piece is not counted.
          const { periods, raws } = piecesOf([{ from: f.start, to: f.end, group: 0 }]);
          const values: unknown[] = [];
          const add = (v: unknown) => `$${values.push(v)}`;
          const parts: string[] = [];
          if (periods.length) {
            const where = [`c.dims = 'pair'`, categoryCondition(f.visible, f.tenantIds, add, 'c')];
            // A test of a long list on every one of a year's pair rows costs more than summing the
            // rows of satellites nobody asked for, which are dropped below; a few satellites are selective.
            if (f.satelliteIds.length <= FEW_SATELLITES)
              where.push(`c.satellite = ANY(${add(f.satelliteIds.map((id) => id.toLowerCase()))}::text[])`);
            if (f.tenantIds)
              where.unshift(
                f.tenantIds.length === 1 ? `c.tenant_id = ${add(f.tenantIds[0])}` : `c.tenant_id = ANY(${add([...f.tenantIds])}::uuid[])`,
              );
            if (f.species) where.push(`c.code = ${add(f.species.toLowerCase())}`);
            parts.push(
              `SELECT c.satellite, c.code, c.listed, w.sign
               FROM unnest(${add(periods.map((x) => x.grain))}::text[], ${add(periods.map((x) => x.period))}::date[], ${add(periods.map((x) => x.sign))}::int[]) AS w (grain, period, sign)
               JOIN detection_period_counts c ON c.grain = w.grain AND c.period = w.period
               WHERE ${where.join(' AND ')}`,
            );
          }
          for (const r of raws) {
            const where = counted({ ...f, start: r.from, end: r.to }, values);
            parts.push(`SELECT d.satellite_id::text, lower(d.species_code), 1, ${r.sign === -1 ? -1 : 1} FROM detections d WHERE ${where}`);
          }
          // A year is ~150,000 satellite × species rows. The planner, expecting a few thousand,
          // sorts them to group them (spilling to disk at the default work_mem); grouping them in a
          // hash table takes a third of the time, so sorting is ruled out for this one query, and
          // the hash table is given the memory those groups need rather than spilling in its turn.
          return readMap(
            SatelliteSums,
            `SELECT y.satellite, sum(y.n)::int AS listed, (count(*) FILTER (WHERE y.n > 0))::int AS species
               FROM (
                 SELECT x.satellite COLLATE "C" AS satellite, x.code COLLATE "C" AS code, sum(x.listed * x.sign) AS n
                 FROM (${parts.join(' UNION ALL ')}) AS x (satellite, code, listed, sign) GROUP BY 1, 2
               ) y GROUP BY 1`,
            values,
          );
        })(),
        (() => {
          const values: unknown[] = [];
          const ids = `$${values.push([...f.satelliteIds])}`;
          return db.query(
            Latest,
            `SELECT s.id AS "satelliteId", l.at FROM unnest(${ids}::uuid[]) AS s (id)
             CROSS JOIN LATERAL (
               SELECT d.detected_at AS at FROM detections d WHERE ${counted(f, values, 's.id')} ORDER BY d.detected_at DESC LIMIT 1
             ) l`,
            values,
          );
        })(),
      ]);
      const out = new Map<string, { detectionCount: number; speciesCount: number; lastDetectionAt: Date | null }>();
      const asked = new Set(f.satelliteIds.map((id) => id.toLowerCase()));
      for (const r of pairs) {
        if (!asked.has(r.satellite.toLowerCase())) continue;
        const e = out.get(r.satellite.toLowerCase()) ?? { detectionCount: 0, speciesCount: 0, lastDetectionAt: null };
        e.detectionCount += r.listed;
        e.speciesCount = r.species;
        out.set(r.satellite.toLowerCase(), e);
      }
      for (const l of latest) {
        const key = l.satelliteId.toLowerCase();
        const e = out.get(key) ?? { detectionCount: 0, speciesCount: 0, lastDetectionAt: null };
        e.lastDetectionAt = l.at;
        out.set(key, e);
      }
      return out;
    },

    /** Counted detections per species (what the team heard), most first. */
    speciesHeard(f: GeoFilter) {
      const values: unknown[] = [];
      return db.query(
        SpeciesHeard,
        `SELECT d.species_code AS code, min(d.common_name) AS "commonName", min(d.scientific_name) AS "scientificName",
           count(*)::int AS count, max(d.detected_at) AS "lastDetectedAt"
         FROM detections d WHERE ${counted(f, values)} GROUP BY d.species_code ORDER BY count(*) DESC, d.species_code`,
        values,
      );
    },

    /**
     * Counted detections at the position their chunk was recorded at (chunks whose audio is
     * gone or that carried no position have none), newest first; `limit` + 1 rows tell the
     * caller whether more exist.
     */
    points(f: GeoFilter, limit: number) {
      const values: unknown[] = [];
      const where = counted(f, values);
      return db.query(
        Point,
        `SELECT d.id AS "detectionId", d.satellite_id AS "satelliteId", d.species_code AS "speciesCode", d.common_name AS "commonName",
           d.scientific_name AS "scientificName", d.confidence, d.detected_at AS "detectedAt", c.latitude, c.longitude
         FROM detections d JOIN chunks c ON c.id = d.chunk_id
         WHERE ${where} AND c.latitude IS NOT NULL AND c.longitude IS NOT NULL
         ORDER BY d.detected_at DESC, d.id DESC LIMIT $${values.push(limit + 1)}`,
        values,
      );
    },
  };
}
