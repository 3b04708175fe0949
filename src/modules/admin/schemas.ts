import { Type } from 'typebox';
import { AnyRole, Open } from '../../core/schemas.ts';
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

export const AdminUserReply = Open({ user: AdminUserRow });

export const BlockedUser = Open({ id: Type.String(), status: Type.String() });

/** A reset: the temporary password only when no mail could carry the link. */
export const PasswordReset = Open({ id: Type.String(), temporaryPassword: Type.Optional(Type.String()) });

export const AddedMembership = Open({
  membership: Open({ id: Type.String(), tenantId: Type.String(), userId: Type.String(), role: AnyRole }),
});
