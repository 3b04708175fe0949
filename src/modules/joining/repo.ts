import { containsPattern, type Db } from '../../infra/db/index.ts';

export interface TeamCard {
  id: string;
  name: string;
  description: string;
  slug: string;
  since: Date;
  policy: string;
  memberCount: number;
  deviceCount: number;
  isMember: boolean;
  hasPending: boolean;
}

export interface JoinRequestRow {
  id: string;
  tenantId: string;
  userId: string;
  name: string;
  email: string;
  message: string;
  status: 'pending' | 'approved' | 'denied' | 'withdrawn';
  createdAt: Date;
}

export interface BlockRow {
  userId: string;
  name: string;
  email: string;
  blockedAt: Date;
  blockedBy: string | null;
}

// join_policy lives in the settings store (team level, default invite_only).
const POLICY = `COALESCE((SELECT value #>> '{}' FROM settings WHERE level = 'team' AND scope_id = t.id::text AND key = 'join_policy' AND value IS NOT NULL), 'invite_only')`;

const CARD = `t.id, t.name, t.description, t.slug, t.created_at AS since, ${POLICY} AS policy,
  (SELECT count(*)::int FROM memberships m WHERE m.tenant_id = t.id) AS "memberCount",
  (SELECT count(*)::int FROM satellites s WHERE s.tenant_id = t.id AND NOT s.archived) AS "deviceCount",
  EXISTS (SELECT 1 FROM memberships m WHERE m.tenant_id = t.id AND m.user_id = $1) AS "isMember",
  EXISTS (SELECT 1 FROM join_requests r WHERE r.tenant_id = t.id AND r.user_id = $1 AND r.status = 'pending') AS "hasPending"`;

const NOT_BLOCKED = `NOT EXISTS (SELECT 1 FROM team_blocks b WHERE b.tenant_id = t.id AND b.user_id = $1)`;

const REQUEST = `r.id, r.tenant_id AS "tenantId", r.user_id AS "userId", u.name, u.email, r.message, r.status, r.created_at AS "createdAt"`;

export function createJoiningRepo(db: Db) {
  return {
    /** Teams listed for newcomers (listed and open policies), not blocking the caller. */
    directory: (userId: string, search: string | null) =>
      db.query<TeamCard>(
        `SELECT * FROM (SELECT ${CARD} FROM tenants t WHERE ${NOT_BLOCKED}) c
         WHERE c.policy IN ('listed', 'open') AND ($2::text IS NULL OR c.name ILIKE $2 OR c.description ILIKE $2)
         ORDER BY c.name, c.id LIMIT 200`,
        [userId, search === null ? null : containsPattern(search)],
      ),

    /** One team's card unless the caller is blocked there. */
    card: (userId: string, tenantId: string) =>
      db.maybeOne<TeamCard>(`SELECT ${CARD} FROM tenants t WHERE t.id = $2 AND ${NOT_BLOCKED}`, [userId, tenantId]),

    insertRequest: (tx: Db, r: { id: string; tenantId: string; userId: string; message: string; at: Date }) =>
      tx.query(`INSERT INTO join_requests (id, tenant_id, user_id, message, status, created_at) VALUES ($1, $2, $3, $4, 'pending', $5)`, [
        r.id,
        r.tenantId,
        r.userId,
        r.message,
        r.at,
      ]),

    pendingOf: (tenantId: string, userId: string, tx: Db = db) =>
      tx.maybeOne<JoinRequestRow>(
        `SELECT ${REQUEST} FROM join_requests r JOIN users u ON u.id = r.user_id WHERE r.tenant_id = $1 AND r.user_id = $2 AND r.status = 'pending'`,
        [tenantId, userId],
      ),

    find: (tenantId: string, id: string, tx: Db = db) =>
      tx.maybeOne<JoinRequestRow>(
        `SELECT ${REQUEST} FROM join_requests r JOIN users u ON u.id = r.user_id WHERE r.tenant_id = $1 AND r.id = $2`,
        [tenantId, id],
      ),

    listPending: (tenantId: string) =>
      db.query<JoinRequestRow>(
        `SELECT ${REQUEST} FROM join_requests r JOIN users u ON u.id = r.user_id WHERE r.tenant_id = $1 AND r.status = 'pending' ORDER BY r.created_at, r.id`,
        [tenantId],
      ),

    decide: (tx: Db, id: string, status: 'approved' | 'denied' | 'withdrawn', at: Date, by: string | null, role: string | null = null) =>
      tx.query(`UPDATE join_requests SET status = $2, decided_at = $3, decided_by = $4, role = $5 WHERE id = $1 AND status = 'pending'`, [
        id,
        status,
        at,
        by,
        role,
      ]),

    block: (tx: Db, tenantId: string, userId: string, at: Date, by: string | null) =>
      tx.query(`INSERT INTO team_blocks (tenant_id, user_id, blocked_at, blocked_by) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [
        tenantId,
        userId,
        at,
        by,
      ]),

    unblock: async (tx: Db, tenantId: string, userId: string) =>
      (await tx.query(`DELETE FROM team_blocks WHERE tenant_id = $1 AND user_id = $2 RETURNING user_id`, [tenantId, userId])).length > 0,

    unblockEmail: (tx: Db, tenantId: string, email: string) =>
      tx.query(`DELETE FROM team_blocks WHERE tenant_id = $1 AND user_id IN (SELECT id FROM users WHERE lower(email) = lower($2))`, [
        tenantId,
        email,
      ]),

    blocks: (tenantId: string) =>
      db.query<BlockRow>(
        `SELECT b.user_id AS "userId", u.name, u.email, b.blocked_at AS "blockedAt", b.blocked_by AS "blockedBy"
         FROM team_blocks b JOIN users u ON u.id = b.user_id WHERE b.tenant_id = $1 ORDER BY b.blocked_at DESC`,
        [tenantId],
      ),

    /** Owner and admins: who hears about new requests. */
    adminEmails: (tenantId: string) =>
      db.query<{ email: string; name: string }>(
        `SELECT u.email, u.name FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 AND m.role IN ('owner', 'admin') AND u.status = 'active'`,
        [tenantId],
      ),
  };
}

export type JoiningRepo = ReturnType<typeof createJoiningRepo>;
