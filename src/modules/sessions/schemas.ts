import { Type } from 'typebox';

/**
 * GET /sessions as the service's list() returns it: the response schema, so OpenAPI documents
 * it for the dashboard's generated client. Objects stay open (additionalProperties) so a field
 * added to the service still reaches the client.
 */
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const TopSpecies = Type.Object(
  { speciesCode: Type.String(), commonName: Nullable(Type.String()), count: Type.Number() },
  { additionalProperties: true },
);

export const SessionView = Type.Object(
  {
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
  },
  { additionalProperties: true },
);

export const SessionList = Type.Object({ sessions: Type.Array(SessionView), total: Type.Number() }, { additionalProperties: true });
