import type { FastifyRequest } from 'fastify';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NoContent, NotJson } from '../../core/schemas.ts';
import { badRequest, errorBody } from '../../core/errors.ts';
import { readUpload } from '../../core/upload.ts';
import { MAX_NOTES, type MobileService, type ReleaseFields, type StagedPackage } from './service.ts';
import { ForceBody, LatestQuery, MobileLatest, MobileRelease, MobileReleaseList } from './schemas.ts';

const FIELDS = ['version', 'notes', 'forceUpdate'] as const;

function readFields(fields: Partial<Record<(typeof FIELDS)[number], string>>): ReleaseFields {
  const version = fields.version?.trim();
  if (!version) throw badRequest('version is required (SemVer, e.g. 1.4.2)', 'INVALID_VERSION');
  const notes = (fields.notes ?? '').trim();
  if (notes.length > MAX_NOTES) throw badRequest(`notes may have at most ${MAX_NOTES} characters`);
  const force = (fields.forceUpdate ?? 'false').trim().toLowerCase();
  if (!['true', 'false', '1', '0', 'on', ''].includes(force)) throw badRequest('forceUpdate must be true or false');
  return { version, notes, forceUpdate: force === 'true' || force === '1' || force === 'on' };
}

/**
 * The upload's parts: the package (file field `file`) goes straight to a temp file through the
 * service; the fields are version, notes and forceUpdate. On any refusal the temp file goes.
 */
async function readRelease(req: FastifyRequest, mobile: MobileService): Promise<{ staged: StagedPackage; fields: ReleaseFields }> {
  const { files, fields } = await readUpload(req, {
    files: {
      file: {
        maxBytes: mobile.maxBytes,
        missing: { code: 'INVALID_PACKAGE', message: 'The package file (field "file": .apk, .aab or .ipa) is required' },
        receive: (stream, part) => mobile.stage(part.filename, stream),
        discard: mobile.discard,
      },
    },
    fields: { names: FIELDS, maxBytes: 64 * 1024, read: readFields },
  });
  return { staged: files.file, fields };
}

export function mobileRoutes(mobile: MobileService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/mobile/latest',
      action: 'mobile.latest',
      access: access.public,
      audit: [],
      summary:
        'The highest mobile release by SemVer; with ?current=, whether it is newer (updateAvailable) and whether a release newer than current is forced (forceUpdate)',
      tags: ['mobile'],
      schema: { querystring: LatestQuery, response: { 200: MobileLatest } },
      handler: ({ query }) => mobile.latest(query.current),
    }),

    defineRoute({
      method: 'GET',
      url: '/mobile/download/:id',
      action: 'mobile.download',
      access: access.public,
      audit: [],
      summary: 'The app package, with HTTP range requests (206, 416, Accept-Ranges: bytes; one range of at most 16 MiB per answer)',
      tags: ['mobile'],
      schema: {
        params: IdParams,
        response: {
          200: NotJson('application/vnd.android.package-archive', 'The whole package'),
          206: NotJson('application/vnd.android.package-archive', 'The range asked for'),
        },
      },
      handler: async ({ params, req, reply }) => {
        const res = await mobile.open(params.id, req.headers.range);
        reply.code(res.status).headers(res.headers);
        if (res.status === 416) {
          reply.header('content-type', 'application/json; charset=utf-8');
          return errorBody('RANGE_NOT_SATISFIABLE', `The requested range lies outside the package (${res.headers['content-range']})`);
        }
        return res.body;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/mobile/releases',
      action: 'mobile.releases.list',
      access: access.hubAdmin,
      audit: [],
      summary: 'The 20 most recent uploads, newest first',
      tags: ['mobile', 'admin'],
      schema: { response: { 200: MobileReleaseList } },
      handler: () => mobile.recent(),
    }),

    defineRoute({
      method: 'POST',
      url: '/mobile/upload',
      action: 'mobile.upload',
      access: access.hubAdmin,
      audit: ['admin.mobile_release_uploaded'],
      summary:
        'Upload a release: multipart file (.apk, .aab or .ipa, a zip archive, at most MOBILE_MAX_BYTES), version (SemVer, unique), notes, forceUpdate',
      tags: ['mobile', 'admin'],
      schema: { response: { 201: MobileRelease } },
      handler: async ({ actor, req, reply }) => {
        const { staged, fields } = await readRelease(req, mobile);
        const created = await mobile.upload(actor, staged, fields);
        reply.code(201);
        return created;
      },
    }),

    defineRoute({
      method: 'PUT',
      url: '/mobile/releases/:id',
      action: 'mobile.releases.update',
      access: access.hubAdmin,
      audit: ['admin.mobile_release_updated'],
      summary: "Set a release's forceUpdate",
      tags: ['mobile', 'admin'],
      schema: { params: IdParams, body: ForceBody, response: { 200: MobileRelease } },
      handler: ({ actor, params, body }) => mobile.setForce(actor, params.id, body.forceUpdate),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/mobile/releases/:id',
      action: 'mobile.releases.delete',
      access: access.hubAdmin,
      audit: ['admin.mobile_release_deleted'],
      summary: 'Delete a release: its package and its row',
      tags: ['mobile', 'admin'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params, reply }) => {
        await mobile.remove(actor, params.id);
        reply.code(204);
      },
    }),
  ];
}
