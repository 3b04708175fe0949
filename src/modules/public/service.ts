/**
 * Public team pages (spec §4 "Teams, joining, public pages", §8; issue 20): what a team shows the
 * world at /t/:slug, and the link preview chat apps read. Answers 404 unless the hub switch
 * allow_public_pages and the team's public_page are both on. A page is kept 10 minutes in the
 * kv port per (slug, language) and the settings generation: any settings save raises it (a
 * counter every process reads), so switching the page off takes effect at once on every instance.
 */
import type { Kv } from '../../infra/kv/index.ts';
import type { Clock } from '../../core/clock.ts';
import { localTime } from '../../core/local-time.ts';
import { notFound } from '../../core/errors.ts';
import type { SettingsService } from '../settings/service.ts';
import type { SpeciesCatalog } from '../species/catalog.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { SensitiveSpecies } from '../sensitive/service.ts';
import { createPublicRepo, type Scope } from './repo.ts';
import { ogHtml } from './og.ts';
import type { Db } from '../../infra/db/index.ts';
import type { PublicPage, SpeciesPhoto } from './schemas.ts';

export const PUBLIC_PAGE_CACHE_MS = 10 * 60_000;
export const TOP_SPECIES = 10;
export const DAILY_DAYS = 30;
/** "Recent firsts": species first heard by the team in the last this many days. */
export const FIRSTS_DAYS = 30;

const DAY_MS = 86_400_000;

/** Credited photos of species (the species photos module), by code; species without one are absent. */
export type PhotosOf = (codes: string[]) => Promise<Map<string, SpeciesPhoto>>;

