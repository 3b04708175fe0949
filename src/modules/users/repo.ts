import { col, containsPattern, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { ROLES } from '../../core/actor.ts';

const COLUMNS = `id, email, name, password_hash AS "passwordHash", is_admin AS "isAdmin", status,
  failed_login_attempts AS "failedLoginAttempts", locked_until AS "lockedUntil", last_login_at AS "lastLoginAt",
  last_login_ip AS "lastLoginIp", created_at AS "createdAt", updated_at AS "updatedAt"`;
export const UserRow = shape({
  id: col.text(),
  email: col.text(),
  name: col.text(),
  passwordHash: col.text(),
  isAdmin: col.bool(),
  status: col.oneOf(['active', 'blocked'] as const),
  failedLoginAttempts: col.int(),
  lockedUntil: col.nullable(col.date()),
  lastLoginAt: col.nullable(col.date()),
  lastLoginIp: col.nullable(col.text()),
  createdAt: col.date(),
  updatedAt: col.date(),
});
export type UserRow = RowOf<typeof UserRow>;

export const UserTeam = shape({ id: col.text(), name: col.text(), slug: col.text(), role: col.oneOf(ROLES), membershipId: col.text() });
export type UserTeam = RowOf<typeof UserTeam>;

const OwnedTeam = shape({ id: col.text(), name: col.text() });
const PasswordCheck = shape({ locking: col.bool() });

export interface UserListFilter {
  search?: string;
  status?: 'active' | 'blocked';
  tenantId?: string;
  limit: number;
  offset: number;
}

/** Users are hub-wide (not tenant data): the one repository whose lookups take no team. */
export function createUsersRepo(db: Db) {
  return {
    findById: (id: string, tx: Db = db) => tx.maybeOne(UserRow, `SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]),

    findByEmail: (email: string, tx: Db = db) =>
      tx.maybeOne(UserRow, `SELECT ${COLUMNS} FROM users WHERE lower(email) = lower($1)`, [email]),

    async insert(tx: Db, u: { id: string; email: string; name: string; passwordHash: string; isAdmin: boolean; at: Date }) {
      await tx.run(
        `INSERT INTO users (id, email, name, password_hash, is_admin, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
        [u.id, u.email, u.name, u.passwordHash, u.isAdmin, u.at],
      );
    },

    async update(
      tx: Db,
      id: string,
      patch: Partial<
        Pick<
          UserRow,
          'email' | 'name' | 'passwordHash' | 'isAdmin' | 'status' | 'failedLoginAttempts' | 'lockedUntil' | 'lastLoginAt' | 'lastLoginIp'
        >
      >,
      at: Date,
    ) {
      const columns: Record<string, string> = {
        email: 'email',
        name: 'name',
        passwordHash: 'password_hash',
        isAdmin: 'is_admin',
        status: 'status',
        failedLoginAttempts: 'failed_login_attempts',
        lockedUntil: 'locked_until',
        lastLoginAt: 'last_login_at',
        lastLoginIp: 'last_login_ip',
      };
      const sets: string[] = [];
      const params: unknown[] = [id];
      for (const [k, v] of Object.entries(patch)) {
        if (v === undefined) continue;
        params.push(v);
        sets.push(`${columns[k]} = $${params.length}`);
      }
      params.push(at);
      sets.push(`updated_at = $${params.length}`);
      await tx.run(`UPDATE users SET ${sets.join(', ')} WHERE id = $1`, params);
    },

    /**
     * Counts a failed sign-in in one statement, so simultaneous failures cannot overwrite each
     * other's count; the failure that reaches lockAfter locks the account and restarts the count.
     */
    async recordFailedLogin(tx: Db, id: string, lockAfter: number, lockUntil: Date, at: Date) {
      await tx.run(
        `UPDATE users SET
           locked_until = CASE WHEN failed_login_attempts + 1 >= $2 THEN $3 ELSE locked_until END,
           failed_login_attempts = CASE WHEN failed_login_attempts + 1 >= $2 THEN 0 ELSE failed_login_attempts + 1 END,
           updated_at = $4
         WHERE id = $1`,
        [id, lockAfter, lockUntil, at],
      );
    },

    /**
     * Takes one of the account's password checks before the (slow) check runs, counting it as a
     * failure until it passes: simultaneous sign-ins cannot all see the account unlocked, so
     * exactly lockAfter checks run before the lock (issue 33 item 8). The check that reaches
     * lockAfter locks the account at once and restarts the count. Null while the account is
     * locked; `locking` says this check set the lock.
     */
    claimPasswordCheck: (id: string, lockAfter: number, lockUntil: Date, at: Date) =>
      db.maybeOne(
        PasswordCheck,
        `UPDATE users SET
           locked_until = CASE WHEN failed_login_attempts + 1 >= $2 THEN $3 ELSE locked_until END,
           failed_login_attempts = CASE WHEN failed_login_attempts + 1 >= $2 THEN 0 ELSE failed_login_attempts + 1 END,
           updated_at = $4
         WHERE id = $1 AND (locked_until IS NULL OR locked_until <= $4)
         RETURNING (locked_until IS NOT NULL AND locked_until > $4) AS locking`,
        [id, lockAfter, lockUntil, at],
      ),

    /**
     * Gives back a claimed check whose password was right but whose sign-in does not end here
     * (a second factor is due, the account is blocked): the count is as if it never ran.
     */
    async releasePasswordCheck(tx: Db, id: string, claim: { locking: boolean }, lockAfter: number, at: Date) {
      if (claim.locking) {
        // The claim locked and restarted the count: unlock, and put back the failures before it.
        await tx.run(
          'UPDATE users SET locked_until = NULL, failed_login_attempts = failed_login_attempts + $2, updated_at = $3 WHERE id = $1',
          [id, lockAfter - 1, at],
        );
      } else {
        await tx.run('UPDATE users SET failed_login_attempts = greatest(failed_login_attempts - 1, 0), updated_at = $2 WHERE id = $1', [
          id,
          at,
        ]);
      }
    },

    delete: (tx: Db, id: string) => tx.run('DELETE FROM users WHERE id = $1', [id]),

    countHubAdmins: async (tx: Db = db) =>
      (await tx.one(Count, `SELECT count(*)::int AS n FROM users WHERE is_admin AND status = 'active'`)).n,

    teamsOf: (userId: string, tx: Db = db) =>
      tx.query(
        UserTeam,
        `SELECT t.id, t.name, t.slug, m.role, m.id AS "membershipId" FROM memberships m JOIN tenants t ON t.id = m.tenant_id
         WHERE m.user_id = $1 ORDER BY t.name`,
        [userId],
      ),

    /** Teams in which the person is the owner: they must hand over before leaving the hub. */
    ownedTeams: (userId: string, tx: Db = db) =>
      tx.query(
        OwnedTeam,
        `SELECT t.id, t.name FROM memberships m JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = $1 AND m.role = 'owner'`,
        [userId],
      ),

    async list(f: UserListFilter): Promise<{ rows: UserRow[]; total: number }> {
      const where: string[] = [];
      const params: unknown[] = [];
      if (f.search) {
        params.push(containsPattern(f.search));
        where.push(`(email ILIKE $${params.length} OR name ILIKE $${params.length})`);
      }
      if (f.status) {
        params.push(f.status);
        where.push(`status = $${params.length}`);
      }
      if (f.tenantId) {
        params.push(f.tenantId);
        where.push(`id IN (SELECT user_id FROM memberships WHERE tenant_id = $${params.length})`);
      }
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
      const total = (await db.one(Count, `SELECT count(*)::int AS n FROM users ${clause}`, params)).n;
      const rows = await db.query(
        UserRow,
        `SELECT ${COLUMNS} FROM users ${clause} ORDER BY created_at, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, f.limit, f.offset],
      );
      return { rows, total };
    },
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
