import { Type } from 'typebox';
import { Open, Nullable } from '../../core/schemas.ts';

/**
 * An audit entry as the log service shows it (presentEntry in service.ts): the response schema,
 * so OpenAPI documents it for the dashboard's generated client. Objects stay open
 * (additionalProperties) so a column added to the query still reaches the client.
 */

export const AuditEntry = Open({
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
});

export const AuditLog = Open({ entries: Type.Array(AuditEntry), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
