/**
 * Temporal aggregation and call stitching (spec hub-http-api §2 "Detection" tentative/promoted,
 * §9 0.77.3; the exact rules are in docs/decisions.md "Aggregation, stitched calls, sessions and
 * calibration"). Runs inside the recorder's insert transaction (recorder.ts), after the chunk's rows
 * are inserted (as promoted, non-tentative, their own call), under the team's advisory lock, so the
 * reads below see every earlier commit of the team.
 *
 * - Stitching: a new detection continues the call of the same satellite and species whose last
 *   row ended at most one chunk length (STITCH_GAP_MS) before it started. It then points at the
 *   call's representative (call_id) and the representative's extent grows.
 * - Aggregation, while the team's rule is enabled: a new detection is promoted when one new row of
 *   its species reaches confidenceHigh, when the satellite's detections of that species in the
 *   window [t − windowMinutes, t] (the new ones included, stitched rows too: each is a separate
 *   chunk the model heard it in) reach `count`, or when that window already holds a promoted one;
 *   promotion flips every tentative row of the group in the window. Otherwise it is tentative.
 * - Retention: tentative rows older (by detection time) than the rule's retentionHours are removed
 *   by sweepTentative; nothing is removed while the hub switch retention_enabled is off.
 */
import { col, shape, type Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AggregationRule, SettingsService } from '../settings/service.ts';

export type { AggregationRule };

/** A gap of at most one 3-second chunk between two detections keeps them in one call. */
export const STITCH_GAP_MS = 3_000;
export const TENTATIVE_SWEEP_INTERVAL_MS = 10 * 60_000;

/** What aggregate needs of each row the worker has just inserted. */
export interface InsertedDetection {
  id: string;
  speciesCode: string;
  confidence: number;
  detectedAt: Date;
  startMs: number;
  endMs: number;
}

export interface AggregationOutcome {
  /** New rows left tentative. */
  tentative: string[];
  /** Earlier rows this insert promoted (tentative → promoted). */
  promoted: string[];
  /** New row id → the representative of the call it continues. */
  stitched: Map<string, string>;
}

/** The latest earlier row of a species (stitching). */
const PreviousRow = shape({
  id: col.text(),
  callId: col.nullable(col.text()),
  speciesCode: col.text(),
  detectedAt: col.date(),
  startMs: col.int(),
  endMs: col.int(),
});
/** A species' detections in the rule's window (aggregation). */
const GroupRow = shape({ speciesCode: col.text(), n: col.int(), promotedBefore: col.bool() });
const Id = shape({ id: col.text() });
const TeamId = shape({ tenantId: col.text() });

const endOf = (d: { detectedAt: Date; startMs: number; endMs: number }) => new Date(new Date(d.detectedAt).getTime() + d.endMs - d.startMs);

/**
 * Applies stitching and the team's rule to rows of one satellite just inserted in `tx`. The rule is
 * read before the transaction opens: on PGlite a read outside it would wait for it forever.
 */
