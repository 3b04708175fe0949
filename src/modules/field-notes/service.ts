/**
 * Field notes (issue 22): what people write in the field beside a recorder, with an optional
 * satellite, position and photo. The author edits their own notes; the author or a team admin
 * deletes one. A satellite's deletion leaves its notes in place, unlinked, with its name.
 */
import type { Readable } from 'node:stream';
import type { Db } from '../../infra/db/index.ts';
import type { ObjectStorage } from '../../infra/storage/types.ts';
import type { Clock } from '../../core/clock.ts';
import { type Actor, type TeamActor, roleAtLeast } from '../../core/actor.ts';
import { newId } from '../../core/crypto.ts';
import { AppError, badRequest, forbidden, notFound } from '../../core/errors.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { createFieldNotesRepo, type NoteFields, type NoteRow } from './repo.ts';
import type { NoteCreateBody, NoteListQuery, NoteUpdateBody, NoteView } from './schemas.ts';

/** A photo is at most this large (10 MB). */
export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

export const PHOTO_TYPES = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' } as const;
export type PhotoType = keyof typeof PHOTO_TYPES;

/** The image type the bytes say, whatever the upload claimed; null for anything else. */
export function sniffPhoto(b: Buffer): PhotoType | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

export const photoKey = (tenantId: string, id: string, type: PhotoType) => `notes/${tenantId}/${id}.${PHOTO_TYPES[type]}`;

const iso = (d: Date) => new Date(d).toISOString();

export function presentNote(n: NoteRow): NoteView {
  return {
    id: n.id,
    tenantId: n.tenantId,
    authorId: n.authorId,
    authorName: n.authorName,
    text: n.text,
    at: iso(n.at),
    satelliteId: n.satelliteId,
    satelliteName: n.satelliteName,
    latitude: n.latitude,
    longitude: n.longitude,
    photoUrl: n.photoKey ? `/api/field-notes/${n.id}/photo` : null,
    createdAt: iso(n.createdAt),
    updatedAt: iso(n.updatedAt),
  };
}

/** Notes are written by people: a key or the internal key has nobody to name as the author. */
function personOf(actor: Actor): { id: string; name: string } {
  if (!actor.userId || !actor.person) throw forbidden('Only a signed-in person can write field notes', 'PERSON_REQUIRED');
  return { id: actor.userId, name: actor.person.name };
}

