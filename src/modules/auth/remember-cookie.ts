import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The mfa-remember cookie (read at sign-in here, set by the mfa module once a second factor passed): a random 32-byte token (only its SHA-256 is stored) naming one
 * remembered device of one person. Logout leaves it in place (spec §4).
 */
export const MFA_REMEMBER_COOKIE = 'chorus_mfa_remember';

export function setRememberCookie(req: FastifyRequest, reply: FastifyReply, remember: { token: string; expiresAt: Date }): void {
  reply.setCookie(MFA_REMEMBER_COOKIE, remember.token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: req.protocol === 'https',
    expires: remember.expiresAt,
  });
}
