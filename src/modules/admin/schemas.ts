import { Type } from 'typebox';
import { Open, Nullable } from '../../core/schemas.ts';
import { MembershipView } from '../teams/schemas.ts';

/**
 * GET /admin/users as users.adminList returns it (presentAdminUser in users/schemas.ts): the
 * response schema, so OpenAPI documents it for the dashboard's generated client. Objects stay
 * open (additionalProperties) so a field added to the service still reaches the client.
 */

export const AdminUserRow = Open({
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
  tenants: Type.Array(MembershipView),
});

export const AdminUserList = Open({ users: Type.Array(AdminUserRow), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
