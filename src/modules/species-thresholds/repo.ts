import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import type { Learned } from './learn.ts';

export const MODES = ['learned', 'pinned', 'none'] as const;
export type Mode = (typeof MODES)[number];

export const ThresholdRow = shape({
  speciesCode: col.text(),
  mode: col.oneOf(MODES),
  learned: col.nullable(col.num()),
  pinned: col.nullable(col.num()),
  computedAt: col.nullable(col.date()),
  votes: col.int(),
  confirmed: col.int(),
  rejected: col.int(),
  precision: col.nullable(col.num()),
  updatedAt: col.date(),
});
export type ThresholdRow = RowOf<typeof ThresholdRow>;

export const HistoryRow = shape({
  computedAt: col.date(),
  threshold: col.nullable(col.num()),
  votes: col.int(),
  confirmed: col.int(),
  rejected: col.int(),
  precision: col.nullable(col.num()),
  lowerBound: col.nullable(col.num()),
  target: col.num(),
  reason: col.text(),
});
export type HistoryRow = RowOf<typeof HistoryRow>;

const Sample = shape({ confidence: col.num(), confirmed: col.bool() });
const Applied = shape({ speciesCode: col.text(), threshold: col.num() });

const ROW = `species_code AS "speciesCode", mode, learned, pinned, computed_at AS "computedAt", votes, confirmed, rejected,
  precision, updated_at AS "updatedAt"`;
/** The value in force of a row: the pinned one, the learned one, or none. */
const APPLIED = `CASE mode WHEN 'pinned' THEN pinned WHEN 'learned' THEN learned END`;

export function createThresholdsRepo(db: Db) {
  return {
    list: (tenantId: string) =>
      db.query(ThresholdRow, `SELECT ${ROW} FROM species_thresholds WHERE tenant_id = $1 ORDER BY species_code`, [tenantId]),

    find: (tenantId: string, code: string, tx: Db = db) =>
      tx.maybeOne(ThresholdRow, `SELECT ${ROW} FROM species_thresholds WHERE tenant_id = $1 AND species_code = $2`, [tenantId, code]),

    /** The thresholds in force for these species (those without one are left out). */
    applied: (tenantId: string, codes: readonly string[]) =>
      db.query(
        Applied,
        `SELECT species_code AS "speciesCode", ${APPLIED} AS threshold FROM species_thresholds
         WHERE tenant_id = $1 AND species_code = ANY($2::text[]) AND ${APPLIED} IS NOT NULL`,
        [tenantId, [...codes]],
      ),

    history: (tenantId: string, code: string, limit: number) =>
      db.query(
        HistoryRow,
        `SELECT computed_at AS "computedAt", threshold, votes, confirmed, rejected, precision, lower_bound AS "lowerBound", target, reason
         FROM species_threshold_history WHERE tenant_id = $1 AND species_code = $2 ORDER BY computed_at DESC, id DESC LIMIT $3`,
        [tenantId, code, limit],
      ),

    /** The species' row, created (learning, nothing yet) when missing, and locked for this transaction. */
    async lock(tx: Db, tenantId: string, code: string, at: Date): Promise<ThresholdRow> {
      await tx.run(
        `INSERT INTO species_thresholds (tenant_id, species_code, updated_at) VALUES ($1, $2, $3) ON CONFLICT (tenant_id, species_code) DO NOTHING`,
        [tenantId, code, at],
      );
      return tx.one(ThresholdRow, `SELECT ${ROW} FROM species_thresholds WHERE tenant_id = $1 AND species_code = $2 FOR UPDATE`, [
        tenantId,
        code,
      ]);
    },

    /** The team's verified detections of the species: raw confidence and outcome. */
    samples: (tx: Db, tenantId: string, code: string) =>
      tx.query(
        Sample,
        `SELECT confidence, verification_status = 'confirmed' AS confirmed FROM detections
         WHERE tenant_id = $1 AND species_code = $2 AND verification_status IN ('confirmed', 'rejected')`,
        [tenantId, code],
      ),

    async saveLearned(tx: Db, tenantId: string, code: string, l: Learned, at: Date) {
      await tx.run(
        `UPDATE species_thresholds SET learned = $3, computed_at = $4, votes = $5, confirmed = $6, rejected = $7, precision = $8
         WHERE tenant_id = $1 AND species_code = $2`,
        [tenantId, code, l.threshold, at, l.votes, l.confirmed, l.rejected, l.precision],
      );
    },

    async addHistory(tx: Db, h: { id: string; tenantId: string; code: string; at: Date; target: number; learned: Learned }) {
      const l = h.learned;
      await tx.run(
        `INSERT INTO species_threshold_history (id, tenant_id, species_code, computed_at, threshold, votes, confirmed, rejected, precision, lower_bound, target, reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [h.id, h.tenantId, h.code, h.at, l.threshold, l.votes, l.confirmed, l.rejected, l.precision, l.lowerBound, h.target, l.reason],
      );
    },

    async setMode(tx: Db, tenantId: string, code: string, m: { mode: Mode; pinned: number | null; at: Date; by: string | null }) {
      await tx.run(
        `UPDATE species_thresholds SET mode = $3, pinned = $4, updated_at = $5, updated_by = $6 WHERE tenant_id = $1 AND species_code = $2`,
        [tenantId, code, m.mode, m.pinned, m.at, m.by],
      );
    },
  };
}

export type ThresholdsRepo = ReturnType<typeof createThresholdsRepo>;
