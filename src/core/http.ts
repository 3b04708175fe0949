import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fastJsonStringify from 'fast-json-stringify';
import { Type } from 'typebox';
import type { Actor, Auth } from './actor.ts';
import { AppError, errorBody, PartUnavailable } from './errors.ts';
import type { Permission, RouteDef } from './permissions.ts';
import { checkDeclarations } from './declarations.ts';
import type { createGuard } from './guard.ts';
import { assertCookieRequestOrigin } from './origin.ts';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor;
  }
  interface FastifyContextConfig {
    permission?: Permission;
  }
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Bodies are validated strictly: no type coercion (a string is not a number) and unknown
 * fields refused rather than silently dropped. Query strings and path params arrive as text,
 * so those are coerced.
 *
 * What is compiled is kept for the process, not the app, keyed by the schema's JSON (what Ajv and
 * fast-json-stringify read; several routes build equal schemas): a second app in one process (each
 * test hub) reuses the first one's ~0.3 s of compiling instead of repeating it. No schema has an $id.
 */
const common: AjvOptions = { allErrors: true, strict: false, useDefaults: true, removeAdditional: false };
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
type Serializer = (data: unknown) => string;
const compiled = new Map<string, ReturnType<Ajv['compile']> | Serializer>();

function remembered<T extends ReturnType<Ajv['compile']> | Serializer>(kind: string, schema: unknown, compile: () => T): T {
  const key = `${kind} ${JSON.stringify(schema)}`;
  let fn = compiled.get(key) as T | undefined;
  if (!fn) {
    fn = compile();
    compiled.set(key, fn);
  }
  return fn;
}

export function installValidators(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    return remembered(ajv === bodyAjv ? 'body' : 'text', schema, () => ajv.compile(schema as object));
  });
  // What Fastify's default serializer compiler does (fast-json-stringify, no shared schemas).
  app.setSerializerCompiler(({ schema }) =>
    remembered('reply', schema, () => fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]) as Serializer),
  );
}

interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function describeIssues(issues: ValidationIssue[], part: string) {
  return issues.map((v) => {
    let path = (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
    if (v.params?.missingProperty) path = [path, v.params.missingProperty].filter(Boolean).join('.');
    if (v.params?.additionalProperty) path = [path, v.params.additionalProperty].filter(Boolean).join('.');
    const message = v.params?.additionalProperty ? 'is not a known field' : (v.message ?? 'is invalid');
    // keyword and limit let a client say the same in its person's language ("At least 1 character").
    const limit = v.params?.limit ?? v.params?.format;
    return {
      in: part,
      path: path || part,
      message,
      ...(v.keyword ? { keyword: v.keyword } : {}),
      ...(typeof limit === 'number' || typeof limit === 'string' ? { limit } : {}),
    };
  });
}

/** What a 503 for a part that is away asks the client to wait, in seconds. */
const RETRY_AFTER_UNAVAILABLE_S = 5;

const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'INVALID_JSON', message: 'The body is empty but declared as JSON' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The body is larger than this route accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'BAD_REQUEST', message: 'Content-Length does not match the body' },
};

