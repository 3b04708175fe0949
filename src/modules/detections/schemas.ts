import { Type } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/**
 * A detection as the API shows it (detectionView in service.ts): the list's response schema, so
 * OpenAPI documents it, the dashboard's generated client types it and Fastify serialises it
 * with a compiled serializer instead of JSON.stringify.
 */
export const DetectionView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  tenantId: Type.String({ format: 'uuid' }),
  satelliteId: Type.String({ format: 'uuid' }),
  satelliteName: Nullable(Type.String()),
  audioChunkId: Type.String({ format: 'uuid' }),
  speciesCode: Type.String(),
  scientificName: Type.String(),
  commonName: Type.String(),
  category: Type.String(),
  confidence: Type.Number(),
  calibrated_confidence: Type.Number(),
  detectedAt: Type.String({ format: 'date-time' }),
  startMs: Type.Integer(),
  endMs: Type.Integer(),
  modelId: Type.String(),
  verificationStatus: Type.Union([Type.Literal('unverified'), Type.Literal('pending_review'), Type.Literal('confirmed'), Type.Literal('rejected')]),
  tentative: Type.Boolean(),
  promoted: Type.Boolean(),
  isFirstOfSeason: Type.Boolean(),
  isFirstOfDay: Type.Boolean(),
  isRare: Type.Boolean(),
  rareReason: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  pinned: Type.Boolean(),
  callId: Type.String({ format: 'uuid' }),
  callChunks: Type.Integer(),
  callEndAt: Type.String({ format: 'date-time' }),
});

/** A team's aggregation rule (spec §2 Team), as the list's `aggregation` member maps it. */
export const AggregationRuleView = Type.Object({
  enabled: Type.Boolean(),
  count: Type.Integer(),
  windowMinutes: Type.Integer(),
  confidenceHigh: Type.Number(),
  retentionHours: Nullable(Type.Integer()),
});

export const DetectionList = Type.Object({
  detections: Type.Array(DetectionView),
  total: Nullable(Type.Integer()),
  aggregation: Type.Record(Type.String(), AggregationRuleView),
});

