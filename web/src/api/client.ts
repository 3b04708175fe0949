/**
 * The typed client: paths and request shapes come from the hub's OpenAPI document
 * (schema.d.ts, `npm run gen:api`), so a renamed route or field fails the type-check.
 * Response bodies are not described in that document yet; their shapes live in types.ts.
 */
import createClient from 'openapi-fetch';
import type { paths } from './schema';
import { tActive } from '../i18n';

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

function toError(status: number, body: unknown): ApiError {
  const e = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
  if (e?.message) return new ApiError(status, e.code ?? 'ERROR', e.message, e.details);
  return new ApiError(status, 'HTTP_' + status, tActive('error.http', { status }));
}

/** Awaits an openapi-fetch call and returns its body as T, or throws the hub's error. */
export async function data<T>(p: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
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
