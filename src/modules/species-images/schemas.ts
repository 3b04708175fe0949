import { Type, type Static } from 'typebox';
import { Nullable, OneOf, Open, Uuid } from '../../core/schemas.ts';

/** Species photos (issue 20; spec §4 "Species", §8 image limits). */

export const MAX_CODES = 200;
const Code = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$', description: 'Species code' });
const Status = OneOf(['ready', 'pending', 'failed', 'none'] as const);

const credit = {
  author: Type.String(),
  licence: Type.String({ description: 'CC0 1.0, CC BY n.n or CC BY-SA n.n' }),
  licenceUrl: Nullable(Type.String()),
  sourceUrl: Type.String({ description: "The photo's page at the provider" }),
  provider: Type.String(),
};

export const ImagesBody = Type.Object({ codes: Type.Array(Code, { minItems: 1, maxItems: MAX_CODES }) }, { additionalProperties: false });
export type ImagesBody = Static<typeof ImagesBody>;

export const ImageStatuses = Type.Object({
  images: Type.Array(
    Open({
      code: Type.String(),
      status: Status,
      key: Type.Optional(Uuid),
      url: Type.Optional(Type.String({ description: 'Display copy' })),
      squareUrl: Type.Optional(Type.String({ description: '128 px square' })),
      author: Type.Optional(credit.author),
      licence: Type.Optional(credit.licence),
      licenceUrl: Type.Optional(credit.licenceUrl),
      sourceUrl: Type.Optional(credit.sourceUrl),
      provider: Type.Optional(credit.provider),
    }),
  ),
});

export const CodeQuery = Type.Object({ code: Code }, { additionalProperties: false });

export const Gallery = Open({
  code: Type.String(),
  status: Status,
  photos: Type.Array(
    Open({
      key: Uuid,
      displayUrl: Type.String(),
      squareUrl: Type.String(),
      fullUrl: Type.String(),
      originalBytes: Type.Integer(),
      width: Type.Integer(),
      height: Type.Integer(),
      ...credit,
    }),
  ),
});

const serving = {
  original: Type.Optional(OneOf(['0', '1', 'true', 'false'] as const)),
  maxBytes: Type.Optional(
    Type.Integer({ minimum: 1, description: 'The display copy instead when the original is larger (the web client sends 8 MB)' }),
  ),
  square: Type.Optional(Type.Integer({ description: '64, 128, 256 or 512: a JPEG crop centred on the bird' })),
};
export const ProxyQuery = Type.Object({ code: Code, ...serving }, { additionalProperties: false });
export const ByKeyQuery = Type.Object({ key: Uuid, ...serving }, { additionalProperties: false });
export const ShowcaseQuery = Type.Object({ code: Code, square: serving.square }, { additionalProperties: false });

const Counts = Type.Object({ waiting: Type.Integer(), active: Type.Integer(), completed: Type.Integer(), failed: Type.Integer() });
export const CacheStats = Open({
  species: Open({ ready: Type.Integer(), pending: Type.Integer(), failed: Type.Integer(), none: Type.Integer() }),
  photos: Type.Integer(),
  awaitingAnalysis: Type.Integer(),
  originalBytes: Type.Number(),
  displayBytes: Type.Number(),
  crops: Open({ entries: Type.Integer(), bytes: Type.Integer(), hits: Type.Integer(), misses: Type.Integer() }),
  queue: Open({ downloads: Counts, analysis: Counts }),
  providers: Type.Array(Type.String()),
});
export const Cleared = Type.Object({ photos: Type.Integer() });
export const Retried = Type.Object({ queued: Type.Integer() });
export const Recrop = Type.Object({ photos: Type.Integer() });
