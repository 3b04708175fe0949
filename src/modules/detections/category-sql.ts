/**
 * The SQL of category visibility, shared by the detections module's reads and the sessions read
 * model (src/modules/sessions/repo.ts), which counts what the Detections page lists.
 */
import { findSetting } from '../settings/registry.ts';

/**
 * The categories each team shows (team setting `visible_categories`, spec §4 Stats note, 0.78):
 * `teams` per team; `others` for every team not named there (a list over every team names only
 * the teams with a value of their own).
 */
export interface VisibleCategories {
  teams: ReadonlyMap<string, readonly string[]>;
  others: readonly string[];
}

/** The registry's default of `visible_categories` (everything but anthropogenic and human_voice). */
export const DEFAULT_VISIBLE_CATEGORIES: readonly string[] = findSetting('visible_categories')!.default as string[];

/** Every team shows the default (what a fresh hub answers; the detections bench lists with it). */
export const defaultVisibility = (): VisibleCategories => ({ teams: new Map(), others: DEFAULT_VISIBLE_CATEGORIES });

/**
 * The SQL condition that keeps rows of `alias` (with tenant_id and category columns) in the
 * categories their team shows, for the rows of `tenantIds` (null: every team). Teams showing the
 * same categories share one test, so one team (or several alike) is a plain `category = ANY(…)`
 * that PostgreSQL checks on the index entry (migration 0012 INCLUDEs category).
 */
export function categoryCondition(
  v: VisibleCategories,
  tenantIds: readonly string[] | null,
  add: (value: unknown) => string,
  alias = 'd',
): string {
  const keyOf = (cats: readonly string[]) => [...cats].sort().join(',');
  const groups = new Map<string, { cats: readonly string[]; teams: string[] }>();
  const othersKey = keyOf(v.others);
  for (const t of tenantIds ?? [...v.teams.keys()]) {
    const cats = v.teams.get(t) ?? v.others;
    const k = keyOf(cats);
    // Over every team, a team that shows what `others` shows needs no test of its own.
    if (!tenantIds && k === othersKey) continue;
    const g = groups.get(k);
    if (g) g.teams.push(t);
    else groups.set(k, { cats, teams: [t] });
  }
  const inCats = (cats: readonly string[]) => `${alias}.category = ANY(${add([...cats])}::text[])`;
  const ofTeams = (teams: string[]) =>
    teams.length === 1 ? `${alias}.tenant_id = ${add(teams[0])}` : `${alias}.tenant_id = ANY(${add(teams)}::uuid[])`;
  if (tenantIds) {
    if (groups.size <= 1) return inCats([...groups.values()][0]?.cats ?? []);
    return `(${[...groups.values()].map((g) => `(${ofTeams(g.teams)} AND ${inCats(g.cats)})`).join(' OR ')})`;
  }
  if (groups.size === 0) return inCats(v.others);
  const named = [...groups.values()].flatMap((g) => g.teams);
  const parts = [...groups.values()].map((g) => `(${ofTeams(g.teams)} AND ${inCats(g.cats)})`);
  parts.push(`(${alias}.tenant_id <> ALL(${add(named)}::uuid[]) AND ${inCats(v.others)})`);
  return `(${parts.join(' OR ')})`;
}
