import type { Db } from '../../infra/db/index.ts';
import type { TeamActor } from '../../core/actor.ts';
import { createAuditRepo, eraseFromAuditLog, type AuditFilter, type AuditRow } from './repo.ts';

export interface AuditQuery {
  action?: string;
  tenantId?: string;
  actorUserId?: string;
  targetId?: string;
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
}

const presentEntry = (r: AuditRow) => ({ ...r, at: new Date(r.at).toISOString() });

/** Reading the audit log: the hub's whole log for hub admins, one team's entries for its admins. */
export function createAuditLogService(deps: { db: Db }) {
  const repo = createAuditRepo(deps.db);
  async function list(q: AuditQuery) {
    const filter: AuditFilter = {
      action: q.action,
      tenantId: q.tenantId,
      actorUserId: q.actorUserId,
      targetId: q.targetId,
      from: q.from ? new Date(q.from) : undefined,
      to: q.to ? new Date(q.to) : undefined,
      limit: q.limit ?? 50,
      offset: q.offset ?? 0,
    };
    const { rows, total } = await repo.list(filter);
    return { entries: rows.map(presentEntry), total, limit: filter.limit, offset: filter.offset };
  }

  return {
    listHub: list,

    /** An erased person's entries keep what happened, not their email or IPs (account deletion). */
    eraseUser: (tx: Db, userId: string, email: string) => eraseFromAuditLog(tx, userId, email),

    /**
     * A team's activity (spec §6: "a team's entries feed its activity page"): only entries
     * written in the team the guard resolved, whatever else the query names; without the client IPs
     * unless a hub admin reads it.
     */
    listTeam: async (actor: TeamActor, q: Omit<AuditQuery, 'tenantId'>) => {
      const page = await list({ ...q, tenantId: actor.teamId });
      // Client IPs are for the hub's operators (abuse, security), not for a team's admins.
      return actor.isPlatformAdmin ? page : { ...page, entries: page.entries.map((e) => ({ ...e, ip: null })) };
    },
  };
}

export type AuditLogService = ReturnType<typeof createAuditLogService>;
