import { col, containsPattern, shape, type Db, type RowOf } from '../../infra/db/index.ts';

// join_policy lives in the settings store (team level, default invite_only).
const POLICY = `COALESCE((SELECT value #>> '{}' FROM settings WHERE level = 'team' AND scope_id = t.id::text AND key = 'join_policy' AND value IS NOT NULL), 'invite_only')`;

const CARD = `t.id, t.name, t.description, t.slug, t.created_at AS since, ${POLICY} AS policy,
  (SELECT count(*)::int FROM memberships m WHERE m.tenant_id = t.id) AS "memberCount",
  (SELECT count(*)::int FROM satellites s WHERE s.tenant_id = t.id AND NOT s.archived) AS "deviceCount",
  EXISTS (SELECT 1 FROM memberships m WHERE m.tenant_id = t.id AND m.user_id = $1) AS "isMember",
  EXISTS (SELECT 1 FROM join_requests r WHERE r.tenant_id = t.id AND r.user_id = $1 AND r.status = 'pending') AS "hasPending"`;
export const TeamCard = shape({
  id: col.text(),
  name: col.text(),
  description: col.text(),
  slug: col.text(),
  since: col.date(),
  policy: col.text(),
  memberCount: col.int(),
  deviceCount: col.int(),
  isMember: col.bool(),
  hasPending: col.bool(),
});
export type TeamCard = RowOf<typeof TeamCard>;
/** CARD's columns read back from the subquery that carries them. */
const CARD_OF_C = `c.id, c.name, c.description, c.slug, c.since, c.policy, c."memberCount", c."deviceCount", c."isMember", c."hasPending"`;

const NOT_BLOCKED = `NOT EXISTS (SELECT 1 FROM team_blocks b WHERE b.tenant_id = t.id AND b.user_id = $1)`;

const REQUEST = `r.id, r.tenant_id AS "tenantId", r.user_id AS "userId", u.name, u.email, r.message, r.status, r.created_at AS "createdAt"`;
export const JoinRequestRow = shape({
  id: col.text(),
  tenantId: col.text(),
  userId: col.text(),
  name: col.text(),
  email: col.text(),
  message: col.text(),
  status: col.oneOf(['pending', 'approved', 'denied', 'withdrawn'] as const),
  createdAt: col.date(),
});
export type JoinRequestRow = RowOf<typeof JoinRequestRow>;

const BLOCK = `b.user_id AS "userId", u.name, u.email, b.blocked_at AS "blockedAt", b.blocked_by AS "blockedBy"`;
export const BlockRow = shape({
  userId: col.text(),
  name: col.text(),
  email: col.text(),
  blockedAt: col.date(),
  blockedBy: col.nullable(col.text()),
});
export type BlockRow = RowOf<typeof BlockRow>;

const AdminContact = shape({ email: col.text(), name: col.text() });

export function createJoiningRepo(db: Db) {
  return {
    /** Teams listed for newcomers (listed and open policies), not blocking the caller. */
    directory: (userId: string, search: string | null) =>
      db.query(
        TeamCard,
        `SELECT ${CARD_OF_C} FROM (SELECT ${CARD} FROM tenants t WHERE ${NOT_BLOCKED}) c
         WHERE c.policy IN ('listed', 'open') AND ($2::text IS NULL OR c.name ILIKE $2 OR c.description ILIKE $2)
         ORDER BY c.name, c.id LIMIT 200`,
        [userId, search === null ? null : containsPattern(search)],
      ),

    /** One team's card unless the caller is blocked there. */
    card: (userId: string, tenantId: string) =>
      db.maybeOne(TeamCard, `SELECT ${CARD} FROM tenants t WHERE t.id = $2 AND ${NOT_BLOCKED}`, [userId, tenantId]),

    insertRequest: (tx: Db, r: { id: string; tenantId: string; userId: string; message: string; at: Date }) =>
      tx.run(`INSERT INTO join_requests (id, tenant_id, user_id, message, status, created_at) VALUES ($1, $2, $3, $4, 'pending', $5)`, [
        r.id,
        r.tenantId,
        r.userId,
        r.message,
        r.at,
      ]),

    pendingOf: (tenantId: string, userId: string, tx: Db = db) =>
      tx.maybeOne(
        JoinRequestRow,
        `SELECT ${REQUEST} FROM join_requests r JOIN users u ON u.id = r.user_id WHERE r.tenant_id = $1 AND r.user_id = $2 AND r.status = 'pending'`,
        [tenantId, userId],
      ),

    find: (tenantId: string, id: string, tx: Db = db) =>
      tx.maybeOne(
        JoinRequestRow,
        `SELECT ${REQUEST} FROM join_requests r JOIN users u ON u.id = r.user_id WHERE r.tenant_id = $1 AND r.id = $2`,
        [tenantId, id],
      ),

    listPending: (tenantId: string) =>
      db.query(
        JoinRequestRow,
        `SELECT ${REQUEST} FROM join_requests r JOIN users u ON u.id = r.user_id WHERE r.tenant_id = $1 AND r.status = 'pending' ORDER BY r.created_at, r.id`,
        [tenantId],
      ),

    decide: (tx: Db, id: string, status: 'approved' | 'denied' | 'withdrawn', at: Date, by: string | null, role: string | null = null) =>
      tx.run(`UPDATE join_requests SET status = $2, decided_at = $3, decided_by = $4, role = $5 WHERE id = $1 AND status = 'pending'`, [
        id,
        status,
        at,
        by,
        role,
      ]),

    block: (tx: Db, tenantId: string, userId: string, at: Date, by: string | null) =>
      tx.run(`INSERT INTO team_blocks (tenant_id, user_id, blocked_at, blocked_by) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [
        tenantId,
        userId,
        at,
        by,
      ]),

    unblock: async (tx: Db, tenantId: string, userId: string) =>
      (await tx.run(`DELETE FROM team_blocks WHERE tenant_id = $1 AND user_id = $2`, [tenantId, userId])) > 0,

    unblockEmail: (tx: Db, tenantId: string, email: string) =>
      tx.run(`DELETE FROM team_blocks WHERE tenant_id = $1 AND user_id IN (SELECT id FROM users WHERE lower(email) = lower($2))`, [
        tenantId,
        email,
      ]),

    blocks: (tenantId: string) =>
      db.query(
        BlockRow,
        `SELECT ${BLOCK} FROM team_blocks b JOIN users u ON u.id = b.user_id WHERE b.tenant_id = $1 ORDER BY b.blocked_at DESC`,
        [tenantId],
      ),

    /** Owner and admins: who hears about new requests. */
    adminEmails: (tenantId: string) =>
      db.query(
        AdminContact,
        `SELECT u.email, u.name FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 AND m.role IN ('owner', 'admin') AND u.status = 'active'`,
        [tenantId],
      ),
  };
}

export type JoiningRepo = ReturnType<typeof createJoiningRepo>;
