import { access, defineRoute } from '../../core/permissions.ts';
import { readableTeams } from '../../core/actor.ts';
import type { GeoStatsService } from './geo-service.ts';
import {
  ExpectedSpecies,
  ExpectedSpeciesQuery,
  MapDetections,
  MapDetectionsQuery,
  MapQuery,
  StatsMap,
  WeatherCorrelation,
  WeatherCorrelationQuery,
} from './geo-schemas.ts';

/** GET /stats/weather-correlation, /stats/expected-species, /stats/map and /stats/map/detections (spec §4 Stats). */
export function statsGeoRoutes(geo: GeoStatsService) {
  const team = { in: 'query', key: 'tenantId', optional: true } as const;
  return [
    defineRoute({
      method: 'GET',
      url: '/stats/weather-correlation',
      action: 'stats.weather_correlation',
      access: access.role('viewer'),
      team,
      audit: [],
      summary:
        'Pearson and Spearman correlation of hourly detection counts with the weather at each satellite (Open-Meteo); 200 with available false when the weather cannot be had',
      tags: ['stats'],
      schema: { querystring: WeatherCorrelationQuery, response: { 200: WeatherCorrelation } },
      handler: ({ actor, query }) => geo.weatherCorrelation(readableTeams(actor), query),
    }),
    defineRoute({
      method: 'GET',
      url: '/stats/expected-species',
      action: 'stats.expected_species',
      access: access.role('viewer'),
      team,
      audit: [],
      summary:
        'Species eBird reports near the satellites against what the team heard: expected and heard, expected and not heard, heard and not expected',
      tags: ['stats'],
      schema: { querystring: ExpectedSpeciesQuery, response: { 200: ExpectedSpecies } },
      handler: ({ actor, query }) => geo.expectedSpecies(readableTeams(actor), query),
    }),
    defineRoute({
      method: 'GET',
      url: '/stats/map',
      action: 'stats.map',
      access: access.role('viewer'),
      team,
      audit: [],
      summary:
        "Satellite positions (latest telemetry GPS, else the profile's) with detection counts, species and last detection in the window",
      tags: ['stats'],
      schema: { querystring: MapQuery, response: { 200: StatsMap } },
      handler: ({ actor, query }) => geo.map(readableTeams(actor), query),
    }),
    defineRoute({
      method: 'GET',
      url: '/stats/map/detections',
      action: 'stats.map.detections',
      access: access.role('viewer'),
      team,
      audit: [],
      summary: 'Detections of moving (phone) satellites at the GPS position of their audio chunk, newest first, bounded by limit',
      tags: ['stats'],
      schema: { querystring: MapDetectionsQuery, response: { 200: MapDetections } },
      handler: ({ actor, query }) => geo.mapDetections(readableTeams(actor), query),
    }),
  ];
}
