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
