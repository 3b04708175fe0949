import type { Db } from '../../infra/db/index.ts';
import { createSettingsRepo } from './repo.ts';

/**
 * Team values that name something being deleted (a model) fall back to the hub's, in the
 * deleting transaction. Built before the settings service, from the database alone, so the
 * models module (which settings asks whether a model reference is valid) can release its teams
 * without a circle; the settings table stays written by this module only.
 */
export function createSettingReleases(db: Db) {
  const repo = createSettingsRepo(db);
  return {
    /** Teams whose `key` names `value` follow the hub default again; answers how many. */
    releaseTeamValue: (tx: Db, key: string, value: string): Promise<number> => repo.releaseTeamValue(tx, key, value),
  };
}

export type SettingReleases = ReturnType<typeof createSettingReleases>;
