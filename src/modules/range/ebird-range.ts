/**
 * The range filter's fallback where no range model is installed (issue 35): the species eBird users
 * reported near the position over the last 30 days (eBird API 2.0 through the ebird module, within
 * 50 km, kept a day in the database), when a key is configured. A bird not reported there is out of
 * range. eBird's API has no frequency per week, so this is presence in recent reports: coarser than
 * the range model (a present but unreported bird is flagged; the team's include list corrects it).
 *
 * The inference worker asks for every chunk with birds: after eBird fails, it is not asked again for
 * ten minutes (by the hub's clock), so a job never waits on an eBird that is down; meanwhile nothing
 * is flagged by it.
 */
import type { Clock } from '../../core/clock.ts';
import type { EbirdService } from '../ebird/service.ts';
import type { SourceFailure } from '../weather/client.ts';
import type { SpeciesCatalog } from '../species/catalog.ts';

/** eBird API 2.0's widest search: 50 km, 30 days. */
export const EBIRD_RANGE_DIST_KM = 50;
export const EBIRD_RANGE_BACK_DAYS = 30;
const RETRY_AFTER_FAILURE_MS = 10 * 60_000;

export function createEbirdRange(deps: {
  ebird: Pick<EbirdService, 'recent' | 'configured'>;
  clock: Clock;
  catalog: () => Pick<SpeciesCatalog, 'byCode'>;
}) {
  let failed: { at: number; failure: SourceFailure } | null = null;
  return {
    configured: deps.ebird.configured,

    /** The catalog's codes (lower case) of the species reported near a position; null when eBird is not configured or failed. */
    async reportedNear(latitude: number, longitude: number): Promise<Set<string> | null> {
      if (!deps.ebird.configured) return null;
      const now = deps.clock.now().getTime();
      const recent = failed && now - failed.at < RETRY_AFTER_FAILURE_MS ? failed.failure : undefined;
      const answer = await deps.ebird.recent(latitude, longitude, EBIRD_RANGE_DIST_KM, EBIRD_RANGE_BACK_DAYS, { cachedOnly: recent });
      if (!answer.ok) {
        if (!recent && answer.reason !== 'not_configured') failed = { at: now, failure: answer as SourceFailure };
        return null;
      }
      failed = null;
      const catalog = deps.catalog();
      return new Set(answer.observations.map((o) => (catalog.byCode(o.speciesCode)?.code ?? o.speciesCode).toLowerCase()));
    },
  };
}
