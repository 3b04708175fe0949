import { Type } from 'typebox';
import { Nullable, Open } from '../../core/schemas.ts';

/**
 * The team directory and join requests as the service shows them: response schemas, so OpenAPI
 * documents them for the dashboard's generated client. Objects stay open (additionalProperties)
 * so a field added to the service still reaches the client.
 */

export const DirectoryTeam = Open({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  slug: Type.String(),
  since: Type.String(),
  policy: Type.String(),
  memberCount: Type.Integer(),
  deviceCount: Type.Integer(),
  is_member: Type.Boolean(),
  has_pending: Type.Boolean(),
});

export const Directory = Open({ enabled: Type.Boolean(), teams: Type.Array(DirectoryTeam) });

/** POST /tenants/:id/join under an open policy (200). */
export const Joined = Open({ status: Type.Literal('joined'), tenantId: Type.String(), role: Type.String(), membershipId: Type.String() });

/** POST /tenants/:id/join under a request policy (202). */
export const JoinRequested = Open({ status: Type.Literal('requested'), tenantId: Type.String(), requestId: Type.String() });

export const JoinRequestView = Open({
  id: Type.String(),
  userId: Type.String(),
  name: Type.String(),
  email: Type.String(),
  message: Type.String(),
  createdAt: Type.String(),
});

export const JoinRequestList = Open({ requests: Type.Array(JoinRequestView) });

export const ApprovedRequest = Open({ id: Type.String(), status: Type.String(), role: Type.String(), userId: Type.String() });

export const DeniedRequest = Open({ id: Type.String(), status: Type.String(), blocked: Type.Boolean() });

export const BlockView = Open({
  blockedAt: Type.String(),
  userId: Type.String(),
  name: Type.String(),
  email: Type.String(),
  blockedBy: Nullable(Type.String()),
});

export const BlockList = Open({ blocks: Type.Array(BlockView) });