export async function aggregate(
  tx: Db,
  input: {
    tenantId: string;
    satelliteId: string;
    rows: InsertedDetection[];
    rule: AggregationRule;
    /** New rows held below their species threshold (stored tentative already): never stitched, counted or promoted. */
    held?: ReadonlySet<string>;
  },
): Promise<AggregationOutcome> {
  const { tenantId, satelliteId, rows } = input;
  const held = input.held ?? new Set<string>();
  const outcome: AggregationOutcome = { tentative: [], promoted: [], stitched: new Map() };
  if (rows.length === 0) return outcome;
  const ids = rows.map((r) => r.id);
  const codes = [...new Set(rows.map((r) => r.speciesCode))];
  const times = rows.map((r) => new Date(r.detectedAt).getTime());
  const first = Math.min(...times);
  const last = Math.max(...times);

  // Stitching: the latest earlier row of each species that ended close enough before.
  const previous = await tx.query(
    PreviousRow,
    `SELECT DISTINCT ON (species_code) id, call_id AS "callId", species_code AS "speciesCode", detected_at AS "detectedAt", start_ms AS "startMs", end_ms AS "endMs"
     FROM detections
     WHERE tenant_id = $1 AND satellite_id = $2 AND species_code = ANY($3::text[]) AND detected_at < $4 AND detected_at >= $5
       AND id <> ALL($6::uuid[]) AND below_threshold IS NULL
     ORDER BY species_code, detected_at DESC, id DESC`,
    // A row starting up to one minute earlier can still end within the gap (chunks are ~3 s).
    [tenantId, satelliteId, codes, new Date(last), new Date(first - 60_000), ids],
  );
  const prevBySpecies = new Map(previous.map((p) => [p.speciesCode, p]));
  for (const r of rows) {
    if (held.has(r.id)) continue;
    const p = prevBySpecies.get(r.speciesCode);
    if (!p || new Date(p.detectedAt) >= new Date(r.detectedAt)) continue;
    if (new Date(r.detectedAt).getTime() - endOf(p).getTime() > STITCH_GAP_MS) continue;
    const head = p.callId ?? p.id;
    outcome.stitched.set(r.id, head);
    await tx.run('UPDATE detections SET call_id = $2 WHERE id = $1', [r.id, head]);
    // The satellite's own part of the call grows: the head itself, or, where the call is an
    // observation several satellites heard (observations.ts), that satellite's first row of it.
    await tx.run(
      `UPDATE detections SET call_chunks = call_chunks + 1,
         call_end_at = greatest(coalesce(call_end_at, detected_at + (end_ms - start_ms) * interval '1 millisecond'), $2)
       WHERE id = (SELECT h.id FROM detections h WHERE (h.id = $1 OR h.call_id = $1) AND h.satellite_id = $3 AND h.id <> $4
                   ORDER BY h.detected_at, h.id LIMIT 1)`,
      [head, endOf(r), satelliteId, r.id],
    );
  }

  const { rule } = input;
  if (!rule.enabled) return outcome;

  const windowMs = rule.windowMinutes * 60_000;
  const groups = await tx.query(
    GroupRow,
    `SELECT species_code AS "speciesCode", count(*)::int AS n, coalesce(bool_or(NOT tentative AND id <> ALL($5::uuid[])), false) AS "promotedBefore"
     FROM detections
     WHERE tenant_id = $1 AND satellite_id = $2 AND species_code = ANY($3::text[]) AND detected_at >= $4 AND detected_at <= $6
       AND below_threshold IS NULL
     GROUP BY species_code`,
    [tenantId, satelliteId, codes, new Date(first - windowMs), ids, new Date(last)],
  );
  const bySpecies = new Map(groups.map((g) => [g.speciesCode, g]));
  const promote: string[] = [];
  for (const code of codes) {
    const g = bySpecies.get(code);
    const high = rows.some((r) => r.speciesCode === code && !held.has(r.id) && r.confidence >= rule.confidenceHigh);
    if (high || (g && (g.n >= rule.count || g.promotedBefore))) promote.push(code);
    else outcome.tentative.push(...rows.filter((r) => r.speciesCode === code && !held.has(r.id)).map((r) => r.id));
  }
  if (outcome.tentative.length > 0) {
    await tx.run('UPDATE detections SET tentative = true, promoted = false WHERE id = ANY($1::uuid[])', [outcome.tentative]);
  }
  if (promote.length > 0) {
    const flipped = await tx.query(
      Id,
      `UPDATE detections SET tentative = false, promoted = true
       WHERE tenant_id = $1 AND satellite_id = $2 AND tentative AND species_code = ANY($3::text[]) AND detected_at >= $4 AND detected_at <= $5
         AND below_threshold IS NULL
       RETURNING id`,
      [tenantId, satelliteId, promote, new Date(first - windowMs), new Date(last)],
    );
    outcome.promoted = flipped.map((f) => f.id);
  }
  return outcome;
}

/** Removes tentative detections older than their team's retentionHours; returns how many per team. */
export async function sweepTentative(deps: {
  db: Db;
  clock: Clock;
  settings: Pick<SettingsService, 'aggregationRule'>;
}): Promise<Record<string, number>> {
  const { db, clock, settings } = deps;
  // Rows held below a species threshold are the team's to review, not the aggregation rule's: never swept.
  const teams = await db.query(
    TeamId,
    'SELECT DISTINCT tenant_id AS "tenantId" FROM detections WHERE tentative AND below_threshold IS NULL',
  );
  const removed: Record<string, number> = {};
  for (const { tenantId } of teams) {
    const rule = await settings.aggregationRule(tenantId);
    if (rule.retentionHours === null) continue;
    const cutoff = new Date(clock.now().getTime() - rule.retentionHours * 3_600_000);
    const gone = await db.run(
      'DELETE FROM detections WHERE tenant_id = $1 AND tentative AND below_threshold IS NULL AND detected_at < $2',
      [tenantId, cutoff],
    );
    if (gone > 0) removed[tenantId] = gone;
  }
  return removed;
}

/** The periodic sweep the runtime starts (full and dispatcher modes). */
export function startTentativeSweeper(deps: {
  db: Db;
  clock: Clock;
  settings: Pick<SettingsService, 'aggregationRule'>;
  onError: (err: unknown) => void;
  intervalMs?: number;
}) {
  let running: Promise<unknown> | null = null;
  const tick = async () => {
    while (running) await running.catch(() => {});
    const p = sweepTentative(deps);
    running = p;
    try {
      return await p;
    } finally {
      running = null;
    }
  };
  const timer = setInterval(() => tick().catch(deps.onError), deps.intervalMs ?? TENTATIVE_SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    tick,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
