import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';

const ACCOUNT = `user_id AS "userId", totp_secret AS "totpSecret", totp_last_step AS "totpLastStep", enrolled_at AS "enrolledAt",
  pending_secret AS "pendingSecret", pending_expires_at AS "pendingExpiresAt",
  registration_challenge AS "registrationChallenge", registration_expires_at AS "registrationExpiresAt"`;
export const MfaAccountRow = shape({
  userId: col.text(),
  totpSecret: col.nullable(col.text()),
  totpLastStep: col.nullable(col.int()),
  enrolledAt: col.nullable(col.date()),
  pendingSecret: col.nullable(col.text()),
  pendingExpiresAt: col.nullable(col.date()),
  registrationChallenge: col.nullable(col.text()),
  registrationExpiresAt: col.nullable(col.date()),
});
export type MfaAccountRow = RowOf<typeof MfaAccountRow>;

// sign_count is bigint (WebAuthn counters are unsigned 32-bit); float8 reads back as a number on both drivers.
const PASSKEY = `id, user_id AS "userId", credential_id AS "credentialId", public_key AS "publicKey", sign_count::float8 AS "signCount",
  transports, name, created_at AS "createdAt", last_used_at AS "lastUsedAt"`;
export const PasskeyRow = shape({
  id: col.text(),
  userId: col.text(),
  credentialId: col.text(),
  publicKey: col.text(),
  signCount: col.num(),
  transports: col.json<string[]>(),
  name: col.text(),
  createdAt: col.date(),
  lastUsedAt: col.nullable(col.date()),
});
export type PasskeyRow = RowOf<typeof PasskeyRow>;

const DEVICE = `id, user_id AS "userId", user_agent AS "userAgent", ip, created_at AS "createdAt", last_used_at AS "lastUsedAt", expires_at AS "expiresAt"`;
export const RememberedDeviceRow = shape({
  id: col.text(),
  userId: col.text(),
  userAgent: col.nullable(col.text()),
  ip: col.nullable(col.text()),
  createdAt: col.date(),
  lastUsedAt: col.nullable(col.date()),
  expiresAt: col.date(),
});
export type RememberedDeviceRow = RowOf<typeof RememberedDeviceRow>;

const CHALLENGE = `id, user_id AS "userId", want_token AS "wantToken", user_agent AS "userAgent", webauthn_challenge AS "webauthnChallenge",
  expires_at AS "expiresAt", used_at AS "usedAt"`;
export const ChallengeRow = shape({
  id: col.text(),
  userId: col.text(),
  wantToken: col.bool(),
  userAgent: col.nullable(col.text()),
  webauthnChallenge: col.nullable(col.text()),
  expiresAt: col.date(),
  usedAt: col.nullable(col.date()),
});
export type ChallengeRow = RowOf<typeof ChallengeRow>;

const Found = shape({ found: col.int() });
const DeviceId = shape({ id: col.text() });

