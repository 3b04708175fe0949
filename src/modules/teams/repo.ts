import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { ROLES, type Role } from '../../core/actor.ts';

const TEAM_COLUMNS = `id, name, slug, description, created_at AS "createdAt"`;
export const TeamRow = shape({ id: col.text(), name: col.text(), slug: col.text(), description: col.text(), createdAt: col.date() });
export type TeamRow = RowOf<typeof TeamRow>;

const MEMBER_COLUMNS = `m.id, m.tenant_id AS "tenantId", m.user_id AS "userId", m.role, u.name, u.email, u.is_admin AS "isAdmin", m.created_at AS "createdAt"`;
export const MemberRow = shape({
  id: col.text(),
  tenantId: col.text(),
  userId: col.text(),
  role: col.oneOf(ROLES),
  name: col.text(),
  email: col.text(),
  isAdmin: col.bool(),
  createdAt: col.date(),
});
export type MemberRow = RowOf<typeof MemberRow>;

const Found = shape({ found: col.int() });
const TeamId = shape({ t: col.text() });
const TeamName = shape({ name: col.text() });

export function createTeamsRepo(db: Db) {
  return {
    findTeam: (tenantId: string, tx: Db = db) => tx.maybeOne(TeamRow, `SELECT ${TEAM_COLUMNS} FROM tenants WHERE id = $1`, [tenantId]),

    slugTaken: async (slug: string, tx: Db = db) =>
      (await tx.maybeOne(Found, 'SELECT 1 AS found FROM tenants WHERE slug = $1', [slug])) !== null,

    insertTeam: (tx: Db, t: TeamRow) =>
      tx.run('INSERT INTO tenants (id, name, slug, description, created_at) VALUES ($1, $2, $3, $4, $5)', [
        t.id,
        t.name,
        t.slug,
        t.description,
        t.createdAt,
      ]),

    listTeams: (tenantIds: string[] | null) =>
      tenantIds === null
        ? db.query(TeamRow, `SELECT ${TEAM_COLUMNS} FROM tenants ORDER BY name, id`)
        : db.query(TeamRow, `SELECT ${TEAM_COLUMNS} FROM tenants WHERE id = ANY($1::uuid[]) ORDER BY name, id`, [tenantIds]),

    insertMembership: (tx: Db, m: { id: string; tenantId: string; userId: string; role: Role; at: Date }) =>
      tx.run('INSERT INTO memberships (id, tenant_id, user_id, role, created_at) VALUES ($1, $2, $3, $4, $5)', [
        m.id,
        m.tenantId,
        m.userId,
        m.role,
        m.at,
      ]),

    findMembership: (tenantId: string, membershipId: string, tx: Db = db) =>
      tx.maybeOne(
        MemberRow,
        `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = $1 AND m.id = $2`,
        [tenantId, membershipId],
      ),

    findMembershipOf: (tenantId: string, userId: string, tx: Db = db) =>
      tx.maybeOne(
        MemberRow,
        `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = $1 AND m.user_id = $2`,
        [tenantId, userId],
      ),

    findOwner: (tenantId: string, tx: Db = db) =>
      tx.maybeOne(
        MemberRow,
        `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = $1 AND m.role = 'owner'`,
        [tenantId],
      ),

    listMembers: (tenantId: string) =>
      db.query(
        MemberRow,
        `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = $1
         ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 WHEN 'member' THEN 2 ELSE 3 END, u.name, m.id`,
        [tenantId],
      ),

    setRole: (tx: Db, tenantId: string, membershipId: string, role: Role) =>
      tx.run('UPDATE memberships SET role = $3 WHERE tenant_id = $1 AND id = $2', [tenantId, membershipId, role]),

    deleteMembership: (tx: Db, tenantId: string, membershipId: string) =>
      tx.run('DELETE FROM memberships WHERE tenant_id = $1 AND id = $2', [tenantId, membershipId]),

    /** Team lookups for the guard: which team a membership belongs to. */
    teamOfMembership: async (membershipId: string) =>
      (await db.maybeOne(TeamId, 'SELECT tenant_id AS t FROM memberships WHERE id = $1', [membershipId]))?.t ?? null,

    nameOf: async (tenantId: string) => (await db.maybeOne(TeamName, 'SELECT name FROM tenants WHERE id = $1', [tenantId]))?.name ?? null,
    teamExists: async (tenantId: string) => (await db.maybeOne(Found, 'SELECT 1 AS found FROM tenants WHERE id = $1', [tenantId])) !== null,
  };
}

export type TeamsRepo = ReturnType<typeof createTeamsRepo>;
