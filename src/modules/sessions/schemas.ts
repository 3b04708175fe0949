import { Type } from 'typebox';
import { Open, Nullable } from '../../core/schemas.ts';

/**
 * GET /sessions as the service's list() returns it: the response schema, so OpenAPI documents
 * it for the dashboard's generated client. Objects stay open (additionalProperties) so a field
 * added to the service still reaches the client.
 */

export const TopSpecies = Open({ speciesCode: Type.String(), commonName: Nullable(Type.String()), count: Type.Number() });

export const SessionView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  satelliteId: Type.String(),
  satelliteName: Nullable(Type.String()),
  start: Type.String(),
  end: Type.String(),
  durationMs: Type.Number(),
  chunkCount: Type.Number(),
  detectionCount: Type.Number(),
  speciesCount: Type.Number(),
  topSpecies: Type.Array(TopSpecies),
});

export const SessionList = Open({ sessions: Type.Array(SessionView), total: Type.Number() });

/** GET /sessions/timeline: one satellite's chunks and listed detections in [from, to). */
export const SessionTimeline = Open({
  tenantId: Type.String(),
  satelliteId: Type.String(),
  from: Type.String(),
  to: Type.String(),
  chunks: Type.Array(Open({ id: Type.String(), recordedAt: Type.String(), durationMs: Type.Number() })),
  detections: Type.Array(
    Open({
      id: Type.String(),
      audioChunkId: Type.String(),
      speciesCode: Type.String(),
      commonName: Type.String(),
      scientificName: Type.String(),
      confidence: Type.Number(),
      calibrated_confidence: Type.Number(),
      modelId: Type.String(),
      detectedAt: Type.String(),
      startMs: Type.Number(),
      endMs: Type.Number(),
      callChunks: Type.Integer(),
      callEndAt: Type.String(),
      verificationStatus: Type.String(),
    }),
  ),
});
