import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import type { SpeciesThresholds } from './service.ts';
import { SetThreshold, SpeciesCode, TeamQuery, ThresholdDetail, ThresholdList } from './schemas.ts';

const Params = Type.Object({ code: SpeciesCode }, { additionalProperties: false });

export function speciesThresholdsRoutes(thresholds: SpeciesThresholds) {
  return [
    defineRoute({
      method: 'GET',
      url: '/species-thresholds',
      action: 'species_thresholds.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "The team's per-species minimum confidences (learned from votes, pinned or reset by an admin) and the rules",
      tags: ['species'],
      schema: { querystring: TeamQuery, response: { 200: ThresholdList } },
      handler: ({ actor }) => thresholds.list(actor.teamId),
    }),

    defineRoute({
      method: 'GET',
      url: '/species-thresholds/:code',
      action: 'species_thresholds.read',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "One species' threshold in force and its recomputations, newest first (at most 100)",
      tags: ['species'],
      schema: { params: Params, querystring: TeamQuery, response: { 200: ThresholdDetail } },
      handler: ({ actor, params }) => thresholds.detail(actor.teamId, params.code),
    }),

    defineRoute({
      method: 'PUT',
      url: '/species-thresholds/:code',
      action: 'species_thresholds.update',
      access: access.role('admin'),
      team: { in: 'body', key: 'tenantId' },
      audit: ['admin.species_threshold_pinned', 'admin.species_threshold_reset', 'admin.species_threshold_learned'],
      summary:
        "Pins a species' threshold (mode pinned with threshold), resets it to none (mode none) or follows the votes again (mode learned)",
      tags: ['species'],
      schema: { params: Params, body: SetThreshold, response: { 200: ThresholdDetail } },
      handler: ({ actor, params, body }) => thresholds.set(actor, params.code, { mode: body.mode, threshold: body.threshold }),
    }),
  ];
}
