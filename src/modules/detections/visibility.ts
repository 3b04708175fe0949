/**
 * Category visibility (spec §2 Team "category visibility", 0.78): the team setting
 * `visible_categories` names the detection categories a team shows. Lists, counts, summaries and
 * sessions leave the others out; shares refuse them (409 NOT_SHAREABLE).
 */
import type { SettingsService } from '../settings/service.ts';
import type { VisibleCategories } from './category-sql.ts';

export const VISIBLE_CATEGORIES_KEY = 'visible_categories';

export function createCategoryVisibility(settings: Pick<SettingsService, 'teamSetting' | 'hubSetting' | 'teamsWithOwnValue'>) {
  /** The categories one team shows (its own value, else the hub's, else the default; a hub lock wins). */
  const visible = (tenantId: string) => settings.teamSetting(tenantId, VISIBLE_CATEGORIES_KEY);
  const each = async (ids: readonly string[]) => new Map(await Promise.all(ids.map(async (t) => [t, await visible(t)] as const)));
  return {
    visible,
    async shows(tenantId: string, category: string): Promise<boolean> {
      const shown: readonly string[] = await visible(tenantId);
      return shown.includes(category);
    },
    /**
     * What the teams of a list show: one read per team named; over every team (null), the teams
     * with a value of their own each, and the hub's value for all others.
     */
    async of(tenantIds: readonly string[] | null): Promise<VisibleCategories> {
      if (tenantIds) return { teams: await each(tenantIds), others: [] };
      const [own, others] = await Promise.all([
        settings.teamsWithOwnValue(VISIBLE_CATEGORIES_KEY),
        settings.hubSetting(VISIBLE_CATEGORIES_KEY),
      ]);
      return { teams: await each(own), others };
    },
  };
}

export type CategoryVisibility = ReturnType<typeof createCategoryVisibility>;
