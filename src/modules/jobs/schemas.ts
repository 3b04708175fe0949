import { Type } from 'typebox';
import { Nullable, Uuid } from '../../core/schemas.ts';

export const FailedJobView = Type.Object({
  chunkId: Uuid,
  tenantId: Uuid,
  satelliteId: Uuid,
  recordedAt: Type.String({ format: 'date-time' }),
  failedAt: Type.String({ format: 'date-time' }),
  error: Nullable(Type.String()),
  redrives: Type.Integer({ minimum: 0 }),
});

export const FailedJobsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
  { additionalProperties: false },
);

export const FailedJobList = Type.Object({ jobs: Type.Array(FailedJobView) });

export const RetryBody = Type.Object(
  { chunkIds: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 1000, uniqueItems: true })) },
  { additionalProperties: false },
);

export const RetryResult = Type.Object({ retried: Type.Integer({ minimum: 0 }) });
