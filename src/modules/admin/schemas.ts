import { Type } from 'typebox';

/**
 * GET /admin/users as users.adminList returns it (presentAdminUser in users/schemas.ts): the
 * response schema, so OpenAPI documents it for the dashboard's generated client. Objects stay
 * open (additionalProperties) so a field added to the service still reaches the client.
 */
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const AdminUserTeam = Type.Object(
  { id: Type.String(), name: Type.String(), slug: Type.String(), role: Type.String() },
  { additionalProperties: true },
);

export const AdminUserRow = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    isAdmin: Type.Boolean(),
    status: Type.String(),
    createdAt: Type.String(),
    lastLoginAt: Nullable(Type.String()),
    lastLoginIp: Nullable(Type.String()),
    failedLoginAttempts: Type.Integer(),
    lockedUntil: Nullable(Type.String()),
    tenants: Type.Array(AdminUserTeam),
  },
  { additionalProperties: true },
);

export const AdminUserList = Type.Object(
  { users: Type.Array(AdminUserRow), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() },
  { additionalProperties: true },
);
