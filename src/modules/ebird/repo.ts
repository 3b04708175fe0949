import { col, shape, type Db } from '../../infra/db/index.ts';
import type { EbirdObservation } from './client.ts';

export interface EbirdQueryKey {
  latE2: number;
  lngE2: number;
  distKm: number;
  backDays: number;
}

/** A cached answer: eBird's observations as fetched. */
const Cached = shape({ observations: col.json<EbirdObservation[]>() });

export function createEbirdRepo(db: Db) {
  const key = (k: EbirdQueryKey) => [k.latE2, k.lngE2, k.distKm, k.backDays];
  return {
    /** The stored answer to a query when it was fetched after `since`. */
    fresh: async (k: EbirdQueryKey, since: Date) =>
      (
        await db.maybeOne(
          Cached,
          `SELECT observations FROM ebird_recent_cache
           WHERE lat_e2 = $1 AND lng_e2 = $2 AND dist_km = $3 AND back_days = $4 AND fetched_at > $5`,
          [...key(k), since],
        )
      )?.observations ?? null,

    store: (k: EbirdQueryKey, observations: readonly EbirdObservation[], now: Date) =>
      db.run(
        `INSERT INTO ebird_recent_cache (lat_e2, lng_e2, dist_km, back_days, observations, fetched_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6)
         ON CONFLICT (lat_e2, lng_e2, dist_km, back_days) DO UPDATE SET observations = excluded.observations, fetched_at = excluded.fetched_at`,
        [...key(k), JSON.stringify(observations), now],
      ),
  };
}
