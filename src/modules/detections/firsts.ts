/**
 * First of day and first of season (spec §2 `is_first_of_day`, `is_first_of_season`): no
 * detection of that species for the team earlier that UTC day, or that UTC calendar quarter (the
 * season, docs/decisions.md), in the order chunks are processed.
 */

/** The UTC day a time falls in, as [from, to). */
export function dayOf(t: Date): [Date, Date] {
  const from = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));
  return [from, new Date(from.getTime() + 86_400_000)];
}

/** The UTC calendar quarter (the season) a time falls in, as [from, to). */
export function seasonOf(t: Date): [Date, Date] {
  const q = Math.floor(t.getUTCMonth() / 3);
  return [new Date(Date.UTC(t.getUTCFullYear(), q * 3, 1)), new Date(Date.UTC(t.getUTCFullYear(), q * 3 + 3, 1))];
}