export function createFieldNotesService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  storage: Pick<ObjectStorage, 'put' | 'stream' | 'delete'>;
  /** The satellite's name when it is one of the team's, else null (satellites module). */
  satelliteName: (tenantId: string, satelliteId: string) => Promise<string | null>;
}) {
  const { db, clock, audit, storage } = deps;
  const repo = createFieldNotesRepo(db);

  async function require(tenantId: string, id: string, tx: Db = db): Promise<NoteRow> {
    const n = await repo.find(tenantId, id, tx);
    if (!n) throw notFound('No such field note');
    return n;
  }

  /** Only the author edits a note or its photo (an admin deletes, never rewrites, someone else's words). */
  function requireAuthor(actor: Actor, n: NoteRow) {
    const person = personOf(actor);
    if (n.authorId !== person.id) throw forbidden('Only the author may edit this field note', 'NOT_AUTHOR');
  }

  async function fieldsOf(tenantId: string, body: NoteUpdateBody, keepAt?: Date): Promise<NoteFields> {
    const text = body.text.trim();
    if (!text) throw badRequest('A field note needs some text', 'VALIDATION_FAILED');
    const hasLat = body.latitude !== undefined && body.latitude !== null;
    const hasLon = body.longitude !== undefined && body.longitude !== null;
    if (hasLat !== hasLon) throw badRequest('Give latitude and longitude together', 'VALIDATION_FAILED');
    let satelliteName: string | null = null;
    if (body.satelliteId) {
      satelliteName = await deps.satelliteName(tenantId, body.satelliteId);
      if (satelliteName === null) throw badRequest("satelliteId is not one of the team's satellites", 'UNKNOWN_SATELLITE');
    }
    return {
      text,
      at: body.at ? new Date(body.at) : (keepAt ?? clock.now()),
      satelliteId: body.satelliteId ?? null,
      satelliteName,
      latitude: hasLat ? body.latitude! : null,
      longitude: hasLon ? body.longitude! : null,
    };
  }

  return {
    teamOfNote: repo.teamOfNote,
    /** The satellite deletion preview's count: notes that stay, unlinked. */
    countOfSatellite: repo.countOfSatellite,
    keepSatelliteName: repo.keepSatelliteName,

    async list(tenantId: string, q: NoteListQuery) {
      const from = q.from ? new Date(q.from) : undefined;
      const to = q.to ? new Date(q.to) : undefined;
      if (from && to && from >= to) throw badRequest('from must be before to', 'VALIDATION_FAILED');
      const { rows, total } = await repo.list(tenantId, {
        satelliteId: q.satelliteId,
        from,
        to,
        limit: q.limit ?? 50,
        offset: q.offset ?? 0,
      });
      return { notes: rows.map(presentNote), total };
    },

    async create(actor: TeamActor, body: NoteCreateBody) {
      const author = personOf(actor);
      const tenantId = actor.teamId;
      const fields = await fieldsOf(tenantId, body);
      const id = newId();
      await db.tx((tx) => repo.insert(tx, { ...fields, id, tenantId, authorId: author.id, authorName: author.name, now: clock.now() }));
      return presentNote(await require(tenantId, id));
    },

    async update(actor: TeamActor, id: string, body: NoteUpdateBody) {
      const tenantId = actor.teamId;
      const n = await require(tenantId, id);
      requireAuthor(actor, n);
      const fields = await fieldsOf(tenantId, body, n.at);
      await db.tx((tx) => repo.update(tx, tenantId, id, { ...fields, now: clock.now() }));
      return presentNote(await require(tenantId, id));
    },

    /** The author deletes their own note; a team admin or owner (and a hub admin) any note. Its photo goes first. */
    async remove(actor: TeamActor, id: string) {
      const tenantId = actor.teamId;
      const n = await require(tenantId, id);
      const own = actor.userId !== null && n.authorId === actor.userId;
      if (!own && !roleAtLeast(actor.teamRole, 'admin'))
        throw forbidden('Only the author or a team admin may delete this field note', 'NOT_AUTHOR');
      if (n.photoKey) await storage.delete(n.photoKey);
      await db.tx(async (tx) => {
        if (!(await repo.delete(tx, tenantId, id))) throw notFound('No such field note');
        await audit.write(tx, actor, {
          action: 'field_note.deleted',
          targetType: 'field_note',
          targetId: id,
          // The text itself stays out of the log: its length says enough.
          details: {
            own,
            authorId: n.authorId,
            authorName: n.authorName,
            satelliteId: n.satelliteId,
            satelliteName: n.satelliteName,
            at: iso(n.at),
            textLength: n.text.length,
            photo: n.photoKey !== null,
          },
        });
      });
    },

    /** Stores (or replaces) the note's photo; the type comes from the bytes, which must be JPEG, PNG or WebP. */
    async putPhoto(actor: TeamActor, id: string, read: () => Promise<Buffer>) {
      const tenantId = actor.teamId;
      const n = await require(tenantId, id);
      // Who may attach is known before a byte of the upload is read.
      requireAuthor(actor, n);
      const bytes = await read();
      const type = sniffPhoto(bytes);
      if (!type) throw badRequest('The photo must be a JPEG, PNG or WebP image', 'INVALID_PHOTO');
      const key = photoKey(tenantId, id, type);
      await storage.put(key, bytes, type);
      try {
        await db.tx(async (tx) => {
          if (!(await repo.setPhoto(tx, tenantId, id, { key, type, bytes: bytes.length, now: clock.now() }))) {
            throw notFound('No such field note');
          }
        });
      } catch (err) {
        if (key !== n.photoKey) await storage.delete(key);
        throw err;
      }
      // A photo of another type leaves its old object behind: remove it.
      if (n.photoKey && n.photoKey !== key) await storage.delete(n.photoKey);
      return presentNote(await require(tenantId, id));
    },

    async photo(tenantId: string, id: string): Promise<{ type: string; body: Readable }> {
      const n = await require(tenantId, id);
      const body = n.photoKey ? await storage.stream(n.photoKey) : null;
      if (!n.photoKey || !n.photoType || !body) throw new AppError(404, 'NO_PHOTO', 'This field note has no photo');
      return { type: n.photoType, body };
    },
  };
}

export type FieldNotesService = ReturnType<typeof createFieldNotesService>;
