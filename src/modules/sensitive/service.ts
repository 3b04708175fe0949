/**
 * Sensitive species (issue 20, beyond the spec): the hub's list (setting `sensitive_species`,
 * seeded from assets/sensitive-species) and each team's additions (`sensitive_species_extra`).
 * Every view of such a species that leaves the team — public pages, share links, outside
 * exports, alert deliveries — gives no position finer than a 0.1° grid and no satellite name.
 *
 * Issue 33: nor may it be joined to a precise row. A detection's time is its chunk's time, so
 * another species' row with the same time (or the same chunk, satellite or recording) names the
 * satellite and its exact position. Every such view therefore coarsens the time (to the hour in
 * files and messages that leave the team, to the day for the public: public page, share link,
 * link previews) and drops what names the chunk. The rule lives here; every writer and view
 * calls it.
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

/**
 * Who sees a sensitive species' row once it leaves the team: `outside` (scheduled exports,
 * submission files for eBird, iNaturalist, GBIF and xeno-canto, alert deliveries) or `public`
 * (public page, share links, their previews).
 */
export type OutsideAudience = 'outside' | 'public';

/** How fine a sensitive species' time may be for each audience. */
export const TIME_PRECISION = { outside: 'hour', public: 'day' } as const satisfies Record<OutsideAudience, 'hour' | 'day'>;
const UNIT_MS = { hour: 3_600_000, day: 86_400_000 } as const;

/** Written in place of the satellite's name and id (and any other name of the recorder). */
export const WITHHELD = 'withheld';

/**
 * The interval a sensitive species' time is given as: the start of its UTC hour (outside) or
 * UTC day (public) and the end of that hour or day. The call's own end is not used: a call
 * that runs past the boundary would say it started near the end of the interval.
 */
export function coarsenTime(at: string | Date, audience: OutsideAudience): { start: string; end: string } {
  const unit = UNIT_MS[TIME_PRECISION[audience]];
  const ms = (at instanceof Date ? at : new Date(at)).getTime();
  const start = Math.floor(ms / unit) * unit;
  return { start: new Date(start).toISOString(), end: new Date(start + unit).toISOString() };
}

/** The start of the coarsened interval, in milliseconds (ordering rows by what they may show). */
export const coarsenedMs = (at: string, audience: OutsideAudience): number => {
  const unit = UNIT_MS[TIME_PRECISION[audience]];
  return Math.floor(new Date(at).getTime() / unit) * unit;
};

/**
 * Rows in time order with some of them coarsened: a coarsened row written where its exact time
 * would put it (between the precise rows just before and after it) gives that time away. Each
 * coarsened row is held back until the stream passes the end of its interval and then written,
 * with the others of the same interval, in an order that knows nothing of their times (by id,
 * random UUIDs). Memory holds the coarsened rows of one interval.
 */
export function reorderCoarsened<R extends { id: string; detectedAt: string }>(
  source: AsyncIterable<R[]>,
  isCoarsened: (r: R) => boolean,
  audience: OutsideAudience,
): AsyncIterable<R[]> {
  return (async function* () {
    let held: R[] = [];
    let heldUntil = -Infinity;
    const release = () => {
      const out = held.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      held = [];
      return out;
    };
    for await (const batch of source) {
      const out: R[] = [];
      for (const r of batch) {
        const at = new Date(r.detectedAt).getTime();
        if (held.length && at >= heldUntil) out.push(...release());
        if (isCoarsened(r)) {
          held.push(r);
          heldUntil = coarsenedMs(r.detectedAt, audience) + UNIT_MS[TIME_PRECISION[audience]];
        } else out.push(r);
      }
      if (out.length) yield out;
    }
    if (held.length) yield release();
  })();
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
