/**
 * What the settings writer needs of the satellites module: which satellites a change reaches and
 * the config history rows it writes with the change, in its transaction. A service of its own,
 * needing nothing but the database, so it is built before the settings service, and the
 * satellites service (which reads settings) after it: no loop between the two.
 */
import type { Db } from '../../infra/db/index.ts';
import type { SatelliteConfigHistory } from '../settings/service.ts';
import { createSatellitesRepo } from './repo.ts';

export function createSatelliteConfigHistory(deps: { db: Db }): SatelliteConfigHistory {
  const repo = createSatellitesRepo(deps.db);
  return {
    reach: (tx, scope) => repo.reach(tx, scope),
    insertHistory: (tx, rows) => repo.insertHistory(tx, rows),
  };
}
