/**
 * The rare flag of a new detection (spec §2 `is_rare`, protocol `isRare`/`rareReason`): rare
 * means rare *for this team*, judged from the team's own record, not from a range map.
 *
 * - No verdict until the team has a baseline: its earliest detection lies at least
 *   BASELINE_DAYS before this one. A new team hears everything for the first time, and
 *   flagging all of it would make the flag (and the rare-species alerts) noise.
 * - Only animal categories: human voices and anthropogenic sounds are not species.
 * - Never recorded by the team → rare, "Not seen before at this team".
 * - Recorded fewer than FEW_RECORDS times and not in the last RECENT_DAYS → rare,
 *   "Not seen at this team in the last 30 days (N earlier records)". A species the team
 *   records often that merely went away for a while (a migrant returning) is not rare; the
 *   first-of-season badge covers that.
 * - Records count in the order chunks are processed, as first of day does: a record stored
 *   earlier counts even when its recording time is later.
 */
export const BASELINE_DAYS = 30;
export const RECENT_DAYS = 30;
export const FEW_RECORDS = 3;
const DAY_MS = 86_400_000;

/** Categories whose detections are never rare. */
const NOT_SPECIES = new Set(['human_voice', 'anthropogenic']);

export interface SpeciesRecord {
  /** Detections of the species stored for the team, counted up to FEW_RECORDS. */
  records: number;
  lastSeenAt: Date | null;
}

export interface RarityFacts {
  /** The team's earliest detection, null when it has none. */
  teamSince: Date | null;
  bySpecies: Map<string, SpeciesRecord>;
}

export interface Rarity {
  isRare: boolean;
  rareReason: string | null;
}

const NOT_RARE: Rarity = { isRare: false, rareReason: null };

/** The verdict for one detection, from the team's record before it. */
export function judgeRarity(d: { speciesCode: string; category: string; detectedAt: Date }, facts: RarityFacts): Rarity {
  if (NOT_SPECIES.has(d.category)) return NOT_RARE;
  const t = d.detectedAt.getTime();
  if (!facts.teamSince || t - facts.teamSince.getTime() < BASELINE_DAYS * DAY_MS) return NOT_RARE;
  const rec = facts.bySpecies.get(d.speciesCode) ?? { records: 0, lastSeenAt: null };
  if (rec.records === 0) return { isRare: true, rareReason: 'Not seen before at this team' };
  const recent = rec.lastSeenAt !== null && rec.lastSeenAt.getTime() >= t - RECENT_DAYS * DAY_MS;
  if (rec.records < FEW_RECORDS && !recent) {
    return {
      isRare: true,
      rareReason: `Not seen at this team in the last ${RECENT_DAYS} days (${rec.records} earlier record${rec.records === 1 ? '' : 's'})`,
    };
  }
  return NOT_RARE;
}
