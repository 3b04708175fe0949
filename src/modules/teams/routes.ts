import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { AssignableRole, IdParams, NoContent, Uuid } from '../../core/schemas.ts';
import type { TeamsService } from './service.ts';
import { MemberList, MemberReply, TeamList, TeamView } from './schemas.ts';

export function teamsRoutes(teams: TeamsService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/auth/create-tenant',
      action: 'teams.create',
      access: access.session,
      audit: ['admin.tenant_created'],
      summary: 'Creates a team owned by the caller (gated by allow_tenant_creation)',
      tags: ['teams'],
      schema: {
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            slug: Type.Optional(Type.String({ pattern: '^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: TeamView },
      },
      handler: async ({ actor, body, reply }) => {
        reply.code(201);
        return teams.createTeam(actor, body);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/tenants',
      action: 'teams.list',
      access: access.authenticated,
      audit: [],
      summary: "The caller's teams with their role; hub admins may pass ?all=true for every team",
      tags: ['teams'],
      schema: { querystring: Type.Object({ all: Type.Optional(Type.Boolean()) }), response: { 200: TeamList } },
      handler: async ({ actor, query }) => ({ tenants: await teams.listTeams(actor, query.all === true) }),
    }),

    defineRoute({
      method: 'POST',
      url: '/tenants/:id/leave',
      action: 'teams.leave',
      access: access.session,
      team: { in: 'params', key: 'id' },
      audit: ['member.left_team'],
      summary: 'Leaves the team; the owner gets 400 OWNER_CANNOT_LEAVE',
      tags: ['teams'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await teams.leave(actor, params.id);
        return undefined;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/auth/members',
      action: 'teams.members.list',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: 'Members of the team (membership id, user id, name, email, role)',
      tags: ['teams'],
      schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }), response: { 200: MemberList } },
      handler: async ({ actor }) => ({ members: await teams.listMembers(actor.teamId) }),
    }),

    defineRoute({
      method: 'PUT',
      url: '/admin/members/:id/role',
      action: 'teams.members.change_role',
      access: access.role('admin', { personOnly: true }),
      team: { resource: 'membership', param: 'id' },
      audit: ['admin.member_role_changed'],
      summary: "Sets a member's role (viewer, member, admin); an admin's role is the owner's to change",
      tags: ['teams'],
      schema: {
        params: IdParams,
        body: Type.Object({ role: AssignableRole }, { additionalProperties: false }),
        response: { 200: MemberReply },
      },
      handler: async ({ actor, params, body }) => ({ member: await teams.changeRole(actor, params.id, body.role) }),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/admin/members/:id',
      action: 'teams.members.remove',
      access: access.role('admin', { personOnly: true }),
      team: { resource: 'membership', param: 'id' },
      audit: ['admin.member_removed'],
      summary: "Removes a member; removing an admin is the owner's; the owner is never removable",
      tags: ['teams'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await teams.removeMember(actor, params.id);
        return undefined;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/admin/members/:id/transfer-ownership',
      action: 'teams.members.transfer_ownership',
      access: access.role('owner', { personOnly: true }),
      team: { resource: 'membership', param: 'id' },
      audit: ['admin.ownership_transferred'],
      summary: 'Makes the member the owner and the previous owner an admin, in one step',
      tags: ['teams'],
      schema: { params: IdParams, response: { 200: MemberList } },
      handler: async ({ actor, params }) => {
        await teams.transferOwnership(actor, params.id);
        return { members: await teams.listMembers(actor.teamId) };
      },
    }),
  ];
}
