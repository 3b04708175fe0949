import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Paging, Uuid } from '../../core/schemas.ts';
import { readableTeams } from '../../core/actor.ts';
import type { SessionsService } from './service.ts';
import { SessionList, SessionTimeline } from './schemas.ts';

export function sessionsRoutes(sessions: SessionsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/sessions',
      action: 'sessions.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary: "Recording sessions (a satellite's consecutive chunks; 5 minutes of silence starts a new one), newest first by default",
      tags: ['sessions'],
      schema: {
        querystring: Type.Object(
          {
            tenantId: Type.Optional(Uuid),
            satelliteId: Type.Optional(Uuid),
            filter: Type.Optional(Type.Union([Type.Literal('with-detections'), Type.Literal('empty')])),
            sortBy: Type.Optional(Type.Union(['date', 'duration', 'detections', 'species', 'chunks'].map((s) => Type.Literal(s)))),
            sortDir: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
            start: Type.Optional(Type.String({ format: 'date-time' })),
            end: Type.Optional(Type.String({ format: 'date-time' })),
            ...Paging,
          },
          { additionalProperties: false },
        ),
        response: { 200: SessionList },
      },
      handler: ({ actor, query }) =>
        sessions.list({
          tenantIds: readableTeams(actor),
          satelliteId: query.satelliteId,
          filter: query.filter,
          start: query.start ? new Date(query.start) : undefined,
          end: query.end ? new Date(query.end) : undefined,
          sortBy: (query.sortBy ?? 'date') as 'date',
          sortDir: query.sortDir ?? 'desc',
          limit: query.limit ?? 50,
          offset: query.offset ?? 0,
        }),
    }),

    defineRoute({
      method: 'GET',
      url: '/sessions/timeline',
      action: 'sessions.timeline',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "One satellite's chunks and listed detections in [from, to) (at most 24 hours)",
      tags: ['sessions'],
      schema: {
        querystring: Type.Object(
          {
            tenantId: Type.Optional(Uuid),
            satelliteId: Uuid,
            from: Type.String({ format: 'date-time' }),
            to: Type.String({ format: 'date-time' }),
          },
          { additionalProperties: false },
        ),
        response: { 200: SessionTimeline },
      },
      handler: ({ actor, query }) => sessions.timeline(actor.teamId, query.satelliteId, new Date(query.from), new Date(query.to)),
    }),
  ];
}
