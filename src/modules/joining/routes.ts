import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NoContent, Uuid } from '../../core/schemas.ts';
import type { JoiningService } from './service.ts';
import { ApprovedRequest, BlockList, DeniedRequest, Directory, DirectoryTeam, JoinRequestList, JoinRequested, Joined } from './schemas.ts';

// The team is named in the path but callers need not belong to it: the service decides what
// outsiders may see (404 for invite-only teams, blocked callers and the hub switch off).
const outsiderTeam = { in: 'params', key: 'id', outsiders: true } as const;
const adminOfTeam = { access: access.role('admin', { personOnly: true }), team: { in: 'params', key: 'id' } as const };

export function joiningRoutes(joining: JoiningService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/tenants/directory',
      action: 'teams.directory',
      access: access.session,
      audit: [],
      summary: 'Teams accepting newcomers (?search=); {enabled: false, teams: []} while allow_public_teams is off',
      tags: ['joining'],
      schema: { querystring: Type.Object({ search: Type.Optional(Type.String({ maxLength: 100 })) }), response: { 200: Directory } },
      handler: ({ actor, query }) => joining.directory(actor, query.search?.trim() || null),
    }),

    defineRoute({
      method: 'GET',
      url: '/tenants/:id/join',
      action: 'teams.join.card',
      access: access.session,
      team: outsiderTeam,
      audit: [],
      summary: "One team's public card",
      tags: ['joining'],
      schema: { params: IdParams, response: { 200: DirectoryTeam } },
      handler: ({ actor, params }) => joining.card(actor, params.id),
    }),

    defineRoute({
      method: 'POST',
      url: '/tenants/:id/join',
      action: 'teams.join.request',
      access: access.session,
      team: outsiderTeam,
      audit: ['member.joined_team', 'member.join_requested'],
      summary: 'Joins an open team (200) or asks to join (202); message at most 500 characters; rate-limited',
      tags: ['joining'],
      schema: {
        params: IdParams,
        body: Type.Optional(Type.Object({ message: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })),
        response: { 200: Joined, 202: JoinRequested },
      },
      handler: async ({ actor, params, body, reply }) => {
        const result = await joining.requestToJoin(actor, params.id, body?.message?.trim() ?? '');
        reply.code(result.status === 'joined' ? 200 : 202);
        return result;
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/tenants/:id/join',
      action: 'teams.join.withdraw',
      access: access.session,
      team: outsiderTeam,
      audit: ['member.join_request_withdrawn'],
      summary: 'Withdraws the own pending request',
      tags: ['joining'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await joining.withdraw(actor, params.id);
        return undefined;
      },
    }),

    defineRoute({
      ...adminOfTeam,
      method: 'GET',
      url: '/tenants/:id/join-requests',
      action: 'teams.join_requests.list',
      audit: [],
      summary: 'Pending requests with name, email and message',
      tags: ['joining'],
      schema: { params: IdParams, response: { 200: JoinRequestList } },
      handler: async ({ actor }) => ({ requests: await joining.listRequests(actor.teamId) }),
    }),

    defineRoute({
      ...adminOfTeam,
      method: 'POST',
      url: '/tenants/:id/join-requests/:rid/approve',
      action: 'teams.join_requests.approve',
      audit: ['admin.join_request_approved', 'member.joined_team'],
      summary: 'Approves with role viewer or member (default: the team default_join_role); mails the requester',
      tags: ['joining'],
      schema: {
        params: Type.Object({ id: Uuid, rid: Uuid }),
        body: Type.Optional(
          Type.Object(
            { role: Type.Optional(Type.Union([Type.Literal('viewer'), Type.Literal('member')])) },
            { additionalProperties: false },
          ),
        ),
        response: { 200: ApprovedRequest },
      },
      handler: ({ actor, params, body }) => joining.approve(actor, actor.teamId, params.rid, body?.role),
    }),

    defineRoute({
      ...adminOfTeam,
      method: 'POST',
      url: '/tenants/:id/join-requests/:rid/deny',
      action: 'teams.join_requests.deny',
      audit: ['admin.join_request_denied'],
      summary: 'Denies, optionally blocking the person; no mail',
      tags: ['joining'],
      schema: {
        params: Type.Object({ id: Uuid, rid: Uuid }),
        body: Type.Optional(Type.Object({ block: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
        response: { 200: DeniedRequest },
      },
      handler: ({ actor, params, body }) => joining.deny(actor, actor.teamId, params.rid, body?.block === true),
    }),

    defineRoute({
      ...adminOfTeam,
      method: 'GET',
      url: '/tenants/:id/blocks',
      action: 'teams.blocks.list',
      audit: [],
      summary: 'People blocked from this team',
      tags: ['joining'],
      schema: { params: IdParams, response: { 200: BlockList } },
      handler: async ({ actor }) => ({ blocks: await joining.listBlocks(actor.teamId) }),
    }),

    defineRoute({
      ...adminOfTeam,
      method: 'DELETE',
      url: '/tenants/:id/blocks/:userId',
      action: 'teams.blocks.lift',
      audit: ['admin.member_unblocked'],
      summary: 'Lifts a block',
      tags: ['joining'],
      schema: { params: Type.Object({ id: Uuid, userId: Uuid }), response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await joining.unblock(actor, actor.teamId, params.userId);
        return undefined;
      },
    }),
  ];
}
