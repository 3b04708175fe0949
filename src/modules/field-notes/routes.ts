import type { FastifyRequest } from 'fastify';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NoContent, NotJson } from '../../core/schemas.ts';
import { badRequest } from '../../core/errors.ts';
import { readUpload } from '../../core/upload.ts';
import { MAX_PHOTO_BYTES, PHOTO_TYPES, type FieldNotesService } from './service.ts';
import { NoteCreateBody, NoteList, NoteListQuery, NoteUpdateBody, NoteView } from './schemas.ts';

/** The upload's one file "photo": JPEG, PNG or WebP by its declared type, at most MAX_PHOTO_BYTES. */
async function readPhoto(req: FastifyRequest): Promise<Buffer> {
  const { files } = await readUpload(req, {
    files: {
      photo: {
        maxBytes: MAX_PHOTO_BYTES,
        missing: { code: 'INVALID_PHOTO', message: 'The file "photo" is required' },
        check: ({ mimetype }) => {
          if (!Object.hasOwn(PHOTO_TYPES, mimetype)) throw badRequest('The photo must be a JPEG, PNG or WebP image', 'INVALID_PHOTO');
        },
      },
    },
  });
  return files.photo;
}

export function fieldNotesRoutes(notes: FieldNotesService) {
  const byNote = { resource: 'fieldNote', param: 'id' } as const;
  // Notes are written by people; a key reads them.
  const memberPerson = access.role('member', { personOnly: true });
  return [
    defineRoute({
      method: 'GET',
      url: '/field-notes',
      action: 'field_notes.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "The team's field notes, newest first; by satellite and time window (from inclusive, to exclusive)",
      tags: ['field-notes'],
      schema: { querystring: NoteListQuery, response: { 200: NoteList } },
      handler: ({ actor, query }) => notes.list(actor.teamId, query),
    }),
    defineRoute({
      method: 'POST',
      url: '/field-notes',
      action: 'field_notes.create',
      access: memberPerson,
      team: { in: 'body', key: 'tenantId' },
      audit: [],
      summary: "Writes a field note (1-5000 characters), optionally at one of the team's satellites and a position",
      tags: ['field-notes'],
      schema: { body: NoteCreateBody, response: { 201: NoteView } },
      handler: async ({ actor, body, reply }) => {
        const note = await notes.create(actor, body);
        reply.code(201);
        return note;
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/field-notes/:id',
      action: 'field_notes.update',
      access: memberPerson,
      team: byNote,
      audit: [],
      summary: 'Rewrites one of your own field notes (fields left out are cleared; `at` stays unless given)',
      tags: ['field-notes'],
      schema: { params: IdParams, body: NoteUpdateBody, response: { 200: NoteView } },
      handler: ({ actor, params, body }) => notes.update(actor, params.id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/field-notes/:id',
      action: 'field_notes.delete',
      access: memberPerson,
      team: byNote,
      audit: ['field_note.deleted'],
      summary: 'Deletes a field note and its photo: your own, or any as a team admin',
      tags: ['field-notes'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params, reply }) => {
        await notes.remove(actor, params.id);
        reply.code(204);
        return undefined;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/field-notes/:id/photo',
      action: 'field_notes.photo.upload',
      access: memberPerson,
      team: byNote,
      audit: [],
      summary: 'Attaches (or replaces) the photo of one of your own notes: multipart file "photo", JPEG, PNG or WebP, at most 10 MB',
      tags: ['field-notes'],
      schema: { params: IdParams, response: { 200: NoteView } },
      handler: async ({ actor, params, req }) => notes.putPhoto(actor, params.id, () => readPhoto(req)),
    }),
    defineRoute({
      method: 'GET',
      url: '/field-notes/:id/photo',
      action: 'field_notes.photo.read',
      access: access.role('viewer'),
      team: byNote,
      audit: [],
      summary: "A field note's photo, with its image type",
      tags: ['field-notes'],
      schema: { params: IdParams, response: { 200: NotJson('image/jpeg', 'The photo (image/jpeg, image/png or image/webp)') } },
      handler: async ({ actor, params, reply }) => {
        const p = await notes.photo(actor.teamId, params.id);
        reply.header('content-type', p.type);
        reply.header('cache-control', 'private, no-cache');
        return p.body;
      },
    }),
  ];
}
