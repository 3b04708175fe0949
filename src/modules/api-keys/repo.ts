import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/**
 * The role the key's creator holds now in the key's team: a hub admin counts as owner, a blocked or
 * departed creator as none. A key never acts above it (issue 33). Device keys have no creator.
 */
const CREATOR_ROLE = `CASE WHEN k.created_by IS NULL THEN k.role WHEN u.status IS DISTINCT FROM 'active' THEN NULL
  WHEN u.is_admin THEN 'owner' ELSE m.role END AS "creatorRole"`;
const WITH_CREATOR = `api_keys k LEFT JOIN users u ON u.id = k.created_by
  LEFT JOIN memberships m ON m.tenant_id = k.tenant_id AND m.user_id = k.created_by`;
const COLUMNS = `k.id, k.tenant_id AS "tenantId", k.name, k.role, k.key_prefix AS "keyPrefix", k.created_by AS "createdBy",
  u.name AS "createdByName", k.created_at AS "createdAt", k.last_used_at AS "lastUsedAt", k.expires_at AS "expiresAt", ${CREATOR_ROLE}`;
const ROLE = col.oneOf(['viewer', 'member', 'admin', 'owner'] as const);
const API_KEY_COLUMNS = {
  id: col.text(),
  tenantId: col.text(),
  name: col.text(),
  // api_keys.role: a key is never an owner.
  role: col.oneOf(['viewer', 'member', 'admin'] as const),
  keyPrefix: col.text(),
  createdBy: col.nullable(col.text()),
  createdByName: col.nullable(col.text()),
  createdAt: col.date(),
  lastUsedAt: col.nullable(col.date()),
  expiresAt: col.nullable(col.date()),
  creatorRole: col.nullable(ROLE),
};
export const ApiKeyRow = shape(API_KEY_COLUMNS);
export type ApiKeyRow = RowOf<typeof ApiKeyRow>;
/** COLUMNS and the key's revocation. */
const RevocableKey = shape({ ...API_KEY_COLUMNS, revokedAt: col.nullable(col.date()) });

const TeamId = shape({ t: col.text() });

/** What a request presenting a key acts as (the auth resolver's ApiKeyPrincipal). */
const ActiveKey = shape({
  id: col.text(),
  tenantId: col.text(),
  satelliteId: col.nullable(col.text()),
  role: col.oneOf(['viewer', 'member', 'admin'] as const),
  lastUsedAt: col.nullable(col.date()),
  creatorRole: col.nullable(ROLE),
});
const ACTIVE_KEY_SQL = `SELECT k.id, k.tenant_id AS "tenantId", k.satellite_id AS "satelliteId", k.role, k.last_used_at AS "lastUsedAt",
    ${CREATOR_ROLE}
  FROM ${WITH_CREATOR}
  WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2)`;

/** Team keys, and the satellite keys the satellites module asks for through the service. */
export function createApiKeysRepo(db: Db) {
  return {
    /** A key unrevoked and unexpired, with its creator's current role (the service caps the key by it). */
    activeByHash: (keyHash: string, now: Date) => db.maybeOne(ActiveKey, ACTIVE_KEY_SQL, [keyHash, now]),

    touch: (id: string, now: Date) => db.run('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, now]),

    insert: (
      tx: Db,
      k: {
        id: string;
        tenantId: string;
        satelliteId: string | null;
        name: string;
        role: string;
        keyHash: string;
        keyPrefix: string;
        createdBy: string | null;
        at: Date;
        expiresAt: Date | null;
      },
    ) =>
      tx.run(
        `INSERT INTO api_keys (id, tenant_id, satellite_id, name, role, key_hash, key_prefix, created_by, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [k.id, k.tenantId, k.satelliteId, k.name, k.role, k.keyHash, k.keyPrefix, k.createdBy, k.at, k.expiresAt],
      ),

    listActive: (tenantId: string, now: Date) =>
      db.query(
        ApiKeyRow,
        `SELECT ${COLUMNS} FROM ${WITH_CREATOR}
         WHERE k.tenant_id = $1 AND k.satellite_id IS NULL AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2)
         ORDER BY k.created_at DESC`,
        [tenantId, now],
      ),

    find: (tenantId: string, id: string) =>
      db.maybeOne(
        RevocableKey,
        `SELECT ${COLUMNS}, k.revoked_at AS "revokedAt" FROM ${WITH_CREATOR}
         WHERE k.tenant_id = $1 AND k.id = $2 AND k.satellite_id IS NULL`,
        [tenantId, id],
      ),

    revoke: (tx: Db, tenantId: string, id: string, at: Date) =>
      tx.run('UPDATE api_keys SET revoked_at = $3 WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL', [tenantId, id, at]),

    /** A person leaving a team takes their team keys with them. */
    revokeCreatedBy: (tx: Db, tenantId: string | null, userId: string, at: Date) =>
      tx.run(
        `UPDATE api_keys SET revoked_at = $3 WHERE created_by = $2 AND satellite_id IS NULL AND revoked_at IS NULL AND ($1::uuid IS NULL OR tenant_id = $1::uuid)`,
        [tenantId, userId, at],
      ),

    /** A satellite's keys stop working (new credentials, disconnection). */
    revokeOfSatellite: (tx: Db, satelliteId: string, at: Date) =>
      tx.run('UPDATE api_keys SET revoked_at = $2 WHERE satellite_id = $1 AND revoked_at IS NULL', [satelliteId, at]),

    deleteOfSatellite: (tx: Db, satelliteId: string) => tx.run('DELETE FROM api_keys WHERE satellite_id = $1', [satelliteId]),

    teamOfKey: async (id: string) =>
      (await db.maybeOne(TeamId, 'SELECT tenant_id AS t FROM api_keys WHERE id = $1 AND satellite_id IS NULL', [id]))?.t ?? null,
  };
}

export type ApiKeysRepo = ReturnType<typeof createApiKeysRepo>;
