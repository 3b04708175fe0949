import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { TeamActor } from '../../core/actor.ts';
import { notFound } from '../../core/errors.ts';
import { DEFAULT_LIMIT } from '../../core/schemas.ts';
import { createAlertsRepo } from './repo.ts';
import { presentAlert } from './engine.ts';

/** The alerts a team received: listed newest first, acknowledged for the whole team. */
export function createAlertsService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const repo = createAlertsRepo(db);
  return {
    async list(tenantId: string, q: { acknowledged?: boolean; event?: string; satelliteId?: string; limit?: number; offset?: number }) {
      const { rows, total, unacknowledged } = await repo.listAlerts(tenantId, {
        ...q,
        limit: q.limit ?? DEFAULT_LIMIT,
        offset: q.offset ?? 0,
      });
      return { alerts: rows.map(presentAlert), total, unacknowledged };
    },
    async acknowledge(actor: TeamActor, id: string) {
      await repo.acknowledge(actor.teamId, id, actor.userId, clock.now());
      const a = await repo.findAlert(actor.teamId, id);
      if (!a) throw notFound('No such alert');
      return presentAlert(a);
    },
    acknowledgeAll: (actor: TeamActor) => repo.acknowledgeAll(actor.teamId, actor.userId, clock.now()),
    teamOfAlert: repo.teamOfAlert,
    /** The satellite deletion preview's count: alerts that stay, unlinked. */
    countOfSatellite: repo.countOfSatellite,
  };
}

export type AlertsService = ReturnType<typeof createAlertsService>;
