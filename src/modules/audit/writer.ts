import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditAction } from '../../core/audit-actions.ts';

export interface AuditEntry {
  action: AuditAction;
  /** Team the entry belongs to; defaults to the team the action concerns. */
  tenantId?: string | null;
  targetType?: string;
  targetId?: string | null;
  details?: Record<string, unknown>;
}

/**
 * Who an entry names: any Actor, or an actor standing in for the person a sign-in, sign-up or
 * reset concerns (the caller is anonymous until it succeeds).
 */
export type AuditActor = Pick<Actor, 'kind' | 'ip' | 'teamId' | 'declaredAudit'> & {
  userId: string | null;
  apiKeyId: string | null;
  email: string | null;
};

export interface AuditWriter {
  /** Writes inside the caller's transaction, so the entry and the change commit together. */
  write(db: Db, actor: AuditActor, entry: AuditEntry): Promise<void>;
}

export class UndeclaredAuditError extends Error {}

/**
 * strict: refuse actions the route did not declare (tests run strict, so a route that
 * writes an undeclared entry fails its test instead of silently drifting from its declaration).
 */
export function createAuditWriter(clock: Clock, opts: { strict: boolean; warn: (msg: string) => void }): AuditWriter {
  return {
    async write(db, actor, entry) {
      if (actor.declaredAudit && !actor.declaredAudit.has(entry.action)) {
        const msg = `audit action ${entry.action} is not declared by this route`;
        if (opts.strict) throw new UndeclaredAuditError(msg);
        opts.warn(msg);
      }
      await db.run(
        `INSERT INTO audit_log (at, action, actor_type, actor_user_id, actor_api_key_id, actor_email, ip, tenant_id, target_type, target_id, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          clock.now(),
          entry.action,
          actor.kind,
          actor.userId,
          actor.apiKeyId,
          actor.email,
          actor.ip || null,
          entry.tenantId === undefined ? actor.teamId : entry.tenantId,
          entry.targetType ?? null,
          entry.targetId ?? null,
          JSON.stringify(entry.details ?? {}),
        ],
      );
    },
  };
}
