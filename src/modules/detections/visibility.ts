/**
 * Category visibility (spec §2 Team "category visibility", 0.78): the team setting
 * `visible_categories` names the detection categories a team shows. Shares refuse the others
 * (409 NOT_SHAREABLE); public pages, stats and exports leave them out.
 */
import type { SettingsService } from '../settings/service.ts';

export const VISIBLE_CATEGORIES_KEY = 'visible_categories';

export function createCategoryVisibility(settings: Pick<SettingsService, 'teamSetting'>) {
  return {
    /** The categories the team shows (its own value, else the hub's, else the default). */
    visible: (tenantId: string) => settings.teamSetting<string[]>(tenantId, VISIBLE_CATEGORIES_KEY),
    async shows(tenantId: string, category: string): Promise<boolean> {
      return (await settings.teamSetting<string[]>(tenantId, VISIBLE_CATEGORIES_KEY)).includes(category);
    },
  };
}

export type CategoryVisibility = ReturnType<typeof createCategoryVisibility>;
