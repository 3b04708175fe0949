/**
 * Sensitive species (issue 20, beyond the spec): the hub's list (setting `sensitive_species`,
 * seeded from assets/sensitive-species) and each team's additions (`sensitive_species_extra`).
 * Every view of such a species that leaves the team — public pages, share links, outside
 * exports, alert deliveries — gives no position finer than a 0.1° grid and no satellite name.
 */
import type { SettingsService } from '../settings/service.ts';

/** The coarsest position an outside view may give of a sensitive species, in degrees. */
export const GRID_DEGREES = 0.1;

/** A coordinate on the 0.1° grid (rounded to the nearest line), or null. */
export function toGrid(value: number | null): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  // Rounded on tenths (GRID_DEGREES); toFixed drops float noise such as 52.300000000000004.
  return Number((Math.round(value * 10) / 10).toFixed(1)) + 0;
}

export function createSensitiveSpecies(settings: Pick<SettingsService, 'hubSetting' | 'teamSetting'>) {
  /** The species (lower-case codes) one team treats as sensitive: the hub's list and its own. */
  async function codesOf(tenantId: string): Promise<ReadonlySet<string>> {
    const [hub, team] = await Promise.all([
      settings.hubSetting('sensitive_species'),
      settings.teamSetting(tenantId, 'sensitive_species_extra'),
    ]);
    return new Set([...hub, ...team].map((c) => c.toLowerCase()));
  }
  return {
    codesOf,
    async isSensitive(tenantId: string, code: string | null): Promise<boolean> {
      return code !== null && (await codesOf(tenantId)).has(code.toLowerCase());
    },
    /** Whether the team shows sensitive species on its public page at all (never with a position or satellite). */
    showsOnPublicPage: (tenantId: string) => settings.teamSetting(tenantId, 'public_page_show_sensitive'),
  };
}

export type SensitiveSpecies = ReturnType<typeof createSensitiveSpecies>;