export function createPublicPagesService(deps: {
  db: Db;
  kv: Kv;
  clock: Clock;
  /** Its generation() keys the page cache: any hub, team or satellite settings save drops every page. */
  settings: Pick<SettingsService, 'hubSetting' | 'teamSetting' | 'satelliteValues' | 'generation'>;
  visibility: Pick<CategoryVisibility, 'visible'>;
  sensitive: Pick<SensitiveSpecies, 'codesOf' | 'showsOnPublicPage'>;
  catalog: () => Pick<SpeciesCatalog, 'commonName' | 'resolveLanguage'>;
  photosOf?: PhotosOf;
  publicUrl: string;
}) {
  const { kv, clock, settings } = deps;
  const repo = createPublicRepo(deps.db);

  const switchesOn = async (tenantId: string) =>
    (await settings.hubSetting('allow_public_pages')) === true && (await settings.teamSetting(tenantId, 'public_page')) === true;

  /** The team behind a slug when its page is on; the same 404 for "no such team" and "page off". */
  async function publishedTeam(slug: string) {
    const team = await repo.teamBySlug(slug);
    if (!team || !(await switchesOn(team.id))) throw notFound('Team or item not found');
    return team;
  }

  const languageOf = (lang: string | undefined) => (lang && deps.catalog().resolveLanguage(lang)) || 'en';

  async function build(slug: string, lang: string): Promise<{ tenantId: string; page: PublicPage }> {
    const team = await publishedTeam(slug);
    const tenantId = team.id;
    const [categories, sensitive, showSensitive, timeZone, townOptIn, joinPolicy, directory] = await Promise.all([
      deps.visibility.visible(tenantId),
      deps.sensitive.codesOf(tenantId),
      deps.sensitive.showsOnPublicPage(tenantId),
      settings.teamSetting(tenantId, 'time_zone'),
      settings.teamSetting(tenantId, 'town_opt_in'),
      settings.teamSetting(tenantId, 'join_policy'),
      settings.hubSetting('allow_public_teams'),
    ]);
    const scope: Scope = { tenantId, categories, omit: showSensitive ? [] : [...sensitive] };
    const now = clock.now();
    const today = localTime(now, timeZone);
    const [counts, top, firsts, daily, towns] = await Promise.all([
      repo.counts(scope),
      repo.topSpecies(scope, TOP_SPECIES),
      repo.firstsSince(scope, new Date(now.getTime() - FIRSTS_DAYS * DAY_MS)),
      // A day more than asked: the first local day can start up to 14 hours before UTC's.
      repo.dailySince(scope, new Date(now.getTime() - (DAILY_DAYS + 1) * DAY_MS), timeZone),
      townOptIn ? townsOf(tenantId) : Promise.resolve(null),
    ]);
    const catalog = deps.catalog();
    const nameOf = (code: string, fallback: string) => catalog.commonName(code, lang) ?? fallback;
    // A page without photos is still a page: a failing photo store leaves them out.
    const photos = deps.photosOf
      ? await deps.photosOf(top.map((s) => s.code)).catch(() => new Map<string, SpeciesPhoto>())
      : new Map<string, SpeciesPhoto>();

    type First = { code: string; commonName: string; scientificName: string };
    const byDay = new Map<string, First[]>();
    // Sensitive species (when shown at all) come last in their day, by code: their place among the
    // day's other firsts, which are in time order, would say when they were heard (issue 33).
    const laterByDay = new Map<string, First[]>();
    for (const f of firsts) {
      const day = localTime(new Date(f.firstAt), timeZone).date;
      const into = sensitive.has(f.code.toLowerCase()) ? laterByDay : byDay;
      if (!byDay.has(day)) byDay.set(day, []);
      if (!into.has(day)) into.set(day, []);
      into.get(day)!.push({ code: f.code, commonName: nameOf(f.code, f.commonName), scientificName: f.scientificName });
    }
    for (const [day, later] of laterByDay) byDay.get(day)!.push(...later.sort((a, b) => a.code.localeCompare(b.code)));
    const perDay = new Map(daily.map((d) => [d.day, d.detections]));
    const dailyTotals = Array.from({ length: DAILY_DAYS }, (_, i) => {
      const date = dayString(today.day - (DAILY_DAYS - 1 - i));
      return { date, detections: perDay.get(date) ?? 0 };
    });
    const page: PublicPage = {
      slug: team.slug,
      name: team.name,
      description: team.description,
      since: new Date(team.createdAt).toISOString(),
      lang,
      timeZone,
      counts,
      topSpecies: top.map((s) => ({
        code: s.code,
        commonName: nameOf(s.code, s.commonName),
        scientificName: s.scientificName,
        detections: s.detections,
        photo: photos.get(s.code) ?? null,
      })),
      recentFirsts: [...byDay].map(([date, species]) => ({ date, species })),
      dailyTotals,
      towns,
      join: joinPolicy !== 'invite_only' && directory ? { policy: joinPolicy as 'listed' | 'request' | 'open', teamId: tenantId } : null,
      generatedAt: now.toISOString(),
    };
    return { tenantId, page };
  }

  /** Distinct towns of the team's satellites (each satellite's `town` setting): place names only, never a position. */
  async function townsOf(tenantId: string): Promise<string[]> {
    const values = await settings.satelliteValues('town', await repo.satelliteIds(tenantId));
    return [...new Set([...values.values()].filter((t): t is string => typeof t === 'string').map((t) => t.trim()))].sort();
  }

  async function page(slug: string, langTag?: string): Promise<PublicPage> {
    const lang = languageOf(langTag);
    const key = `public:page:${await settings.generation()}:${slug}:${lang}`;
    const hit = await kv.get(key);
    if (hit) {
      const cached = JSON.parse(hit) as { at: number; tenantId: string; page: PublicPage };
      // The clock decides freshness (tests move it); the kv TTL only bounds memory.
      if (clock.now().getTime() - cached.at < PUBLIC_PAGE_CACHE_MS) {
        // Another process may have built this page from settings it had cached a moment before
        // a switch went off: the switches are checked on every hit (the settings service's own
        // short cache), so "off" holds everywhere within seconds, never 10 minutes.
        if (!(await switchesOn(cached.tenantId))) throw notFound('Team or item not found');
        return cached.page;
      }
    }
    // A 404 is not kept: a page switched on must not wait for a cached "off" on another process.
    const built = await build(slug, lang);
    await kv.set(
      key,
      JSON.stringify({ at: clock.now().getTime(), tenantId: built.tenantId, page: built.page }),
      PUBLIC_PAGE_CACHE_MS / 1000,
    );
    return built.page;
  }

  return {
    page,

    /** The team of a slug whose page is on (the day grid's gate, public/day.ts), and the page's language of a tag. */
    publishedTeam,
    languageOf,

    /** The link preview of the page (Open Graph and Twitter card), every value escaped. */
    async og(slug: string, langTag?: string): Promise<string> {
      const p = await page(slug, langTag);
      return ogHtml(p, deps.publicUrl);
    },

    /** The preview for a bot at /t/:slug, or null when the page is off (the dashboard then answers). */
    async ogForBot(slug: string, langTag?: string): Promise<string | null> {
      try {
        const p = await page(slug, langTag);
        return ogHtml(p, deps.publicUrl, false);
      } catch {
        return null;
      }
    },
  };
}

function dayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export type PublicPagesService = ReturnType<typeof createPublicPagesService>;
