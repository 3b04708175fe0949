import { Type } from 'typebox';
import { AssignableRole, Nullable, Open } from '../../core/schemas.ts';

/**
 * Invites as the service shows them: response schemas, so OpenAPI documents them for the
 * dashboard's generated client. Objects stay open (additionalProperties) so a field added to
 * the service still reaches the client.
 */

/** A new invite: its token and link are shown this once. */
export const CreatedInvite = Open({
  id: Type.String(),
  token: Type.String(),
  url: Type.String(),
  role: AssignableRole,
  expiresAt: Type.String(),
});

export const InviteView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  role: AssignableRole,
  email: Nullable(Type.String()),
  createdBy: Nullable(Type.String()),
  createdByName: Nullable(Type.String()),
  createdAt: Type.String(),
  expiresAt: Type.String(),
});

export const InviteList = Open({ invites: Type.Array(InviteView) });

export const AcceptedInvite = Open({ tenantId: Type.String(), role: AssignableRole, membershipId: Type.String() });

/** The raw token of an invite link: 32 random bytes in hex. */
export const InviteToken = Type.String({ pattern: '^[0-9a-f]{64}$' });

/**
 * What an invite link offers (issue 23), shown to whoever holds the link: closed, so the
 * serialiser drops anything else (the inviter's email, the invited address).
 */
export const InviteSummary = Type.Object({
  teamName: Type.String(),
  inviterName: Nullable(Type.String()),
  role: AssignableRole,
  expiresAt: Type.String({ format: 'date-time' }),
});
