/**
 * Schemas of the four stats views that reach outside the hub or draw on a map: weather
 * correlation, expected species, map and map/detections. The common query and window fields
 * are those of schemas.ts.
 */
import { Type, type Static } from 'typebox';
import { Nullable, Uuid } from '../../core/schemas.ts';
import { StatsQueryFields, WindowFields } from './schemas.ts';
import { MAP_POINTS_DEFAULT, MAP_POINTS_MAX } from './map-service.ts';
import { EXPECTED_BACK_DEFAULT_DAYS, EXPECTED_DIST_DEFAULT_KM } from './expected-species.ts';

const Unavailable = {
  available: Type.Boolean({ description: 'false when the outside service gave no data; the request still answers 200' }),
  reason: Type.Optional(Type.String({ description: 'not_configured, no_position, unreachable, upstream_error or invalid_response' })),
  detail: Type.Optional(Type.String()),
};
const Position = {
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
};

export const WeatherCorrelationQuery = Type.Object(StatsQueryFields, { additionalProperties: false });

const Correlation = Type.Object({
  pearson: Nullable(Type.Number({ description: "Pearson's r; null below two hours or for a constant series" })),
  spearman: Nullable(Type.Number({ description: "Spearman's ρ with mean ranks for ties" })),
  n: Type.Integer({ description: 'hours in the sample' }),
});
const Correlations = Type.Object({
  temperature: Correlation,
  precipitation: Correlation,
  windSpeed: Correlation,
  cloudCover: Correlation,
});

export const WeatherCorrelation = Type.Object({
  ...WindowFields,
  ...Unavailable,
  fields: Type.Array(Type.String(), { description: 'temperature (°C), precipitation (mm), windSpeed (km/h at 10 m), cloudCover (%)' }),
  satellites: Type.Array(
    Type.Object({
      satelliteId: Uuid,
      name: Type.String(),
      ...Position,
      ...Unavailable,
      hours: Type.Integer({ description: 'hours sampled: every hour with weather on a local day the satellite counted a detection' }),
      correlations: Nullable(Correlations),
    }),
  ),
  overall: Nullable(Type.Object({ hours: Type.Integer(), correlations: Correlations }, { description: 'every satellite hour pooled' })),
});

export const ExpectedSpeciesQuery = Type.Object(
  {
    ...StatsQueryFields,
    distKm: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 50,
        default: EXPECTED_DIST_DEFAULT_KM,
        description: 'eBird search radius around each satellite',
      }),
    ),
    backDays: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 30, default: EXPECTED_BACK_DEFAULT_DAYS, description: 'eBird reports of the last N days' }),
    ),
  },
  { additionalProperties: false },
);
export type ExpectedSpeciesQuery = Static<typeof ExpectedSpeciesQuery>;

const ExpectedItem = Type.Object({
  code: Type.String(),
  commonName: Type.String(),
  scientificName: Type.String(),
  lastReportedAt: Nullable(Type.String({ description: "eBird's latest report, local time at the location" })),
  detections: Type.Integer(),
  lastDetectedAt: Nullable(Type.String({ format: 'date-time' })),
});

export const ExpectedSpecies = Type.Object({
  ...WindowFields,
  ...Unavailable,
  /** Where "expected" comes from: the hub's range model when one is installed (issue 35), else eBird's recent reports. */
  source: Type.Union([Type.Literal('range_model'), Type.Literal('ebird')]),
  distKm: Type.Integer(),
  backDays: Type.Integer(),
  satellites: Type.Array(Type.Object({ satelliteId: Uuid, name: Type.String(), ...Position, ...Unavailable })),
  expectedAndHeard: Type.Array(ExpectedItem),
  expectedNotHeard: Type.Array(ExpectedItem),
  heardNotExpected: Type.Array(ExpectedItem),
});

export const MapQuery = Type.Object(StatsQueryFields, { additionalProperties: false });

export const StatsMap = Type.Object({
  ...WindowFields,
  satellites: Type.Array(
    Type.Object({
      satelliteId: Uuid,
      name: Type.String(),
      stream: Nullable(Type.String({ description: 'satellite (board) or mobile (phone), as the heartbeat reports it' })),
      ...Position,
      positionSource: Nullable(Type.Union([Type.Literal('telemetry'), Type.Literal('profile')])),
      positionAt: Nullable(Type.String({ format: 'date-time', description: 'time of the telemetry GPS fix' })),
      detectionCount: Type.Integer(),
      speciesCount: Type.Integer(),
      lastDetectionAt: Nullable(Type.String({ format: 'date-time' })),
    }),
  ),
});

export const MapDetectionsQuery = Type.Object(
  {
    ...StatsQueryFields,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAP_POINTS_MAX, default: MAP_POINTS_DEFAULT })),
  },
  { additionalProperties: false },
);
export type MapDetectionsQuery = Static<typeof MapDetectionsQuery>;

export const MapDetections = Type.Object({
  ...WindowFields,
  satelliteIds: Type.Array(Uuid, { description: 'the moving satellites drawn: mobile stream, or the one named' }),
  points: Type.Array(
    Type.Object({
      detectionId: Uuid,
      satelliteId: Uuid,
      speciesCode: Type.String(),
      commonName: Type.String(),
      scientificName: Type.String(),
      confidence: Type.Number(),
      detectedAt: Type.String({ format: 'date-time' }),
      latitude: Type.Number(),
      longitude: Type.Number(),
    }),
  ),
  truncated: Type.Boolean({ description: 'more points than limit; the newest are listed' }),
});
