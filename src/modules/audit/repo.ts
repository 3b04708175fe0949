import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';

export interface AuditFilter {
  action?: string;
  tenantId?: string;
  actorUserId?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
  limit: number;
  offset: number;
}

const COLUMNS = `id, at, action, actor_type AS "actorType", actor_user_id AS "actorUserId", actor_api_key_id AS "actorApiKeyId",
  actor_email AS "actorEmail", ip, tenant_id AS "tenantId", target_type AS "targetType", target_id AS "targetId", details`;
export const AuditRow = shape({
  // bigint identity: a number on both adapters.
  id: col.num(),
  at: col.date(),
  action: col.text(),
  actorType: col.text(),
  actorUserId: col.nullable(col.text()),
  actorApiKeyId: col.nullable(col.text()),
  actorEmail: col.nullable(col.text()),
  ip: col.nullable(col.text()),
  tenantId: col.nullable(col.text()),
  targetType: col.nullable(col.text()),
  targetId: col.nullable(col.text()),
  details: col.json<Record<string, unknown>>(),
});
export type AuditRow = RowOf<typeof AuditRow>;

/**
 * Erasure (self and admin deletion): the person's email and IP leave every entry that names
 * them, by account or by address. Refused sign-ins before the account was looked up (rate
 * limited, unknown address) carry only the typed email, so rows are also matched by email,
 * whatever its case. The entries stay; only who-and-where goes.
 */
export async function eraseFromAuditLog(tx: Db, userId: string, email: string): Promise<void> {
  await tx.run(
    `UPDATE audit_log SET actor_email = NULL, ip = NULL
     WHERE actor_user_id = $1 OR lower(actor_email) = lower($2)`,
    [userId, email],
  );
  await tx.run(
    `UPDATE audit_log SET details = details - 'email'
     WHERE details ? 'email' AND (target_id = $1::text OR lower(details->>'email') = lower($2))`,
    [userId, email],
  );
}

export function createAuditRepo(db: Db) {
  return {
    async list(f: AuditFilter): Promise<{ rows: AuditRow[]; total: number }> {
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (sql: string, value: unknown) => {
        params.push(value);
        where.push(sql.replace('?', `$${params.length}`));
      };
      if (f.action)
        add(f.action.endsWith('.*') ? 'action LIKE ?' : 'action = ?', f.action.endsWith('.*') ? f.action.slice(0, -1) + '%' : f.action);
      if (f.tenantId) add('tenant_id = ?', f.tenantId);
      if (f.actorUserId) add('actor_user_id = ?', f.actorUserId);
      if (f.targetId) add('target_id = ?', f.targetId);
      if (f.from) add('at >= ?', f.from);
      if (f.to) add('at < ?', f.to);
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
      const total = (await db.one(Count, `SELECT count(*)::int AS n FROM audit_log ${clause}`, params)).n;
      const rows = await db.query(
        AuditRow,
        `SELECT ${COLUMNS} FROM audit_log ${clause} ORDER BY at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, f.limit, f.offset],
      );
      return { rows, total };
    },
  };
}