/** The one place errors become responses: AppError as is, framework errors mapped, faults hidden. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validationContext?: string }, req, reply) => {
    // A refusal sent before the request's body was read to its end (an upload refused part-way)
    // leaves the rest of that body unread on the connection, which then never counts as idle: it
    // would hold a graceful shutdown until the keep-alive timeout. The answer closes it instead.
    if (!req.raw.complete || req.raw.readableLength > 0) reply.header('connection', 'close');
    if (err instanceof AppError) {
      if (err.status === 429 && (err.details as { retryAfterSeconds?: number })?.retryAfterSeconds) {
        reply.header('retry-after', String((err.details as { retryAfterSeconds: number }).retryAfterSeconds));
      }
      return reply.code(err.status).send(errorBody(err.code, err.message, err.details));
    }
    if (err instanceof PartUnavailable) {
      req.log.warn({ err }, 'request failed: a part is unavailable');
      reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_S));
      const code = `${err.part.replace('-', '_').toUpperCase()}_UNAVAILABLE`;
      return reply.code(503).send(errorBody(code, `The ${err.part} cannot be reached just now; try again in a few seconds`));
    }
    if (err.validation) {
      const part = err.validationContext ?? 'body';
      const details = describeIssues(err.validation as ValidationIssue[], part);
      const summary = details.map((d) => `${d.path} ${d.message}`).join('; ');
      return reply.code(400).send(errorBody('VALIDATION_FAILED', `Invalid ${part}: ${summary}`, details));
    }
    const known = err.code ? FRAMEWORK_ERRORS[err.code] : undefined;
    if (known) return reply.code(known.status).send(errorBody(known.code, known.message));
    if (err instanceof SyntaxError) return reply.code(400).send(errorBody('INVALID_JSON', 'The body is not valid JSON'));
    const pgCode = (err as { code?: string }).code;
    if (pgCode === '22P02' || pgCode === '22007' || pgCode === '22008') {
      return reply.code(400).send(errorBody('BAD_REQUEST', 'A value has the wrong format'));
    }
    if (pgCode === '23505') return reply.code(409).send(errorBody('CONFLICT', 'This conflicts with an existing record'));
    if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send(errorBody(err.code ?? 'BAD_REQUEST', err.message));
    }
    req.log.error({ err }, 'request failed');
    return reply.code(500).send(errorBody('INTERNAL_ERROR', 'Something went wrong on our side'));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`));
  });
}

/**
 * Closing the server closes the keep-alive connections that are idle at that moment and waits
 * for the others. A connection still answering then (a download being streamed) turns idle a
 * moment later and would hold the close until its keep-alive timeout (72 s); closing the idle
 * ones again every 100 ms until the server has closed lets a shutdown finish with its last answer.
 */
export function closeConnectionsAsTheyIdle(app: FastifyInstance): void {
  app.addHook('preClose', (done) => {
    // Unreferenced: the connections themselves keep the process up, not the sweep.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100).unref();
    app.server.once('close', () => clearInterval(sweep));
    done();
  });
}

export const API_PREFIX = '/api';

/** Who sends a request (spec §5), or null for an anonymous caller; the auth module knows the credentials. */
export interface AuthResolver {
  resolve(req: FastifyRequest): Promise<Auth | null>;
}

/** Registers module routes; each carries its permission so the guard and the registry agree. */
export function registerRoutes(
  app: FastifyInstance,
  routes: RouteDef[],
  guard: ReturnType<typeof createGuard>,
  resolver: AuthResolver,
  /** Browser origins besides the hub's own that may act with its session cookie. */
  allowedOrigins: readonly string[] = [],
): Permission[] {
  checkDeclarations(routes);
  const registry: Permission[] = [];
  for (const def of routes) {
    const { handler, schema, ...permission } = def;
    registry.push(permission);
    app.route({
      method: def.method,
      url: API_PREFIX + def.url,
      bodyLimit: def.bodyLimit,
      schema: { ...schema, summary: def.summary, tags: def.tags } as never,
      config: { permission },
      preValidation: async (req: FastifyRequest) => {
        // A body declared optional may be left out; the validator would refuse undefined as "must be object".
        if (req.body === undefined && schema.body && Type.IsOptional(schema.body)) req.body = {};
        const auth: Auth | null = await resolver.resolve(req);
        assertCookieRequestOrigin(req, auth, allowedOrigins);
        req.actor = await guard(req, permission, auth);
      },
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const result = await handler({
          body: req.body as never,
          query: req.query as never,
          params: req.params as never,
          actor: req.actor,
          req,
          reply,
        });
        if (reply.sent) return reply;
        if (result === undefined) return reply.code(reply.statusCode === 200 ? 204 : reply.statusCode).send();
        return result;
      },
    });
  }
  return registry;
}

/** Boot fails when a route exists that the permissions registry does not declare. */
export function enforceRegistry(app: FastifyInstance, prefixDeclarations: Permission[]): void {
  app.addHook('onRoute', (opts) => {
    const url = opts.url ?? opts.path;
    if (opts.config?.permission) return;
    const byPrefix = prefixDeclarations.find((p) => url.startsWith(API_PREFIX + p.url));
    if (byPrefix) {
      opts.config = { ...(opts.config ?? {}), permission: byPrefix } as never;
      return;
    }
    throw new Error(`Route ${String(opts.method)} ${url} is not declared in the permissions registry`);
  });
}
