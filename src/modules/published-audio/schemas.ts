import { Type } from 'typebox';
import { Nullable, Open, Paging, Uuid } from '../../core/schemas.ts';

/** One published recording as the team's list shows it. */
export const PublishedRecording = Open({
  id: Type.String(),
  chunkId: Type.String(),
  /** The public link, as the files carry it: opens the WAV without a sign-in. */
  url: Type.String(),
  recordedAt: Type.String({ format: 'date-time' }),
  satelliteName: Type.String(),
  /** Common names of what was heard in the chunk. */
  species: Type.Array(Type.String()),
  publishedAt: Type.String({ format: 'date-time' }),
  /** Who exported it first; null once that person is gone. */
  publishedBy: Nullable(Type.String()),
});

export const PublishedList = Open({ recordings: Type.Array(PublishedRecording), total: Type.Integer() });

export const PublishedListQuery = Type.Object({ tenantId: Type.Optional(Uuid), ...Paging }, { additionalProperties: false });

export const RevokeAllBody = Type.Object({ tenantId: Uuid }, { additionalProperties: false });

/** Any text: a malformed token answers the same 404 as a revoked one, never a validation error. */
export const PublicAudioParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
