import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, Paging, Uuid } from '../../core/schemas.ts';
import { readableTeams } from '../../core/actor.ts';
import type { DetectionsService } from './service.ts';
import { DetectionDetail, DetectionList } from './schemas.ts';

const Status = Type.Union([
  Type.Literal('pending_review'),
  Type.Literal('confirmed'),
  Type.Literal('rejected'),
  Type.Literal('unverified'),
]);
const Bool = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')]);
const isTrue = (v: string | undefined) => v === 'true' || v === '1';

export function detectionsRoutes(detections: DetectionsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/detections',
      action: 'detections.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary:
        "Detections, newest first by default; filters, sorting, window (end exclusive) and paging; without tenantId the caller's teams",
      tags: ['detections'],
      schema: {
        querystring: Type.Object(
          {
            tenantId: Type.Optional(Uuid),
            satelliteId: Type.Optional(Uuid),
            species: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
            speciesSearch: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            minConfidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
            verificationStatus: Type.Optional(Status),
            sortBy: Type.Optional(Type.Union([Type.Literal('date'), Type.Literal('confidence'), Type.Literal('species')])),
            sortDir: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
            start: Type.Optional(Type.String({ format: 'date-time' })),
            end: Type.Optional(Type.String({ format: 'date-time' })),
            includeTentative: Type.Optional(Bool),
            callId: Type.Optional(Uuid),
            withCount: Type.Optional(Bool),
            outOfRange: Type.Optional(Bool),
            ...Paging,
          },
          { additionalProperties: false },
        ),
        response: { 200: DetectionList },
      },
      handler: ({ actor, query }) =>
        detections.list({
          tenantIds: readableTeams(actor),
          satelliteId: query.satelliteId,
          species: query.species,
          speciesSearch: query.speciesSearch,
          minConfidence: query.minConfidence,
          verificationStatus: query.verificationStatus,
          includeTentative: isTrue(query.includeTentative),
          callId: query.callId,
          start: query.start ? new Date(query.start) : undefined,
          end: query.end ? new Date(query.end) : undefined,
          sortBy: query.sortBy ?? 'date',
          sortDir: query.sortDir ?? 'desc',
          limit: query.limit ?? 50,
          offset: query.offset ?? 0,
          withCount: query.withCount === undefined ? true : isTrue(query.withCount),
          outOfRange: query.outOfRange === undefined ? undefined : isTrue(query.outOfRange),
        }),
    }),

    defineRoute({
      method: 'GET',
      url: '/detections/:id',
      action: 'detections.read',
      access: access.role('viewer'),
      team: { resource: 'detection', param: 'id' },
      audit: [],
      summary: "One detection with its storage key, vote counts, the caller's vote, annotation and comment counts",
      tags: ['detections'],
      schema: { params: IdParams, response: { 200: DetectionDetail } },
      handler: ({ actor, params }) => detections.get(actor.teamId, params.id, actor.userId),
    }),
  ];
}
