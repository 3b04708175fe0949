/**
 * Request and response schemas of the /stats endpoints (issue 19, spec §4 "Stats"). Every count
 * covers what the Detections page lists: promoted detections, one row per stitched call, in the
 * categories the team shows. Every response names the window it counted (`from` inclusive, `to`
 * exclusive, ISO instants) and the IANA zone whose local days and hours it used (`timeZone`).
 *
 * Shapes fixed by the issue (clients rely on them): dashboard {speciesCount, detectionCount,
 * chunkCount, …}; top-species {species: [{code, commonName, scientificName, count}]}; biodiversity
 * {satellites: [{satelliteId, name, speciesCount, detectionCount, shannon, simpson, evenness}]};
 * compare {pairs: [{a, b, shared, onlyA, onlyB, jaccard}]}; species-accuracy {species: [{code,
 * confirmed, rejected, accuracy}]}. Later changes here are additive only (stats-ext and the
 * dashboard build on these).
 */
import { Type, type Static } from 'typebox';
import { Nullable, Uuid } from '../../core/schemas.ts';

/** A date (YYYY-MM-DD, a local midnight in the team's zone) or an ISO 8601 instant. */
const DateOrInstant = Type.String({
  minLength: 10,
  maxLength: 40,
  pattern: '^\\d{4}-\\d{2}-\\d{2}([T ].+)?$',
  description: 'YYYY-MM-DD (local midnight in the team time zone) or an ISO 8601 instant',
});

/**
 * The common query of every stats endpoint: the team like GET /detections (optional; without it
 * the caller's teams, every team for a hub admin), a satellite, a species code, and the window as
 * `days` (the last N local days, today included; default 30) or `from`/`to` (`to` exclusive).
 */
export const StatsQueryFields = {
  tenantId: Type.Optional(Uuid),
  satelliteId: Type.Optional(Uuid),
  species: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366, description: 'last N local days, today included (default 30)' })),
  from: Type.Optional(DateOrInstant),
  to: Type.Optional(DateOrInstant),
};
export const StatsQuery = Type.Object(StatsQueryFields, { additionalProperties: false });
export type StatsQuery = Static<typeof StatsQuery>;

const Limit = (def: number, max: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: def }));

export const TopSpeciesQuery = Type.Object({ ...StatsQueryFields, limit: Limit(10, 300) }, { additionalProperties: false });
export const LeaderboardQuery = Type.Object({ ...StatsQueryFields, limit: Limit(20, 100) }, { additionalProperties: false });
export const SpeciesListQuery = Type.Object({ ...StatsQueryFields, limit: Limit(500, 2000) }, { additionalProperties: false });
export const CompareQuery = Type.Object(
  {
    ...StatsQueryFields,
    satelliteIds: Type.String({ minLength: 1, maxLength: 37 * 20, description: 'two to twenty satellite ids, comma separated' }),
  },
  { additionalProperties: false },
);
export const SpeciesParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 50 }) });

/** What every stats response says about the window it counted. */
export const WindowFields = {
  timeZone: Type.String({ description: 'IANA zone of the local days and hours' }),
  from: Type.String({ format: 'date-time', description: 'window start, inclusive' }),
  to: Type.String({ format: 'date-time', description: 'window end, exclusive' }),
};

const Name = { commonName: Type.String(), scientificName: Type.String() };
/** 24 counts, index = local wall-clock hour (0–23). */
const Hours = Type.Array(Type.Integer(), { minItems: 24, maxItems: 24 });

export const Dashboard = Type.Object({
  ...WindowFields,
  speciesCount: Type.Integer(),
  detectionCount: Type.Integer(),
  chunkCount: Type.Integer({ description: 'audio chunks received in the window' }),
  satelliteCount: Type.Integer({ description: 'satellites with at least one counted detection in the window' }),
  todayCount: Type.Integer({ description: 'counted detections of the local today' }),
  confirmedCount: Type.Integer(),
});

export const DayCount = Type.Object({ date: Type.String({ description: 'local date YYYY-MM-DD' }), count: Type.Integer() });
export const Trends = Type.Object({ ...WindowFields, days: Type.Array(DayCount) });

export const TopSpecies = Type.Object({
  ...WindowFields,
  species: Type.Array(Type.Object({ code: Type.String(), ...Name, count: Type.Integer() })),
});

export const Activity = Type.Object({
  ...WindowFields,
  hours: Type.Array(Type.Object({ hour: Type.Integer({ minimum: 0, maximum: 23 }), count: Type.Integer() }), {
    minItems: 24,
    maxItems: 24,
  }),
});

