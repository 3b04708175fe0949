/**
 * The typed client: paths, request and response shapes come from the hub's OpenAPI document
 * (schema.d.ts, `npm run gen:api`), so a renamed route or field fails the type-check.
 */
import createClient from 'openapi-fetch';
import type { paths } from './schema';
import { activeLang, tActive } from '../i18n';
import { ERROR_MESSAGES, FIELD_MESSAGES } from '../locales/errors';
import { formatMessage } from '../message-format';

/** The JSON body of a route's success answer (200, 201 or 202), as the hub's response schema declares it. */
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? JsonOf<R[keyof R & (200 | 201 | 202)]>
  : never;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body a route accepts. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** The query string a route accepts. */
export type Query<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

/** The hub's one error shape, kept whole so a form can show the message next to its field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

interface FieldIssue {
  path?: string;
  message?: string;
  keyword?: string;
  limit?: string | number;
}

/** A refused field's message in the person's language, from the validator's keyword; the hub's words otherwise. */
function fieldMessage(d: FieldIssue): FieldIssue {
  const tpl = d.keyword ? FIELD_MESSAGES[activeLang()][d.keyword] : undefined;
  return tpl ? { ...d, message: formatMessage(tpl, { limit: d.limit ?? '' }, activeLang()) } : d;
}

/**
 * The message people read for an error code (locales/errors.ts), with the hub's own sentence
 * where the template has {detail}; field refusals are translated one by one.
 */
export function peopleError(status: number, code: string, hubMessage: string, details?: unknown): ApiError {
  const lang = activeLang();
  const tpl = ERROR_MESSAGES[lang][code] ?? ERROR_MESSAGES.en[code];
  if (code === 'VALIDATION_FAILED' && Array.isArray(details)) {
    const fields = (details as FieldIssue[]).map(fieldMessage);
    const list = fields.map((d) => `${(d.path ?? '').split('.').pop()}: ${d.message}`).join('; ');
    return new ApiError(status, code, `${tpl} ${list}`.trim(), fields);
  }
  if (!tpl) return new ApiError(status, code, hubMessage, details);
  const message = tpl.includes('{detail}')
    ? tpl.replace('{detail}', hubMessage)
    : code === 'VALIDATION_FAILED'
      ? `${tpl} ${hubMessage}`
      : tpl;
  return new ApiError(status, code, message, details);
}

function toError(status: number, body: unknown): ApiError {
  const e = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
  if (e?.message) return peopleError(status, e.code ?? 'ERROR', e.message, e.details);
  return new ApiError(status, 'HTTP_' + status, tActive('error.http', { status }));
}

/** Awaits an openapi-fetch call and returns its body (typed by the route's response schema), or throws the hub's error. */
export async function data<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: unknown; error?: unknown; response: Response };
  try {
    r = await p;
  } catch {
    throw new ApiError(0, 'NETWORK', tActive('error.network'));
  }
  if (!r.response.ok) throw toError(r.response.status, r.error);
  return r.data as T;
}

export function messageOf(err: unknown): string | null {
  if (!err) return null;
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/** POSTs a multipart form (a file upload) and returns the body as T, or throws the hub's error. */
export async function upload<T>(path: string, form: FormData): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { method: 'POST', body: form, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'NETWORK', tActive('error.network'));
  }
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) throw toError(response.status, body);
  return body as T;
}