/** MFA rows belong to one person; every lookup is scoped by the person (users are hub-wide, not tenant data). */
export function createMfaRepo(db: Db) {
  return {
    findAccount: (userId: string, tx: Db = db) =>
      tx.maybeOne(MfaAccountRow, `SELECT ${ACCOUNT} FROM mfa_accounts WHERE user_id = $1`, [userId]),

    async setPending(tx: Db, userId: string, sealed: string, expiresAt: Date, at: Date) {
      await tx.run(
        `INSERT INTO mfa_accounts (user_id, pending_secret, pending_expires_at, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id) DO UPDATE SET pending_secret = $2, pending_expires_at = $3, updated_at = $4`,
        [userId, sealed, expiresAt, at],
      );
    },

    clearPending: (tx: Db, userId: string, at: Date) =>
      tx.run(`UPDATE mfa_accounts SET pending_secret = NULL, pending_expires_at = NULL, updated_at = $2 WHERE user_id = $1`, [userId, at]),

    /** The pending secret becomes the TOTP secret; the confirming code's step counts as used. */
    confirmPending: (tx: Db, userId: string, step: number, at: Date) =>
      tx.run(
        `UPDATE mfa_accounts SET totp_secret = pending_secret, totp_last_step = $2, enrolled_at = $3,
           pending_secret = NULL, pending_expires_at = NULL, updated_at = $3
         WHERE user_id = $1 AND pending_secret IS NOT NULL`,
        [userId, step, at],
      ),

    /** Accepts a TOTP step once: false when that step or a later one was already used. */
    async useTotpStep(tx: Db, userId: string, step: number, at: Date): Promise<boolean> {
      const touched = await tx.run(
        `UPDATE mfa_accounts SET totp_last_step = $2, updated_at = $3
         WHERE user_id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2)`,
        [userId, step, at],
      );
      return touched === 1;
    },

    setRegistrationChallenge: (tx: Db, userId: string, challenge: string | null, expiresAt: Date | null, at: Date) =>
      tx.run(`UPDATE mfa_accounts SET registration_challenge = $2, registration_expires_at = $3, updated_at = $4 WHERE user_id = $1`, [
        userId,
        challenge,
        expiresAt,
        at,
      ]),

    /** The wipe of disable and admin reset: every factor, code, device and open challenge goes. */
    async wipe(tx: Db, userId: string) {
      await tx.run('DELETE FROM mfa_backup_codes WHERE user_id = $1', [userId]);
      await tx.run('DELETE FROM mfa_passkeys WHERE user_id = $1', [userId]);
      await tx.run('DELETE FROM mfa_remembered_devices WHERE user_id = $1', [userId]);
      await tx.run('DELETE FROM mfa_challenges WHERE user_id = $1', [userId]);
      await tx.run('DELETE FROM mfa_accounts WHERE user_id = $1', [userId]);
    },

    // Backup codes

    async replaceBackupCodes(tx: Db, userId: string, codes: Array<{ id: string; hash: string }>, at: Date) {
      await tx.run('DELETE FROM mfa_backup_codes WHERE user_id = $1', [userId]);
      const values: string[] = [];
      const params: unknown[] = [userId, at];
      for (const c of codes) {
        params.push(c.id, c.hash);
        values.push(`($${params.length - 1}, $1, $${params.length}, $2)`);
      }
      await tx.run(`INSERT INTO mfa_backup_codes (id, user_id, code_hash, created_at) VALUES ${values.join(', ')}`, params);
    },

    /** Marks one unused code used in one statement, so a code cannot be spent twice at once. */
    async useBackupCode(tx: Db, userId: string, hash: string, at: Date): Promise<boolean> {
      const touched = await tx.run('UPDATE mfa_backup_codes SET used_at = $3 WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL', [
        userId,
        hash,
        at,
      ]);
      return touched === 1;
    },

    countBackupCodes: async (userId: string, tx: Db = db) =>
      (await tx.one(Count, 'SELECT count(*)::int AS n FROM mfa_backup_codes WHERE user_id = $1 AND used_at IS NULL', [userId])).n,

    // Passkeys

    listPasskeys: (userId: string, tx: Db = db) =>
      tx.query(PasskeyRow, `SELECT ${PASSKEY} FROM mfa_passkeys WHERE user_id = $1 ORDER BY created_at, id`, [userId]),

    findPasskeyByCredential: (userId: string, credentialId: string, tx: Db = db) =>
      tx.maybeOne(PasskeyRow, `SELECT ${PASSKEY} FROM mfa_passkeys WHERE user_id = $1 AND credential_id = $2`, [userId, credentialId]),

    credentialTaken: async (credentialId: string, tx: Db = db) =>
      (await tx.maybeOne(Found, 'SELECT 1 AS found FROM mfa_passkeys WHERE credential_id = $1', [credentialId])) !== null,

    insertPasskey: (
      tx: Db,
      p: {
        id: string;
        userId: string;
        credentialId: string;
        publicKey: string;
        signCount: number;
        transports: string[];
        name: string;
        at: Date;
      },
    ) =>
      tx.run(
        `INSERT INTO mfa_passkeys (id, user_id, credential_id, public_key, sign_count, transports, name, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [p.id, p.userId, p.credentialId, p.publicKey, p.signCount, JSON.stringify(p.transports), p.name, p.at],
      ),

    /** Moves the counter forward only: a concurrent use with the same or a lower count loses. */
    async usePasskey(tx: Db, id: string, previous: number, next: number, at: Date): Promise<boolean> {
      const touched = await tx.run(`UPDATE mfa_passkeys SET sign_count = $3, last_used_at = $4 WHERE id = $1 AND sign_count = $2`, [
        id,
        previous,
        next,
        at,
      ]);
      return touched === 1;
    },

    async deletePasskey(tx: Db, userId: string, id: string): Promise<boolean> {
      return (await tx.run('DELETE FROM mfa_passkeys WHERE id = $1 AND user_id = $2', [id, userId])) === 1;
    },

    // Remembered devices

    listDevices: (userId: string, now: Date, tx: Db = db) =>
      tx.query(
        RememberedDeviceRow,
        `SELECT ${DEVICE} FROM mfa_remembered_devices WHERE user_id = $1 AND expires_at > $2 ORDER BY created_at, id`,
        [userId, now],
      ),

    insertDevice: (
      tx: Db,
      d: { id: string; userId: string; tokenHash: string; userAgent: string | null; ip: string; at: Date; expiresAt: Date },
    ) =>
      tx.run(
        `INSERT INTO mfa_remembered_devices (id, user_id, token_hash, user_agent, ip, created_at, last_used_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7)`,
        [d.id, d.userId, d.tokenHash, d.userAgent, d.ip, d.at, d.expiresAt],
      ),

    /** Marks the device used and answers its id, when the token is this person's and still valid. */
    async useDevice(userId: string, tokenHash: string, now: Date): Promise<string | null> {
      const row = await db.maybeOne(
        DeviceId,
        `UPDATE mfa_remembered_devices SET last_used_at = $3 WHERE user_id = $1 AND token_hash = $2 AND expires_at > $3 RETURNING id`,
        [userId, tokenHash, now],
      );
      return row?.id ?? null;
    },

    async deleteDevice(tx: Db, userId: string, id: string): Promise<boolean> {
      return (await tx.run('DELETE FROM mfa_remembered_devices WHERE id = $1 AND user_id = $2', [id, userId])) === 1;
    },

    // Login challenges

    async insertChallenge(
      tx: Db,
      c: { id: string; tokenHash: string; userId: string; wantToken: boolean; userAgent: string | null; at: Date; expiresAt: Date },
    ) {
      // Spent and expired challenges of this person are of no further use.
      await tx.run('DELETE FROM mfa_challenges WHERE user_id = $1 AND (used_at IS NOT NULL OR expires_at <= $2)', [c.userId, c.at]);
      await tx.run(
        `INSERT INTO mfa_challenges (id, token_hash, user_id, want_token, user_agent, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [c.id, c.tokenHash, c.userId, c.wantToken, c.userAgent, c.at, c.expiresAt],
      );
    },

    findChallenge: (tokenHash: string, tx: Db = db) =>
      tx.maybeOne(ChallengeRow, `SELECT ${CHALLENGE} FROM mfa_challenges WHERE token_hash = $1`, [tokenHash]),

    setWebauthnChallenge: (tx: Db, id: string, challenge: string | null) =>
      tx.run('UPDATE mfa_challenges SET webauthn_challenge = $2 WHERE id = $1', [id, challenge]),

    /** Single use: only the first completion marks it. */
    async useChallenge(tx: Db, id: string, at: Date): Promise<boolean> {
      return (await tx.run('UPDATE mfa_challenges SET used_at = $2 WHERE id = $1 AND used_at IS NULL', [id, at])) === 1;
    },
  };
}

export type MfaRepo = ReturnType<typeof createMfaRepo>;
