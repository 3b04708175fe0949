import { Type } from 'typebox';
import { Open } from '../../core/schemas.ts';
import { MembershipView } from '../teams/schemas.ts';
import { AdminUserFields, UserFields } from '../users/schemas.ts';

/**
 * GET /admin/users as users.adminList returns it (presentAdminUser in users/schemas.ts): the
 * response schema, so OpenAPI documents it for the dashboard's generated client. Objects stay
 * open (additionalProperties) so a field added to the service still reaches the client.
 */

export const AdminUserRow = Open({ ...UserFields, ...AdminUserFields, tenants: Type.Array(MembershipView) });

export const AdminUserList = Open({
  users: Type.Array(AdminUserRow),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