export const Verification = Type.Object({
  ...WindowFields,
  total: Type.Integer(),
  unverified: Type.Integer(),
  pendingReview: Type.Integer(),
  confirmed: Type.Integer(),
  rejected: Type.Integer(),
  /** confirmed + rejected over total; null when nothing counted */
  progress: Nullable(Type.Number()),
});

export const Leaderboard = Type.Object({
  ...WindowFields,
  contributors: Type.Array(
    Type.Object({
      userId: Uuid,
      name: Type.String(),
      votes: Type.Integer(),
      confirms: Type.Integer(),
      rejects: Type.Integer(),
      unsure: Type.Integer(),
    }),
  ),
});

export const SpeciesListEntry = Type.Object({
  code: Type.String(),
  ...Name,
  category: Type.String(),
  count: Type.Integer(),
  satelliteCount: Type.Integer(),
  confirmed: Type.Integer(),
  rejected: Type.Integer(),
});
export const SpeciesList = Type.Object({ ...WindowFields, species: Type.Array(SpeciesListEntry) });

export const SpeciesProfile = Type.Object({
  ...WindowFields,
  species: Type.Object({ code: Type.String(), ...Name, category: Type.String() }),
  count: Type.Integer(),
  satelliteCount: Type.Integer(),
  confirmed: Type.Integer(),
  rejected: Type.Integer(),
  firstDetectedAt: Nullable(Type.String({ format: 'date-time' })),
  lastDetectedAt: Nullable(Type.String({ format: 'date-time' })),
  trend: Type.Array(DayCount),
  hourly: Hours,
  satellites: Type.Array(Type.Object({ satelliteId: Uuid, name: Type.String(), count: Type.Integer() })),
  /** ten bins of confidence: [0, 0.1), …, [0.9, 1] */
  confidence: Type.Array(Type.Object({ from: Type.Number(), to: Type.Number(), count: Type.Integer() })),
  recent: Type.Array(
    Type.Object({
      id: Uuid,
      detectedAt: Type.String({ format: 'date-time' }),
      satelliteId: Uuid,
      confidence: Type.Number(),
      verificationStatus: Type.String(),
    }),
  ),
});

export const Compare = Type.Object({
  ...WindowFields,
  satellites: Type.Array(
    Type.Object({ satelliteId: Uuid, name: Type.String(), speciesCount: Type.Integer(), detectionCount: Type.Integer() }),
  ),
  pairs: Type.Array(
    Type.Object({
      a: Uuid,
      b: Uuid,
      shared: Type.Integer(),
      onlyA: Type.Integer(),
      onlyB: Type.Integer(),
      /** |A ∩ B| / |A ∪ B|; null when both sets are empty */
      jaccard: Nullable(Type.Number()),
    }),
  ),
});

export const Migration = Type.Object({
  ...WindowFields,
  months: Type.Array(Type.String({ description: 'local month YYYY-MM' })),
  species: Type.Array(Type.Object({ code: Type.String(), ...Name, total: Type.Integer(), counts: Type.Array(Type.Integer()) })),
});

export const Biodiversity = Type.Object({
  ...WindowFields,
  satellites: Type.Array(
    Type.Object({
      satelliteId: Uuid,
      name: Type.String(),
      speciesCount: Type.Integer(),
      detectionCount: Type.Integer(),
      /** H′ = −Σ pᵢ ln pᵢ; null without detections */
      shannon: Nullable(Type.Number()),
      /** Gini–Simpson 1 − Σ pᵢ²; null without detections */
      simpson: Nullable(Type.Number()),
      /** Pielou H′ / ln S; null when S < 2 */
      evenness: Nullable(Type.Number()),
    }),
  ),
});

export const ActivityHeatmap = Type.Object({
  ...WindowFields,
  /** one entry per local day of the window; hours[h] counts the local wall-clock hour h */
  days: Type.Array(Type.Object({ date: Type.String(), hours: Hours })),
});

export const SatelliteActivity = Type.Object({
  ...WindowFields,
  satellites: Type.Array(
    Type.Object({
      satelliteId: Uuid,
      name: Type.String(),
      detectionCount: Type.Integer(),
      /** the local hour with the most detections (earliest on a tie); null without detections */
      peakHour: Nullable(Type.Integer({ minimum: 0, maximum: 23 })),
      hours: Hours,
    }),
  ),
});

export const SpeciesAccuracy = Type.Object({
  ...WindowFields,
  species: Type.Array(
    Type.Object({
      code: Type.String(),
      ...Name,
      confirmed: Type.Integer(),
      rejected: Type.Integer(),
      /** confirmed / (confirmed + rejected); only species with a confirmed or rejected detection are listed */
      accuracy: Type.Number(),
    }),
  ),
});
