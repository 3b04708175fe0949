import { badRequest } from '../../core/errors.ts';
import { access, defineRoute } from '../../core/permissions.ts';
import { NoContent, NotJson } from '../../core/schemas.ts';
import { SQUARE_SIZES, type SquareSize } from './image.ts';
import {
  ByKeyQuery,
  CacheStats,
  Cleared,
  CodeQuery,
  Gallery,
  ImagesBody,
  ImageStatuses,
  ProxyQuery,
  Recrop,
  Retried,
  ShowcaseQuery,
} from './schemas.ts';
import type { Served, ServeOptions, SpeciesImagesService } from './service.ts';

/**
 * Species photos (spec §4 "Species"). Photos belong to no team: any signed-in caller reads them
 * ("Viewer+", as /species/translate), the showcase is public, the cache is the hub admin's.
 */
export function speciesImagesRoutes(images: SpeciesImagesService) {
  const hub = { access: access.hubAdmin, tags: ['admin', 'species'] };
  const image = NotJson('image/jpeg', 'The image (image/jpeg; an original may be image/png or image/webp)');
  const imageResponses = { 200: image, 304: NoContent };

  function square(v: number | undefined): SquareSize | undefined {
    if (v === undefined) return undefined;
    if (!(SQUARE_SIZES as readonly number[]).includes(v)) throw badRequest('square is 64, 128, 256 or 512', 'INVALID_SQUARE_SIZE');
    return v as SquareSize;
  }
  function options(q: { original?: string; maxBytes?: number; square?: number }, ifNoneMatch: string | string[] | undefined): ServeOptions {
    return {
      original: q.original === '1' || q.original === 'true',
      maxBytes: q.maxBytes,
      square: square(q.square),
      ifNoneMatch: typeof ifNoneMatch === 'string' ? ifNoneMatch : undefined,
    };
  }
  function send(reply: { code(n: number): unknown; header(k: string, v: string): unknown }, s: Served) {
    for (const [k, v] of Object.entries(s.headers)) reply.header(k, v);
    reply.header('x-content-type-options', 'nosniff');
    if (s.status === 304) {
      reply.code(304);
      return undefined;
    }
    reply.header('content-type', s.contentType);
    return s.body!;
  }

  return [
    defineRoute({
      method: 'POST',
      url: '/species/images',
      action: 'species.images.request',
      access: access.authenticated,
      audit: [],
      summary:
        "Each species' photo status (ready, pending, failed, none) with the first photo's credit; missing ones are queued for download",
      tags: ['species'],
      schema: { body: ImagesBody, response: { 200: ImageStatuses } },
      handler: async ({ body }) => ({ images: await images.request(body.codes) }),
    }),
    defineRoute({
      method: 'GET',
      url: '/species/image-gallery',
      action: 'species.images.gallery',
      access: access.authenticated,
      audit: [],
      summary: "A species' photos in gallery order: display, square and full-resolution URLs, originalBytes, credit, licence",
      tags: ['species'],
      schema: { querystring: CodeQuery, response: { 200: Gallery } },
      handler: ({ query }) => images.gallery(query.code),
    }),
    defineRoute({
      method: 'GET',
      url: '/species/image/proxy',
      action: 'species.images.proxy',
      access: access.authenticated,
      audit: [],
      summary:
        "A species' first photo from storage: the display copy; original=1 full resolution (maxBytes: the display copy when the original is larger); square=64|128|256|512 a JPEG crop centred on the bird",
      tags: ['species'],
      schema: { querystring: ProxyQuery, response: imageResponses },
      handler: async ({ query, req, reply }) => send(reply, await images.proxy(query.code, options(query, req.headers['if-none-match']))),
    }),
    defineRoute({
      method: 'GET',
      url: '/species/image/by-key',
      action: 'species.images.by_key',
      access: access.authenticated,
      audit: [],
      summary: 'A photo by the key of its gallery URL, with the same original, maxBytes and square parameters',
      tags: ['species'],
      schema: { querystring: ByKeyQuery, response: imageResponses },
      handler: async ({ query, req, reply }) => send(reply, await images.byKey(query.key, options(query, req.headers['if-none-match']))),
    }),
    defineRoute({
      method: 'GET',
      url: '/species/showcase/image',
      action: 'species.images.showcase',
      access: access.public,
      audit: [],
      summary: "A species' first photo for public pages: the display copy, or square=64|128|256|512",
      tags: ['species'],
      schema: { querystring: ShowcaseQuery, response: imageResponses },
      handler: async ({ query, req, reply }) =>
        send(reply, await images.showcase(query.code, { ...options({ square: query.square }, req.headers['if-none-match']) })),
    }),
    defineRoute({
      ...hub,
      method: 'GET',
      url: '/species/image-cache/stats',
      action: 'species.image_cache.stats',
      audit: [],
      summary: 'Image cache statistics: species by status, stored photos and bytes, crops in memory, queues',
      schema: { response: { 200: CacheStats } },
      handler: () => images.stats(),
    }),
    defineRoute({
      ...hub,
      method: 'POST',
      url: '/species/image-cache/clear',
      action: 'species.image_cache.clear',
      audit: ['admin.image_cache_cleared'],
      summary: 'Clears the whole image cache: every stored photo and status (the next request downloads again)',
      schema: { response: { 200: Cleared } },
      handler: ({ actor }) => images.clear(actor),
    }),
    defineRoute({
      ...hub,
      method: 'POST',
      url: '/species/image-cache/retry',
      action: 'species.image_cache.retry',
      audit: [],
      summary: 'Re-queues the failed downloads; answers how many species',
      schema: { response: { 200: Retried } },
      handler: () => images.retry(),
    }),
    defineRoute({
      ...hub,
      method: 'POST',
      url: '/species/image-cache/recrop',
      action: 'species.image_cache.recrop',
      audit: ['admin.image_recrop_started'],
      summary: 'Finds the bird again in every photo, in the background; squares are served with the short lifetime until each is done',
      schema: { response: { 202: Recrop } },
      handler: async ({ actor, reply }) => {
        const r = await images.recrop(actor);
        reply.code(202);
        return r;
      },
    }),
  ];
}
