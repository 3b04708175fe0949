import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import type { Bucket } from './pav.ts';

export const CurveRow = shape({
  tenantId: col.text(),
  modelId: col.text(),
  fittedAt: col.date(),
  samples: col.int(),
  buckets: col.json<Bucket[]>(),
});
export type CurveRow = RowOf<typeof CurveRow>;

export const CoverageRow = shape({
  tenantId: col.text(),
  modelId: col.text(),
  confirmed: col.int(),
  rejected: col.int(),
});
export type CoverageRow = RowOf<typeof CoverageRow>;

const Sample = shape({ confidence: col.num(), confirmed: col.bool() });
const PairBuckets = shape({ tenantId: col.text(), modelId: col.text(), buckets: col.json<Bucket[]>() });

const CURVE = `tenant_id AS "tenantId", model_id AS "modelId", fitted_at AS "fittedAt", samples, buckets`;
const VERIFIED = `verification_status IN ('confirmed', 'rejected')`;

export function createCalibrationRepo(db: Db) {
  return {
    /** Verified (team, model) pairs with their counts; tenantIds null: every team. */
    coverage: (tenantIds: string[] | null, modelId?: string) =>
      db.query(
        CoverageRow,
        `SELECT tenant_id AS "tenantId", model_id AS "modelId",
           count(*) FILTER (WHERE verification_status = 'confirmed')::int AS confirmed,
           count(*) FILTER (WHERE verification_status = 'rejected')::int AS rejected
         FROM detections
         WHERE ${VERIFIED} AND ($1::uuid[] IS NULL OR tenant_id = ANY($1::uuid[])) AND ($2::text IS NULL OR model_id = $2)
         GROUP BY tenant_id, model_id ORDER BY tenant_id, model_id`,
        [tenantIds, modelId ?? null],
      ),

    /** The verified samples of one pair: raw confidence and outcome. */
    samples: (tx: Db, tenantId: string, modelId: string) =>
      tx.query(
        Sample,
        `SELECT confidence, verification_status = 'confirmed' AS confirmed FROM detections WHERE tenant_id = $1 AND model_id = $2 AND ${VERIFIED}`,
        [tenantId, modelId],
      ),

    curves: (tenantIds: string[] | null, modelId?: string, tx: Db = db) =>
      tx.query(
        CurveRow,
        `SELECT ${CURVE} FROM calibration_curves
         WHERE ($1::uuid[] IS NULL OR tenant_id = ANY($1::uuid[])) AND ($2::text IS NULL OR model_id = $2) ORDER BY tenant_id, model_id`,
        [tenantIds, modelId ?? null],
      ),

    /** The buckets of the named pairs that have a curve, in one query. */
    bucketsFor: (pairs: Array<{ tenantId: string; modelId: string }>) =>
      db.query(
        PairBuckets,
        `SELECT tenant_id AS "tenantId", model_id AS "modelId", buckets FROM calibration_curves
         WHERE (tenant_id, model_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
        [pairs.map((p) => p.tenantId), pairs.map((p) => p.modelId)],
      ),

    async save(tx: Db, c: CurveRow) {
      await tx.run(
        `INSERT INTO calibration_curves (tenant_id, model_id, fitted_at, samples, buckets) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant_id, model_id) DO UPDATE SET fitted_at = EXCLUDED.fitted_at, samples = EXCLUDED.samples, buckets = EXCLUDED.buckets`,
        [c.tenantId, c.modelId, c.fittedAt, c.samples, JSON.stringify(c.buckets)],
      );
    },

    async remove(tx: Db, tenantId: string, modelId: string) {
      await tx.run('DELETE FROM calibration_curves WHERE tenant_id = $1 AND model_id = $2', [tenantId, modelId]);
    },
  };
}

export type CalibrationRepo = ReturnType<typeof createCalibrationRepo>;
