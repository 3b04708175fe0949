import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { NotJson, Uuid } from '../../core/schemas.ts';
import { SPECTROGRAM_LIMITS as L, THUMBNAIL, spectrogramHeaders, type SpectrogramService } from './spectrogram.ts';

const bounded = (l: { min: number; max: number; default: number }) =>
  Type.Optional(Type.Integer({ minimum: l.min, maximum: l.max, default: l.default }));

export const SpectrogramQuery = Type.Object(
  { width: bounded(L.width), height: bounded(L.height), maxHz: bounded(L.maxHz) },
  { additionalProperties: false },
);

export function spectrogramRoutes(spectrograms: SpectrogramService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/audio/:chunkId/spectrogram.png',
      action: 'audio.spectrogram',
      access: access.role('viewer'),
      team: { resource: 'chunk', param: 'chunkId' },
      audit: [],
      summary:
        'PNG spectrogram of a whole chunk: time left to right, 0 Hz at the bottom to maxHz at the top; headers x-spectrogram-min-hz, -max-hz, -duration-ms, -sample-rate',
      tags: ['audio'],
      schema: {
        params: Type.Object({ chunkId: Uuid }),
        querystring: SpectrogramQuery,
        response: { 200: NotJson('image/png', 'The spectrogram') },
      },
      handler: async ({ actor, params, query, reply }) => {
        const s = await spectrograms.ofChunk(actor.teamId, params.chunkId, {
          width: query.width ?? L.width.default,
          height: query.height ?? L.height.default,
          maxHz: query.maxHz ?? L.maxHz.default,
        });
        reply.headers(spectrogramHeaders(s));
        return s.png;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/audio/:chunkId/thumbnail.png',
      action: 'audio.thumbnail',
      access: access.role('viewer'),
      team: { resource: 'chunk', param: 'chunkId' },
      audit: [],
      summary: `A detection row's spectrogram thumbnail of a chunk (${THUMBNAIL.width} × ${THUMBNAIL.height} px, 0 to ${THUMBNAIL.maxHz} Hz), rendered once and kept; browsers keep it a week`,
      tags: ['audio'],
      schema: { params: Type.Object({ chunkId: Uuid }), response: { 200: NotJson('image/png', 'The thumbnail') } },
      handler: async ({ actor, params, reply }) => {
        const s = await spectrograms.thumbnailOf(actor.teamId, params.chunkId);
        // A chunk's audio never changes under its id: the image is immutable while it exists.
        reply.headers({ ...spectrogramHeaders(s), 'cache-control': 'private, max-age=604800, immutable' });
        return s.png;
      },
    }),
  ];
}
