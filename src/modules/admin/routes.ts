import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { AnyRole, IdParams, NoContent, Paging, Uuid } from '../../core/schemas.ts';
import { Email, Password, PersonName } from '../users/schemas.ts';
import type { UsersService } from '../users/service.ts';
import type { TeamsService } from '../teams/service.ts';
import { AddedMembership, AdminUserList, AdminUserReply, BlockedUser, PasswordReset } from './schemas.ts';

const hub = { access: access.hubAdmin, tags: ['admin'] };

/** Hub admin endpoints (spec §4 "Hub admin endpoints"); membership rows live in teams/routes.ts. */
export function adminRoutes(users: UsersService, teams: TeamsService) {
  return [
    defineRoute({
      ...hub,
      method: 'GET',
      url: '/admin/users',
      action: 'admin.users.list',
      audit: [],
      summary: 'Users, filtered by ?search (email or name), ?status and ?tenantId',
      schema: {
        querystring: Type.Object(
          {
            search: Type.Optional(Type.String({ maxLength: 200 })),
            status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('blocked')])),
            tenantId: Type.Optional(Uuid),
            ...Paging,
          },
          { additionalProperties: false },
        ),
        response: { 200: AdminUserList },
      },
      handler: ({ query }) => users.adminList({ ...query, limit: query.limit ?? 50, offset: query.offset ?? 0 }),
    }),

    defineRoute({
      ...hub,
      method: 'GET',
      url: '/admin/users/:id',
      action: 'admin.users.read',
      audit: [],
      summary: 'One user with teams, lock and last sign-in',
      schema: { params: IdParams, response: { 200: AdminUserReply } },
      handler: async ({ params }) => ({ user: await users.adminGet(params.id) }),
    }),

    defineRoute({
      ...hub,
      method: 'PUT',
      url: '/admin/users/:id',
      action: 'admin.users.update',
      audit: ['admin.user_edited'],
      summary: 'Edits name, email and the hub-admin flag',
      schema: {
        params: IdParams,
        body: Type.Object(
          { name: Type.Optional(PersonName), email: Type.Optional(Email), isAdmin: Type.Optional(Type.Boolean()) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: AdminUserReply },
      },
      handler: async ({ actor, params, body }) => ({ user: await users.adminEdit(actor, params.id, body) }),
    }),

    defineRoute({
      ...hub,
      method: 'POST',
      url: '/admin/users/:id/block',
      action: 'admin.users.block',
      audit: ['admin.user_blocked', 'admin.user_unblocked'],
      summary: 'Blocks or unblocks (toggle); blocking ends sessions, tokens and keys at once',
      schema: { params: IdParams, response: { 200: BlockedUser } },
      handler: ({ actor, params }) => users.toggleBlock(actor, params.id),
    }),

    defineRoute({
      ...hub,
      method: 'POST',
      url: '/admin/users/:id/reset-password',
      action: 'admin.users.reset_password',
      audit: ['admin.password_reset'],
      summary: 'Sets a password (or generates one, shown once), clears the lock and ends sessions',
      schema: {
        params: IdParams,
        body: Type.Optional(Type.Object({ password: Type.Optional(Password) }, { additionalProperties: false })),
        response: { 200: PasswordReset },
      },
      handler: ({ actor, params, body }) => users.adminResetPassword(actor, params.id, body?.password),
    }),

    defineRoute({
      ...hub,
      method: 'DELETE',
      url: '/admin/users/:id',
      action: 'admin.users.delete',
      audit: ['admin.user_deleted'],
      summary: 'Deletes and erases a person; 409 for a sole owner; hub admins cannot be deleted',
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await users.adminDelete(actor, params.id);
        return undefined;
      },
    }),

    defineRoute({
      ...hub,
      method: 'POST',
      url: '/admin/users/:id/tenants',
      action: 'admin.users.add_to_team',
      audit: ['admin.user_added_to_tenant'],
      summary: 'Adds a person to a team; owner only for a team without one (409 TEAM_HAS_OWNER)',
      schema: {
        params: IdParams,
        body: Type.Object({ tenantId: Uuid, role: AnyRole }, { additionalProperties: false }),
        response: { 201: AddedMembership },
      },
      handler: async ({ actor, params, body, reply }) => {
        await users.requireUser(params.id);
        reply.code(201);
        return { membership: await teams.addUser(actor, params.id, body.tenantId, body.role) };
      },
    }),

    defineRoute({
      ...hub,
      method: 'DELETE',
      url: '/admin/users/:id/tenants/:tid',
      action: 'admin.users.remove_from_team',
      audit: ['admin.user_removed_from_tenant'],
      summary: 'Removes a person from a team; ?devices=keep leaves their devices running for the team',
      schema: {
        params: Type.Object({ id: Uuid, tid: Uuid }),
        querystring: Type.Object({ devices: Type.Optional(Type.Union([Type.Literal('keep'), Type.Literal('disconnect')])) }),
        response: { 204: NoContent },
      },
      handler: async ({ actor, params, query }) => {
        await teams.removeUser(actor, params.id, params.tid, query.devices === 'keep');
        return undefined;
      },
    }),
  ];
}
