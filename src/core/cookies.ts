/**
 * The hub's credential cookies, set and cleared here only, so each carries the same
 * attributes wherever a module signs someone in (password sign-in, a passed second factor) or
 * out (logout, account deletion): the whole site, never readable by scripts, sent on top-level
 * navigation (SameSite=Lax), Secure when the request came over https.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The session cookie: a random token naming one session; only its SHA-256 is stored. */
export const SESSION_COOKIE = 'chorus_session';

/**
 * The mfa-remember cookie (read at sign-in, set once a second factor passed): a random 32-byte
 * token (only its SHA-256 is stored) naming one remembered device of one person. Logout leaves
 * it in place (spec §4).
 */
export const MFA_REMEMBER_COOKIE = 'chorus_mfa_remember';

const PATH = '/';

function setCredentialCookie(req: FastifyRequest, reply: FastifyReply, name: string, value: string, expires: Date): void {
  reply.setCookie(name, value, { path: PATH, httpOnly: true, sameSite: 'lax', secure: req.protocol === 'https', expires });
}

export function setSessionCookie(req: FastifyRequest, reply: FastifyReply, session: { cookieToken: string; expiresAt: Date }): void {
  setCredentialCookie(req, reply, SESSION_COOKIE, session.cookieToken, session.expiresAt);
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: PATH });
}

export function setRememberCookie(req: FastifyRequest, reply: FastifyReply, remember: { token: string; expiresAt: Date }): void {
  setCredentialCookie(req, reply, MFA_REMEMBER_COOKIE, remember.token, remember.expiresAt);
}
