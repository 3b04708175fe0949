import { Type } from 'typebox';

/**
 * An audit entry as the log service shows it (presentEntry in service.ts): the response schema,
 * so OpenAPI documents it for the dashboard's generated client. Objects stay open
 * (additionalProperties) so a column added to the query still reaches the client.
 */
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const AuditEntry = Type.Object(
  {
    id: Type.Union([Type.Number(), Type.String()]),
    at: Type.String(),
    action: Type.String(),
    actorType: Type.String(),
    actorUserId: Nullable(Type.String()),
    actorApiKeyId: Nullable(Type.String()),
    actorEmail: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    tenantId: Nullable(Type.String()),
    targetType: Nullable(Type.String()),
    targetId: Nullable(Type.String()),
    details: Type.Unknown(),
  },
  { additionalProperties: true },
);

export const AuditLog = Type.Object(
  { entries: Type.Array(AuditEntry), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() },
  { additionalProperties: true },
);
