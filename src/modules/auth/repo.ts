import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { limitKey } from '../../core/client-address.ts';

export const ResetTokenRow = shape({ id: col.text(), userId: col.text(), expiresAt: col.date(), usedAt: col.nullable(col.date()) });
export type ResetTokenRow = RowOf<typeof ResetTokenRow>;

const AttemptId = shape({ id: col.text() });

export function createAuthRepo(db: Db) {
  return {
    insertSession: (
      tx: Db,
      s: {
        id: string;
        tokenHash: string | null;
        userId: string;
        kind: 'cookie' | 'token';
        ip: string;
        userAgent: string | null;
        at: Date;
        expiresAt: Date;
      },
    ) =>
      tx.run(
        `INSERT INTO sessions (id, token_hash, user_id, kind, ip, user_agent, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [s.id, s.tokenHash, s.userId, s.kind, s.ip, s.userAgent, s.at, s.expiresAt],
      ),

    revokeSession: (tx: Db, id: string, at: Date) =>
      tx.run('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, at]),

    /** Ends every session of a person, optionally sparing the one making the request. */
    revokeUserSessions: (tx: Db, userId: string, at: Date, exceptSessionId: string | null = null) =>
      tx.run('UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL AND ($3::uuid IS NULL OR id <> $3::uuid)', [
        userId,
        at,
        exceptSessionId,
      ]),

    countAttempts: async (kind: 'login' | 'forgot_password', ip: string, since: Date) =>
      (
        await db.one(Count, 'SELECT count(*)::int AS n FROM login_attempts WHERE kind = $1 AND ip = $2 AND created_at > $3', [
          kind,
          ip,
          since,
        ])
      ).n,

    /**
     * Takes a place in the per-IP window before the slow checks run, so a burst of attempts
     * cannot all pass the count at once; a place over the limit is given back (null). The kept
     * row is the attempt's ledger entry, a failure until settleAttempt says otherwise. The row
     * keeps the address as abuse limits count it (an IPv6 client's /64: limitKey).
     */
    async reserveAttempt(
      kind: 'login' | 'forgot_password',
      address: string,
      email: string,
      at: Date,
      since: Date,
      limit: number,
    ): Promise<string | null> {
      const ip = limitKey(address);
      const { id } = await db.one(
        AttemptId,
        'INSERT INTO login_attempts (kind, ip, email, success, created_at) VALUES ($1, $2, $3, false, $4) RETURNING id::text AS id',
        [kind, ip, email, at],
      );
      const { n } = await db.one(Count, 'SELECT count(*)::int AS n FROM login_attempts WHERE kind = $1 AND ip = $2 AND created_at > $3', [
        kind,
        ip,
        since,
      ]);
      if (n <= limit) return id;
      await db.run('DELETE FROM login_attempts WHERE id = $1::bigint', [id]);
      return null;
    },

    settleAttempt: (tx: Db, id: string, success: boolean) =>
      tx.run('UPDATE login_attempts SET success = $2 WHERE id = $1::bigint', [id, success]),

    recordAttempt: (tx: Db, a: { kind: 'login' | 'forgot_password'; ip: string; email: string | null; success: boolean; at: Date }) =>
      tx.run('INSERT INTO login_attempts (kind, ip, email, success, created_at) VALUES ($1, $2, $3, $4, $5)', [
        a.kind,
        a.ip,
        a.email,
        a.success,
        a.at,
      ]),

    insertResetToken: (tx: Db, t: { id: string; userId: string; tokenHash: string; at: Date; expiresAt: Date }) =>
      tx.run('INSERT INTO password_reset_tokens (id, user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        t.id,
        t.userId,
        t.tokenHash,
        t.at,
        t.expiresAt,
      ]),

    findResetToken: (tokenHash: string) =>
      db.maybeOne(
        ResetTokenRow,
        'SELECT id, user_id AS "userId", expires_at AS "expiresAt", used_at AS "usedAt" FROM password_reset_tokens WHERE token_hash = $1',
        [tokenHash],
      ),

    /** Marks the token used, and every other open token of that person too: one reset ends them all. */
    useResetTokens: (tx: Db, userId: string, at: Date) =>
      tx.run('UPDATE password_reset_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [userId, at]),

    /** Erasure: the ledger keeps counts per IP, not who tried. */
    forgetEmail: (tx: Db, email: string) => tx.run('UPDATE login_attempts SET email = NULL WHERE lower(email) = lower($1)', [email]),
  };
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
