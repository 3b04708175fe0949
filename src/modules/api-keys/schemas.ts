import { Type } from 'typebox';
import { AssignableRole, Nullable, Open } from '../../core/schemas.ts';

/**
 * Team API keys as the service shows them: response schemas, so OpenAPI documents them for the
 * dashboard's generated client. Objects stay open (additionalProperties) so a field added to
 * the service still reaches the client.
 */

/** A new key: the secret is shown this once. */
export const CreatedApiKey = Open({
  id: Type.String(),
  key: Type.String(),
  tenantId: Type.String(),
  name: Type.String(),
  role: AssignableRole,
  prefix: Type.String(),
  createdAt: Type.String(),
  expiresAt: Nullable(Type.String()),
});

export const ApiKeyView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  name: Type.String(),
  role: AssignableRole,
  /** The role the key acts with now: its own, capped by its creator's current role in the team; null once it no longer works. */
  effectiveRole: Nullable(AssignableRole),
  prefix: Type.String(),
  createdBy: Nullable(Type.String()),
  createdByName: Nullable(Type.String()),
  createdAt: Type.String(),
  lastUsedAt: Nullable(Type.String()),
  expiresAt: Nullable(Type.String()),
});

export const ApiKeyList = Open({ apiKeys: Type.Array(ApiKeyView) });
