import { Type } from 'typebox';

/** Shared request/response pieces. Page size: default 50, at most 200. */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export const Uuid = Type.String({ format: 'uuid' });

/** One of the values, typed as their union (a mapped array of literals would widen to string). */
export const OneOf = <T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>(Type.Union(values.map((v) => Type.Literal(v))));

/** A value or null. */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/**
 * A response object that stays open: Fastify serialises responses by their schema, and an open
 * object still sends a field the schema does not name yet (the schema documents, it never drops).
 */
export const Open = <T extends Parameters<typeof Type.Object>[0]>(properties: T) => Type.Object(properties, { additionalProperties: true });
/** The answer of a route that replies 204: no body (OpenAPI shows no content). */
export const NoContent = Type.Null({ description: 'No content' });

/**
 * A body that is not JSON (audio, an image, HTML), documented by its media type. Fastify sends a
 * Buffer or a string as it is: this schema never serialises.
 */
export const NotJson = (mediaType: string, description: string) =>
  Type.Unsafe<string>({ description, content: { [mediaType]: { schema: { type: 'string', format: 'binary' } } } });

/** A JSON object whose members pass through as stored (settings, reports). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const IdParams = Type.Object({ id: Uuid });

export const Paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 })),
};

export const ErrorResponse = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String(), details: Type.Optional(Type.Unknown()) }),
});

export const AssignableRole = Type.Union([Type.Literal('viewer'), Type.Literal('member'), Type.Literal('admin')]);
export const AnyRole = Type.Union([Type.Literal('viewer'), Type.Literal('member'), Type.Literal('admin'), Type.Literal('owner')]);
