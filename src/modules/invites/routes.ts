import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { AssignableRole, IdParams, NoContent, Uuid } from '../../core/schemas.ts';
import { Email } from '../users/schemas.ts';
import type { InvitesService } from './service.ts';
import { AcceptedInvite, CreatedInvite, InviteList, InviteSummary, InviteToken } from './schemas.ts';

export function invitesRoutes(invites: InvitesService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/auth/invites',
      action: 'teams.invites.create',
      access: access.role('admin', { personOnly: true }),
      team: { in: 'body', key: 'tenantId' },
      audit: ['admin.invite_created'],
      summary: 'Creates a single-use invite link valid 7 days; the token is shown once',
      tags: ['teams'],
      schema: {
        body: Type.Object({ tenantId: Uuid, role: AssignableRole, email: Type.Optional(Email) }, { additionalProperties: false }),
        response: { 201: CreatedInvite },
      },
      handler: async ({ actor, body, reply }) => {
        reply.code(201);
        return invites.create(actor, actor.teamId, body.role, body.email ?? null);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/auth/invites',
      action: 'teams.invites.list',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: 'Pending invites of the team (never their tokens)',
      tags: ['teams'],
      schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }), response: { 200: InviteList } },
      handler: async ({ actor }) => ({ invites: await invites.listPending(actor.teamId) }),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/auth/invites/:id',
      action: 'teams.invites.revoke',
      access: access.role('admin', { personOnly: true }),
      team: { resource: 'invite', param: 'id' },
      audit: ['admin.invite_revoked'],
      summary: 'Revokes a pending invite',
      tags: ['teams'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await invites.revoke(actor, params.id);
        return undefined;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/auth/invites/summary/:token',
      action: 'teams.invites.summary',
      access: access.public,
      audit: [],
      summary:
        'What an invite link offers: {teamName, inviterName, role, expiresAt}, never an email; 404 when unknown, used, revoked or expired',
      tags: ['teams'],
      schema: { params: Type.Object({ token: InviteToken }), response: { 200: InviteSummary } },
      handler: ({ params }) => invites.summary(params.token),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/invites/accept',
      action: 'teams.invites.accept',
      access: access.session,
      audit: ['member.joined_team'],
      summary: 'A signed-in person joins the team of an invite link',
      tags: ['teams'],
      schema: {
        body: Type.Object({ token: InviteToken }, { additionalProperties: false }),
        response: { 200: AcceptedInvite },
      },
      handler: ({ actor, body }) => invites.accept(actor, body.token),
    }),
  ];
}
