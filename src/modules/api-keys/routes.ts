import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { AssignableRole, IdParams, NoContent, Uuid } from '../../core/schemas.ts';
import type { ApiKeysService } from './service.ts';
import { ApiKeyList, CreatedApiKey } from './schemas.ts';

/** Team-scoped API keys (spec leaves the endpoint open; see docs/decisions.md). */
export function apiKeysRoutes(keys: ApiKeysService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/auth/api-keys',
      action: 'teams.api_keys.create',
      access: access.role('admin', { personOnly: true }),
      team: { in: 'body', key: 'tenantId' },
      audit: ['admin.api_key_created'],
      summary: 'Creates a team API key; the key is shown once',
      tags: ['teams'],
      schema: {
        body: Type.Object(
          {
            tenantId: Uuid,
            name: Type.String({ minLength: 1, maxLength: 100 }),
            role: AssignableRole,
            expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedApiKey },
      },
      handler: async ({ actor, body, reply }) => {
        reply.code(201);
        return keys.create(actor, actor.teamId, body);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/auth/api-keys',
      action: 'teams.api_keys.list',
      access: access.role('admin', { personOnly: true }),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: 'Active team API keys (prefix only, never the key)',
      tags: ['teams'],
      schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }), response: { 200: ApiKeyList } },
      handler: async ({ actor }) => ({ apiKeys: await keys.list(actor.teamId) }),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/auth/api-keys/:id',
      action: 'teams.api_keys.revoke',
      access: access.role('admin', { personOnly: true }),
      team: { resource: 'apiKey', param: 'id' },
      audit: [],
      summary: 'Revokes a team API key at once',
      tags: ['teams'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await keys.revoke(actor, params.id);
        return undefined;
      },
    }),
  ];
}
