import type { Level, SettingDef } from './registry.ts';

export interface Stored {
  value: unknown;
  mayOverride: boolean | null;
}

/** One level's stored rows for one scope, by key. */
export type Layer = Map<string, Stored>;

export interface Layers {
  hub: Layer;
  team?: Layer;
  satellite?: Layer;
  account?: Layer;
}

export type Source = Level | 'default';

export interface SettingEntry {
  key: string;
  value: unknown;
  source: Source;
  inherited: { value: unknown; from: Source };
  lockedBy: 'hub' | 'team' | null;
  own: unknown;
  mayOverride?: boolean;
}

/** The levels above a scope, farthest first: the walk reads them top-down. */
function parentsOf(level: Level, def: SettingDef, layers: Layers): Array<['hub' | 'team', Layer]> {
  const chain: Array<['hub' | 'team', Layer]> = [];
  if (level === 'hub') return chain;
  chain.push(['hub', layers.hub]);
  if ((level === 'satellite' || level === 'account') && layers.team && def.levels.includes('team')) chain.push(['team', layers.team]);
  return chain;
}

/**
 * What a scope gets by setting nothing: the nearest value above it, else the default — and a
 * lock at the hub or the team ends the walk there, because a level that forbids overriding
 * must also win over any value stored below it.
 */
export function inherit(
  def: SettingDef,
  level: Level,
  layers: Layers,
): { inherited: SettingEntry['inherited']; lockedBy: SettingEntry['lockedBy'] } {
  let inherited: SettingEntry['inherited'] = { value: def.default, from: 'default' };
  for (const [lvl, layer] of parentsOf(level, def, layers)) {
    const stored = layer.get(def.key);
    if (stored && stored.value !== null && stored.value !== undefined) inherited = { value: stored.value, from: lvl };
    if (stored?.mayOverride === false && def.lockableAt?.includes(lvl)) return { inherited, lockedBy: lvl };
  }
  return { inherited, lockedBy: null };
}

export function resolveEntry(def: SettingDef, level: Level, layers: Layers): SettingEntry {
  const own = layers[level]?.get(def.key);
  const ownValue = own && own.value !== undefined ? own.value : null;
  const { inherited, lockedBy } = inherit(def, level, layers);
  const entry: SettingEntry = {
    key: def.key,
    value: lockedBy || ownValue === null ? inherited.value : ownValue,
    source: lockedBy || ownValue === null ? inherited.from : level,
    inherited,
    lockedBy,
    own: ownValue,
  };
  if (def.lockableAt?.includes(level)) entry.mayOverride = own?.mayOverride ?? true;
  return entry;
}

export function effectiveValues(defs: readonly SettingDef[], level: Level, layers: Layers): Record<string, unknown> {
  return Object.fromEntries(defs.map((d) => [d.key, resolveEntry(d, level, layers).value]));
}
