import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { answerAudio } from '../audio/routes.ts';
import { IdParams, NoContent, NotJson } from '../../core/schemas.ts';
import type { PublishedAudio } from './service.ts';
import { PublicAudioParams, PublishedList, PublishedListQuery, RevokeAllBody } from './schemas.ts';

export function publishedAudioRoutes(published: PublishedAudio) {
  return [
    defineRoute({
      method: 'GET',
      url: '/export/published-audio',
      action: 'exports.published_audio.list',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "The team's published recordings (public links its exports created), newest first, with their links",
      tags: ['exports'],
      schema: { querystring: PublishedListQuery, response: { 200: PublishedList } },
      handler: ({ actor, query }) => published.list(actor.teamId, query.limit ?? 50, query.offset ?? 0),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/export/published-audio/:id',
      action: 'exports.published_audio.revoke',
      access: access.role('admin'),
      team: { resource: 'publishedAudio', param: 'id' },
      audit: ['admin.published_audio_revoked'],
      summary: 'Revokes one public recording link: it answers 404 from now on (files already sent keep naming it)',
      tags: ['exports'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params, reply }) => {
        await published.revoke(actor, actor.teamId, params.id);
        reply.code(204);
        return undefined;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/export/published-audio/revoke-all',
      action: 'exports.published_audio.revoke_all',
      access: access.role('admin'),
      team: { in: 'body', key: 'tenantId' },
      audit: ['admin.published_audio_revoked_all'],
      summary: 'Revokes every public recording link of the team: {revoked: n}',
      tags: ['exports'],
      schema: { body: RevokeAllBody, response: { 200: Type.Object({ revoked: Type.Integer() }) } },
      handler: ({ actor }) => published.revokeAll(actor, actor.teamId),
    }),
    defineRoute({
      method: 'GET',
      url: '/public/audio/:token',
      action: 'public.audio',
      access: access.public,
      audit: [],
      summary:
        'A published recording as WAV for importers (GBIF, iNaturalist): no sign-in, HTTP ranges, cacheable for an hour; 404 for an unknown, revoked or sensitive one (each counts as a token guess)',
      tags: ['public'],
      schema: {
        params: PublicAudioParams,
        response: { 200: NotJson('audio/wav', 'The whole WAV'), 206: NotJson('audio/wav', 'The range asked for') },
      },
      handler: async ({ params, req, reply }) => {
        const res = await published.open(params.token, req.headers.range);
        // Pages elsewhere (an iNaturalist observation, a GBIF occurrence) play it; the token stays out of Referer.
        return answerAudio(reply, {
          ...res,
          headers: { ...res.headers, 'cross-origin-resource-policy': 'cross-origin', 'referrer-policy': 'no-referrer' },
        });
      },
    }),
  ];
}
