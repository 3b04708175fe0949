/**
 * The session store: issuing a cookie session and ending them. Built before the auth, mfa and
 * users services, which all write sessions (sign-in, a passed second factor, a password change,
 * blocking, erasure), so none of them has to wait for another to exist.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { addSeconds } from '../../core/clock.ts';
import { newId, randomHex, sha256Hex } from '../../core/crypto.ts';
import { createAuthRepo } from './repo.ts';

export interface SessionIssue {
  sessionId: string;
  /** Raw cookie value; only its hash is stored. */
  cookieToken: string;
  expiresAt: Date;
}

export function createSessionStore(deps: { db: Db; clock: Clock; sessionTtlSeconds: number }) {
  const { clock } = deps;
  const repo = createAuthRepo(deps.db);

  async function issueSession(tx: Db, userId: string, ip: string, userAgent: string | null): Promise<SessionIssue> {
    const cookieToken = randomHex(32);
    const now = clock.now();
    const session = { sessionId: newId(), cookieToken, expiresAt: addSeconds(now, deps.sessionTtlSeconds) };
    await repo.insertSession(tx, {
      id: session.sessionId,
      tokenHash: sha256Hex(cookieToken),
      userId,
      kind: 'cookie',
      ip,
      userAgent: userAgent?.slice(0, 300) ?? null,
      at: now,
      expiresAt: session.expiresAt,
    });
    return session;
  }

  return {
    issueSession,
    /** Every session of the person ends (password change, blocking), but the one named. */
    revokeUserSessions: repo.revokeUserSessions,
    /** Login attempts no longer name an erased person's email. */
    forgetEmail: repo.forgetEmail,
    /** Every open reset link of the person dies (an undone address change: the link may have gone to the other address). */
    useResetTokens: repo.useResetTokens,
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
