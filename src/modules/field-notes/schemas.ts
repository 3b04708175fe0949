import { Type, type Static } from 'typebox';
import { Nullable, Open, Paging, Uuid } from '../../core/schemas.ts';

/** Field notes (issue 22): what people write in the field beside a recorder. */

export const MAX_NOTE_TEXT = 5000;

const Latitude = Type.Number({ minimum: -90, maximum: 90 });
const Longitude = Type.Number({ minimum: -180, maximum: 180 });

/** The editable fields; PUT replaces them all (a field left out is cleared, except `at`, which stays). */
const editable = {
  text: Type.String({ minLength: 1, maxLength: MAX_NOTE_TEXT }),
  satelliteId: Type.Optional(Nullable(Uuid)),
  at: Type.Optional(Type.String({ format: 'date-time', description: 'When the note was written; defaults to now' })),
  latitude: Type.Optional(Nullable(Latitude)),
  longitude: Type.Optional(Nullable(Longitude)),
};

export const NoteCreateBody = Type.Object({ tenantId: Uuid, ...editable }, { additionalProperties: false });
export type NoteCreateBody = Static<typeof NoteCreateBody>;
export const NoteUpdateBody = Type.Object(editable, { additionalProperties: false });
export type NoteUpdateBody = Static<typeof NoteUpdateBody>;

export const NoteListQuery = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    satelliteId: Type.Optional(Uuid),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive' })),
    ...Paging,
  },
  { additionalProperties: false },
);
export type NoteListQuery = Static<typeof NoteListQuery>;

export const NoteView = Open({
  id: Uuid,
  tenantId: Uuid,
  authorId: Nullable(Uuid),
  authorName: Type.String(),
  text: Type.String(),
  at: Type.String({ format: 'date-time' }),
  satelliteId: Nullable(Uuid),
  satelliteName: Nullable(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  photoUrl: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type NoteView = Static<typeof NoteView>;

export const NoteList = Type.Object({ notes: Type.Array(NoteView), total: Type.Integer() });
