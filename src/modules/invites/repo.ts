import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

const COLUMNS = `i.id, i.tenant_id AS "tenantId", i.role, i.email, i.created_by AS "createdBy", u.name AS "createdByName",
  i.created_at AS "createdAt", i.expires_at AS "expiresAt", i.used_at AS "usedAt", i.revoked_at AS "revokedAt"`;
export const InviteRow = shape({
  id: col.text(),
  tenantId: col.text(),
  // invites.role: an invite never makes an owner.
  role: col.oneOf(['viewer', 'member', 'admin'] as const),
  email: col.nullable(col.text()),
  createdBy: col.nullable(col.text()),
  createdByName: col.nullable(col.text()),
  createdAt: col.date(),
  expiresAt: col.date(),
  usedAt: col.nullable(col.date()),
  revokedAt: col.nullable(col.date()),
});
export type InviteRow = RowOf<typeof InviteRow>;

const TeamId = shape({ t: col.text() });

export function createInvitesRepo(db: Db) {
  return {
    insert: (
      tx: Db,
      i: {
        id: string;
        tenantId: string;
        role: string;
        tokenHash: string;
        email: string | null;
        createdBy: string | null;
        at: Date;
        expiresAt: Date;
      },
    ) =>
      tx.run(
        `INSERT INTO invites (id, tenant_id, role, token_hash, email, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [i.id, i.tenantId, i.role, i.tokenHash, i.email, i.createdBy, i.at, i.expiresAt],
      ),

    listPending: (tenantId: string, now: Date) =>
      db.query(
        InviteRow,
        `SELECT ${COLUMNS} FROM invites i LEFT JOIN users u ON u.id = i.created_by
         WHERE i.tenant_id = $1 AND i.used_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2 ORDER BY i.created_at DESC`,
        [tenantId, now],
      ),

    find: (tenantId: string, id: string) =>
      db.maybeOne(
        InviteRow,
        `SELECT ${COLUMNS} FROM invites i LEFT JOIN users u ON u.id = i.created_by WHERE i.tenant_id = $1 AND i.id = $2`,
        [tenantId, id],
      ),

    findByTokenHash: (tokenHash: string, tx: Db = db) =>
      tx.maybeOne(InviteRow, `SELECT ${COLUMNS} FROM invites i LEFT JOIN users u ON u.id = i.created_by WHERE i.token_hash = $1`, [
        tokenHash,
      ]),

    revoke: (tx: Db, tenantId: string, id: string, at: Date) =>
      tx.run('UPDATE invites SET revoked_at = $3 WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL', [tenantId, id, at]),

    /** Single use: only the first caller to mark it gets true. */
    markUsed: async (tx: Db, id: string, userId: string, at: Date) =>
      (await tx.run('UPDATE invites SET used_at = $3, used_by = $2 WHERE id = $1 AND used_at IS NULL', [id, userId, at])) === 1,

    teamOfInvite: async (id: string) => (await db.maybeOne(TeamId, 'SELECT tenant_id AS t FROM invites WHERE id = $1', [id]))?.t ?? null,
  };
}

export type InvitesRepo = ReturnType<typeof createInvitesRepo>;
