import { Type } from 'typebox';

/**
 * Teams and members as presentTeam / presentMember (service.ts) show them: response schemas, so
 * OpenAPI documents them for the dashboard's generated client. Objects stay open
 * (additionalProperties) so a field added to the service still reaches the client.
 */
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const TeamView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    since: Type.String(),
    role: Nullable(Type.String()),
  },
  { additionalProperties: true },
);

export const TeamList = Type.Object({ tenants: Type.Array(TeamView) }, { additionalProperties: true });

export const MemberView = Type.Object(
  {
    id: Type.String(),
    userId: Type.String(),
    name: Type.String(),
    email: Type.String(),
    role: Type.String(),
    joinedAt: Type.String(),
  },
  { additionalProperties: true },
);

export const MemberList = Type.Object({ members: Type.Array(MemberView) }, { additionalProperties: true });
