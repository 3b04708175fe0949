/**
 * The day at a glance on a team's public page (issue 36 point 1): the dashboard's species × hour
 * grid (stats/day.ts) under the public page's rules — the same 404 unless the page is on, the
 * figures the page counts (no rejected calls), sensitive species left out unless the team shows
 * them (public_page_show_sensitive), and then as a day total only: their public time is the day
 * (sensitive/service.ts, TIME_PRECISION.public), so no hour, no latest time, no place in the
 * time-ordered list. Kept 10 minutes per (slug, day, language) and settings generation, like the
 * page itself.
 */
import type { Clock } from '../../core/clock.ts';
import type { Kv } from '../../infra/kv/index.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { SensitiveSpecies } from '../sensitive/service.ts';
import type { SettingsService } from '../settings/service.ts';
import type { SpeciesCatalog } from '../species/catalog.ts';
import type { DayGridService } from '../stats/day.ts';
import type { DayGrid } from '../stats/day-schemas.ts';
import { PUBLIC_PAGE_CACHE_MS, type PublicPagesService } from './service.ts';

export function createPublicDayService(deps: {
  kv: Kv;
  clock: Clock;
  pages: Pick<PublicPagesService, 'publishedTeam' | 'languageOf'>;
  settings: Pick<SettingsService, 'teamSetting' | 'generation'>;
  visibility: Pick<CategoryVisibility, 'of'>;
  sensitive: Pick<SensitiveSpecies, 'codesOf' | 'showsOnPublicPage'>;
  catalog: () => Pick<SpeciesCatalog, 'commonName'>;
  dayGrid: Pick<DayGridService, 'build'>;
}) {
  async function build(team: { id: string }, date: string | undefined, lang: string): Promise<DayGrid> {
    const [categories, sensitive, showSensitive, timeZone] = await Promise.all([
      deps.visibility.of([team.id]),
      deps.sensitive.codesOf(team.id),
      deps.sensitive.showsOnPublicPage(team.id),
      deps.settings.teamSetting(team.id, 'time_zone'),
    ]);
    const catalog = deps.catalog();
    return deps.dayGrid.build(
      { tenantIds: [team.id], categories, omit: showSensitive ? [] : [...sensitive], withoutRejected: true },
      timeZone,
      date,
      { coarse: sensitive, nameOf: (code, fallback) => catalog.commonName(code, lang) ?? fallback },
    );
  }

  return {
    /** GET /public/teams/:slug/day */
    async day(slug: string, date: string | undefined, langTag: string | undefined): Promise<DayGrid> {
      const lang = deps.pages.languageOf(langTag);
      // The switches are checked on every answer, cached or not: "off" holds at once (service.ts).
      const team = await deps.pages.publishedTeam(slug);
      const key = `public:day:${await deps.settings.generation()}:${slug}:${date ?? 'today'}:${lang}`;
      const hit = await deps.kv.get(key);
      if (hit) {
        const cached = JSON.parse(hit) as { at: number; grid: DayGrid };
        if (deps.clock.now().getTime() - cached.at < PUBLIC_PAGE_CACHE_MS) return cached.grid;
      }
      const grid = await build(team, date, lang);
      await deps.kv.set(key, JSON.stringify({ at: deps.clock.now().getTime(), grid }), PUBLIC_PAGE_CACHE_MS / 1000);
      return grid;
    },
  };
}

export type PublicDayService = ReturnType<typeof createPublicDayService>;
