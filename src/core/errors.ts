/**
 * One error shape everywhere: {"error": {"code", "message", "details"?}}.
 * Services throw AppError; the error handler turns it into that body.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/**
 * A part the hub depends on cannot be reached (the database now; the adapters say which): a
 * request answers 503 with `<PART>_UNAVAILABLE` and Retry-After, not 500 (issue 32).
 */
export class PartUnavailable extends Error {
  constructor(
    readonly part: 'database' | 'key-value',
    cause: unknown,
  ) {
    super(`the ${part} is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export const badRequest = (message: string, code = 'BAD_REQUEST', details?: unknown) => new AppError(400, code, message, details);
export const validationFailed = (message: string, details?: unknown) => new AppError(400, 'VALIDATION_FAILED', message, details);
export const unauthenticated = (message = 'Sign in to continue') => new AppError(401, 'UNAUTHENTICATED', message);
export const forbidden = (message = 'You are not allowed to do this', code = 'FORBIDDEN') => new AppError(403, code, message);
export const notFound = (message = 'Not found') => new AppError(404, 'NOT_FOUND', message);
export const conflict = (message: string, code = 'CONFLICT') => new AppError(409, code, message);
export const gone = (message: string, code = 'GONE') => new AppError(410, code, message);
export const payloadTooLarge = (message: string) => new AppError(413, 'PAYLOAD_TOO_LARGE', message);
export const unsupportedMediaType = (message: string) => new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', message);
export const locked = (message: string, code = 'ACCOUNT_LOCKED', details?: unknown) => new AppError(423, code, message, details);
export const tooManyRequests = (message: string, retryAfterSeconds?: number) =>
  new AppError(429, 'RATE_LIMITED', message, retryAfterSeconds ? { retryAfterSeconds } : undefined);

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

export function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}
