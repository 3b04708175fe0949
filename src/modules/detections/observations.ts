/**
 * One call, several recorders (issue 35 point 3; docs/decisions.md "Observations"). While a
 * team's setting observation_merge_enabled is on, a detection the Detections page starts listing
 * joins the listed detection of the same species from another satellite of the team that started
 * within ±windowMs of it, where both satellites' positions are known and lie at most distanceM
 * apart: the two become one observation.
 *
 * An observation is a stitched call grown across satellites (migration 0036): its leader is its
 * one listed row (call_id NULL) and every other row points at it through call_id, continuations
 * included, so lists, counts, stats aggregates, alerts and exports count one row per observation
 * as they count one per stitched call. The leader is the most confident satellite's call
 * representative, unless the earlier leader has been reviewed (votes, comments, annotations or a
 * pin): a review is never moved off the listed row. `recorders` on the leader counts the
 * satellites. Each satellite's part of it keeps its own call extent on its first row (stitching,
 * aggregation.ts).
 *
 * Runs inside the recorder's transaction under the team's advisory lock, after stitching and
 * aggregation, so every earlier commit of the team is seen. Rows stored while the setting was off
 * stay apart (turning it on rewrites no history; turning it off splits nothing).
 */
import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

export interface ObservationRule {
  enabled: boolean;
  /** Farthest apart two satellites hearing one call may be, in metres. */
  distanceM: number;
  /** Farthest apart the two calls' starts may be, either way, in milliseconds. */
  windowMs: number;
}

export const OBSERVATIONS_OFF: ObservationRule = Object.freeze({ enabled: false, distanceM: 250, windowMs: 2000 });

/** The rule from a team's resolved settings (settings service teamSettings); defaults for what is missing. */
export function observationRuleOf(v: Record<string, unknown> | null | undefined): ObservationRule {
  const num = (x: unknown, d: number) => (typeof x === 'number' && Number.isFinite(x) ? x : d);
  return {
    enabled: v?.observation_merge_enabled === true,
    distanceM: num(v?.observation_merge_distance_m, OBSERVATIONS_OFF.distanceM),
    windowMs: Math.round(1000 * num(v?.observation_merge_window_sec, OBSERVATIONS_OFF.windowMs / 1000)),
  };
}

/** A row the page has just started listing: what merging reads of it. */
export interface ListedDetection {
  id: string;
  satelliteId: string;
  speciesCode: string;
  confidence: number;
  detectedAt: Date;
}

/** A listed row with where its satellite was: the chunk's own position, else the latest GPS fix, else the profile's. */
const Placed = shape({
  id: col.text(),
  satelliteId: col.text(),
  confidence: col.num(),
  detectedAt: col.date(),
  recorders: col.int(),
  /** No votes, comments, annotations or pin: the lead may pass to a better recording. */
  unreviewed: col.bool(),
  chunkLatitude: col.nullable(col.num()),
  chunkLongitude: col.nullable(col.num()),
  fixLatitude: col.nullable(col.num()),
  fixLongitude: col.nullable(col.num()),
  profileLatitude: col.nullable(col.num()),
  profileLongitude: col.nullable(col.num()),
});
type Placed = RowOf<typeof Placed>;

const PLACED = `d.id, d.satellite_id AS "satelliteId", d.confidence, d.detected_at AS "detectedAt", d.recorders,
  (d.pinned_at IS NULL AND NOT EXISTS (SELECT 1 FROM detection_votes v WHERE v.detection_id = d.id)
    AND NOT EXISTS (SELECT 1 FROM detection_comments m WHERE m.detection_id = d.id)
    AND NOT EXISTS (SELECT 1 FROM detection_annotations a WHERE a.detection_id = d.id)) AS unreviewed,
  c.latitude AS "chunkLatitude", c.longitude AS "chunkLongitude", f.latitude AS "fixLatitude", f.longitude AS "fixLongitude",
  s.latitude AS "profileLatitude", s.longitude AS "profileLongitude"
  FROM detections d
  JOIN satellites s ON s.id = d.satellite_id
  LEFT JOIN chunks c ON c.id = d.chunk_id
  LEFT JOIN LATERAL (
    SELECT t.latitude, t.longitude FROM telemetry t
    WHERE t.satellite_id = d.satellite_id AND t.latitude IS NOT NULL ORDER BY t.at DESC, t.id DESC LIMIT 1
  ) f ON true`;

