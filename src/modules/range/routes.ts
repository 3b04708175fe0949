import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams } from '../../core/schemas.ts';
import { Nullable, Open } from '../../core/schemas.ts';
import type { RangeService } from './service.ts';

const ExpectedSpecies = Open({
  satelliteId: Type.String(),
  week: Type.Integer({ description: "BirdNET's week: 1-48, four per month" }),
  threshold: Type.Number(),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  positionSource: Nullable(Type.String()),
  model: Nullable(Open({ id: Type.String(), name: Type.String() })),
  /** Where the list comes from: the range model, else eBird's recent reports near the satellite (a key configured), else nothing. */
  source: Nullable(Type.Union([Type.Literal('range_model'), Type.Literal('ebird')])),
  /** False with a reason: no_range_model (and no eBird key), no_position, ebird_unavailable. */
  available: Type.Boolean(),
  reason: Nullable(Type.String()),
  excluded: Type.Array(Type.String()),
  species: Type.Array(
    Open({
      code: Type.String(),
      commonName: Type.String(),
      scientificName: Type.String(),
      score: Nullable(Type.Number()),
      reason: Type.Union([Type.Literal('range_model'), Type.Literal('ebird'), Type.Literal('include_list')]),
    }),
  ),
});

export function rangeRoutes(range: RangeService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/satellites/:id/expected-species',
      action: 'satellites.expected_species',
      access: access.role('viewer'),
      team: { resource: 'satellite', param: 'id' },
      audit: [],
      summary:
        "Species the range model expects at the satellite's position in a week (default this week), at or above the team's range threshold; the team's include list added, its exclude list taken out",
      tags: ['satellites'],
      schema: {
        params: IdParams,
        querystring: Type.Object({ week: Type.Optional(Type.Integer({ minimum: 1, maximum: 48 })) }, { additionalProperties: false }),
        response: { 200: ExpectedSpecies },
      },
      handler: ({ actor, params, query }) => range.expected(actor.teamId, params.id, query.week),
    }),
  ];
}
