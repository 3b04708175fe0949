/**
 * Recent eBird observations near a position, kept a day in the database (docs/decisions.md
 * "Statistics (weather, eBird, map)"): the same query within a day is answered without a request.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { SourceFailure } from '../weather/client.ts';
import { gridOf } from '../weather/service.ts';
import type { EbirdClient, EbirdObservation } from './client.ts';
import { createEbirdRepo } from './repo.ts';

const CACHE_MS = 24 * 3_600_000;

export type EbirdRecent =
  | { ok: true; observations: EbirdObservation[]; fetched: boolean }
  | SourceFailure
  | { ok: false; reason: 'not_configured'; detail: string };

export function createEbirdService(deps: { db: Db; clock: Clock; client: EbirdClient | null }) {
  const repo = createEbirdRepo(deps.db);
  return {
    configured: deps.client !== null,

    /** `cachedOnly`: answer from the database or else with that failure (a caller that saw eBird fail does not wait again). */
    async recent(
      latitude: number,
      longitude: number,
      distKm: number,
      backDays: number,
      opts: { cachedOnly?: SourceFailure } = {},
    ): Promise<EbirdRecent> {
      if (!deps.client) return { ok: false, reason: 'not_configured', detail: 'No eBird API key is set (EBIRD_API_KEY)' };
      const k = { latE2: gridOf(latitude), lngE2: gridOf(longitude), distKm, backDays };
      const now = deps.clock.now();
      const cached = await repo.fresh(k, new Date(now.getTime() - CACHE_MS));
      if (cached) return { ok: true, observations: cached, fetched: false };
      if (opts.cachedOnly) return opts.cachedOnly;
      const answer = await deps.client.recent(k.latE2 / 100, k.lngE2 / 100, distKm, backDays);
      if (!answer.ok) return answer;
      await repo.store(k, answer.observations, now);
      return { ok: true, observations: answer.observations, fetched: true };
    },
  };
}

export type EbirdService = ReturnType<typeof createEbirdService>;
