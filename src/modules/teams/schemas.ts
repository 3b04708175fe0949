import { Type } from 'typebox';
import { AnyRole, Open, Nullable } from '../../core/schemas.ts';

/**
 * Teams and members as presentTeam / presentMember (service.ts) show them: response schemas, so
 * OpenAPI documents them for the dashboard's generated client. Objects stay open
 * (additionalProperties) so a field added to the service still reaches the client.
 */

export const TeamView = Open({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  since: Type.String(),
  role: Nullable(Type.String()),
});

export const TeamList = Open({ tenants: Type.Array(TeamView) });

export const MemberView = Open({
  id: Type.String(),
  userId: Type.String(),
  name: Type.String(),
  email: Type.String(),
  role: AnyRole,
  joinedAt: Type.String(),
});

export const MemberReply = Open({ member: MemberView });

export const MemberList = Open({ members: Type.Array(MemberView) });

/** A person's membership of a team, as /auth/me and the hub admin's user list show it. */
export const MembershipView = Open({ id: Type.String(), name: Type.String(), slug: Type.String(), role: AnyRole });
