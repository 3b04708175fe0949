import type { FastifyRequest } from 'fastify';
import type { Auth } from './actor.ts';
import { forbidden } from './errors.ts';

/**
 * Which browser origins may act on the hub with its session cookie: the public URL's origin,
 * CHORUS_ALLOWED_ORIGINS, and the hub's own origin as this request reached it (a dashboard opened
 * by LAN address). One rule for the live socket's handshake and for state-changing requests.
 */
export function isAllowedOrigin(req: FastifyRequest, origin: string, allowedOrigins: readonly string[]): boolean {
  return allowedOrigins.includes(origin) || origin === `${req.protocol}://${req.host}`;
}

/** A browser names the page's origin on the WebSocket handshake; devices and scripts send none and pass. */
export function handshakeOriginAllowed(req: FastifyRequest, allowedOrigins: readonly string[]): boolean {
  const origin = req.headers.origin;
  return origin === undefined || isAllowedOrigin(req, origin, allowedOrigins);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The origin a request says it comes from: its Origin header, else its Referer's origin. */
function claimedOrigin(req: FastifyRequest): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined) return origin;
  const referer = req.headers.referer;
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}

/**
 * Cross-site request forgery: a state-changing request carried by the session cookie must come from
 * one of the hub's own origins. SameSite=Lax alone lets any same-site page (another subdomain) and
 * any form post with a body the route does not read through. Browsers name an origin on every
 * state-changing request; a caller with neither Origin nor Referer is a program holding the cookie
 * itself, not a page it was lured to, and passes. Bearer and API-key callers send no ambient
 * credential and are not concerned.
 */
export function assertCookieRequestOrigin(req: FastifyRequest, auth: Auth | null, allowedOrigins: readonly string[]): void {
  if (auth?.kind !== 'session' || SAFE_METHODS.has(req.method)) return;
  // Set by the browser itself, never by a page: a dashboard document served with no-referrer (the
  // share pages) names its origin as "null", and this still tells its own requests apart.
  if (req.headers['sec-fetch-site'] === 'same-origin') return;
  const origin = claimedOrigin(req);
  if (origin === undefined || isAllowedOrigin(req, origin, allowedOrigins)) return;
  throw forbidden(`Requests signed in by cookie may not come from ${origin}`, 'CROSS_ORIGIN_REQUEST');
}
