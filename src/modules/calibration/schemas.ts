import { Type } from 'typebox';
import { Nullable, Open } from '../../core/schemas.ts';

/**
 * Calibration curves and coverage as the service shows them: response schemas, so OpenAPI
 * documents them for the dashboard's generated client. Objects stay open (additionalProperties)
 * so a field added to the service still reaches the client.
 */

export const CalibrationRefresh = Open({
  refreshed: Type.Array(
    Open({ tenantId: Type.String(), modelId: Type.String(), samples: Type.Integer(), buckets: Type.Integer(), fittedAt: Type.String() }),
  ),
  skipped: Type.Array(Open({ tenantId: Type.String(), modelId: Type.String(), samples: Type.Integer(), reason: Type.String() })),
});

/** pav.ts Bucket: raw confidences in [min, max] map to the calibrated probability. */
export const CurveBucket = Open({
  minConfidence: Type.Number(),
  maxConfidence: Type.Number(),
  calibrated: Type.Number(),
  samples: Type.Integer(),
});

export const CalibrationCurve = Open({
  tenantId: Type.String(),
  modelId: Type.String(),
  fittedAt: Nullable(Type.String()),
  samples: Type.Integer(),
  buckets: Type.Array(CurveBucket),
});

export const CalibrationCoverage = Open({
  minSamples: Type.Integer(),
  coverage: Type.Array(
    Open({
      tenantId: Type.String(),
      modelId: Type.String(),
      samples: Type.Integer(),
      confirmed: Type.Integer(),
      rejected: Type.Integer(),
      enough: Type.Boolean(),
      curve: Nullable(Open({ fittedAt: Type.String(), samples: Type.Integer(), buckets: Type.Integer() })),
    }),
  ),
});