function positionOf(p: Placed): { lat: number; lon: number } | null {
  if (p.chunkLatitude !== null && p.chunkLongitude !== null) return { lat: p.chunkLatitude, lon: p.chunkLongitude };
  if (p.fixLatitude !== null && p.fixLongitude !== null) return { lat: p.fixLatitude, lon: p.fixLongitude };
  if (p.profileLatitude !== null && p.profileLongitude !== null) return { lat: p.profileLatitude, lon: p.profileLongitude };
  return null;
}

/** Great-circle distance in metres (haversine; exact enough at a few hundred metres). */
export function distanceM(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * Joins each of `rows` (listed from now on, in this order) to an observation of another satellite
 * where the rule allows. Answers the rows that joined one: they are not announced, since the
 * observation was (one alert per observation), even where they take the lead.
 */
export async function mergeObservations(
  tx: Db,
  input: { tenantId: string; rows: readonly ListedDetection[]; rule: ObservationRule },
): Promise<Set<string>> {
  const { tenantId, rule } = input;
  const joined = new Set<string>();
  if (!rule.enabled || input.rows.length === 0) return joined;
  const own = await tx.query(Placed, `SELECT ${PLACED} WHERE d.tenant_id = $1 AND d.id = ANY($2::uuid[])`, [
    tenantId,
    input.rows.map((r) => r.id),
  ]);
  const placedById = new Map(own.map((p) => [p.id, p]));
  for (const r of input.rows) {
    const me = placedById.get(r.id);
    const here = me && positionOf(me);
    // Satellites without a position never merge.
    if (!me || !here) continue;
    const at = new Date(r.detectedAt).getTime();
    // Listed heads of the species from other satellites that started within the window, nearest in
    // time first; not an observation this satellite already has a part in.
    const candidates = await tx.query(
      Placed,
      `SELECT ${PLACED}
       WHERE d.tenant_id = $1 AND lower(d.species_code) = lower($2) AND d.detected_at >= $3 AND d.detected_at <= $4
         AND d.call_id IS NULL AND d.promoted AND NOT d.tentative AND d.below_threshold IS NULL AND d.satellite_id <> $5
         AND NOT EXISTS (SELECT 1 FROM detections o WHERE o.call_id = d.id AND o.satellite_id = $5)
       ORDER BY abs(extract(epoch FROM d.detected_at - $6::timestamptz)), d.confidence DESC, d.id`,
      [tenantId, r.speciesCode, new Date(at - rule.windowMs), new Date(at + rule.windowMs), r.satelliteId, new Date(at)],
    );
    const other = candidates.find((c) => {
      const there = positionOf(c);
      return there !== null && distanceM(here, there) <= rule.distanceM;
    });
    if (!other) continue;
    const takesLead = me.confidence > other.confidence && other.unreviewed;
    const [leader, member] = takesLead ? [me, other] : [other, me];
    // The listed row keeps what the page showed of the observation: first of day or season, rare.
    await tx.run(
      `UPDATE detections l SET recorders = $3,
         is_first_of_day = l.is_first_of_day OR m.is_first_of_day,
         is_first_of_season = l.is_first_of_season OR m.is_first_of_season,
         is_rare = l.is_rare OR m.is_rare,
         rare_reason = CASE WHEN l.is_rare THEN l.rare_reason ELSE m.rare_reason END
       FROM detections m WHERE l.id = $1 AND m.id = $2`,
      [leader.id, member.id, leader.recorders + member.recorders],
    );
    await tx.run('UPDATE detections SET call_id = $2 WHERE tenant_id = $1 AND call_id = $3', [tenantId, leader.id, member.id]);
    await tx.run('UPDATE detections SET call_id = $2, recorders = 1 WHERE id = $1', [member.id, leader.id]);
    joined.add(r.id);
  }
  return joined;
}

/** One satellite's recording of an observation: the first row of its part (its call's representative). */
export const Recording = shape({
  detectionId: col.text(),
  satelliteId: col.text(),
  satelliteName: col.nullable(col.text()),
  audioChunkId: col.text(),
  confidence: col.num(),
  detectedAt: col.text(),
  startMs: col.int(),
  endMs: col.int(),
  callChunks: col.int(),
  /** This recording is the observation's listed row. */
  lead: col.bool(),
});

/**
 * Each satellite's recording of the observation `id` belongs to (its leader, or any row of it),
 * the lead first, then the most confident. One entry for a call a single satellite heard.
 */
export function recordingsOf(db: Db, tenantId: string, id: string) {
  return db.query(
    Recording,
    `WITH head AS (SELECT coalesce(call_id, id) AS id FROM detections WHERE tenant_id = $1 AND id = $2),
     parts AS (
       SELECT DISTINCT ON (d.satellite_id) d.* FROM detections d, head
       WHERE d.tenant_id = $1 AND (d.id = head.id OR d.call_id = head.id)
       ORDER BY d.satellite_id, d.detected_at, d.id
     )
     SELECT p.id AS "detectionId", p.satellite_id AS "satelliteId", s.name AS "satelliteName", p.chunk_id AS "audioChunkId",
       p.confidence, to_char(p.detected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "detectedAt",
       p.start_ms AS "startMs", p.end_ms AS "endMs", p.call_chunks AS "callChunks", p.id = head.id AS lead
     FROM parts p CROSS JOIN head LEFT JOIN satellites s ON s.id = p.satellite_id
     ORDER BY p.id = head.id DESC, p.confidence DESC, p.id`,
    [tenantId, id],
  );
}

const Led = shape({ id: col.text(), recorders: col.int() });
const Part = shape({ id: col.text() });

/**
 * Before a satellite's rows go (satellite deletion, in its transaction): the observations it led
 * pass to the most confident other satellite's recording, and those it had a part in count one
 * recorder fewer. Without this an observation would vanish from every list with its leader.
 */
export async function handOverObservations(tx: Db, tenantId: string, satelliteId: string): Promise<void> {
  await tx.run(
    `UPDATE detections l SET recorders = greatest(1, l.recorders - 1)
     WHERE l.tenant_id = $1 AND l.satellite_id <> $2 AND l.recorders > 1
       AND l.id IN (SELECT call_id FROM detections WHERE tenant_id = $1 AND satellite_id = $2 AND call_id IS NOT NULL)`,
    [tenantId, satelliteId],
  );
  const led = await tx.query(
    Led,
    'SELECT id, recorders FROM detections WHERE tenant_id = $1 AND satellite_id = $2 AND call_id IS NULL AND recorders > 1',
    [tenantId, satelliteId],
  );
  for (const l of led) {
    const [heir] = await tx.query(
      Part,
      `SELECT id FROM (
         SELECT DISTINCT ON (satellite_id) id, confidence FROM detections
         WHERE tenant_id = $1 AND call_id = $2 AND satellite_id <> $3 ORDER BY satellite_id, detected_at, id
       ) parts ORDER BY confidence DESC, id LIMIT 1`,
      [tenantId, l.id, satelliteId],
    );
    if (!heir) continue;
    await tx.run('UPDATE detections SET call_id = $3 WHERE tenant_id = $1 AND call_id = $2 AND satellite_id <> $4 AND id <> $3', [
      tenantId,
      l.id,
      heir.id,
      satelliteId,
    ]);
    await tx.run('UPDATE detections SET call_id = NULL, recorders = $2 WHERE id = $1', [heir.id, Math.max(1, l.recorders - 1)]);
  }
}
