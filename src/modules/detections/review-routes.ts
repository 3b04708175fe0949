import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, Uuid } from '../../core/schemas.ts';
import { readableTeams } from '../../core/actor.ts';
import {
  AnnotateReply,
  AnnotationList,
  CommentDeleted,
  CommentList,
  CommentView,
  DetectionSummary,
  MyVotes,
  PinState,
  SpeciesTimeline,
  VerifyReply,
} from './schemas.ts';
import type { ReviewService } from './review-service.ts';
import { type SummaryService, windowOf } from './summary-service.ts';

const VoteValue = Type.Union([Type.Literal('confirm'), Type.Literal('reject'), Type.Literal('unsure')]);
const ofDetection = { resource: 'detection', param: 'id' } as const;
// Votes, annotations and comments are a person's: keys have nobody to count or to name as author.
const memberPerson = access.role('member', { personOnly: true });
const Window = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    start: Type.Optional(Type.String({ format: 'date-time' })),
    end: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export function detectionReviewRoutes(review: ReviewService, summary: SummaryService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/detections/votes',
      action: 'detections.votes.mine',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary: "The caller's votes for the listed detection ids (comma-separated, at most 200): {votes: {detectionId: vote}}",
      tags: ['detections'],
      schema: {
        querystring: Type.Object(
          { ids: Type.String({ minLength: 1, maxLength: 40_000 }), tenantId: Type.Optional(Uuid) },
          { additionalProperties: false },
        ),
        response: { 200: MyVotes },
      },
      handler: ({ actor, query }) => review.myVotes(actor, query.ids, readableTeams(actor)),
    }),

    defineRoute({
      method: 'GET',
      url: '/detections/summary',
      action: 'detections.summary',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary:
        'Promoted detections of the window (start inclusive, end exclusive), one row per species; tentative counts and the aggregation rule',
      tags: ['detections'],
      schema: { querystring: Window, response: { 200: DetectionSummary } },
      handler: ({ actor, query }) => {
        const w = windowOf(query);
        return summary.summary(actor.teamId, w.start, w.end);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/detections/species-timeline',
      action: 'detections.species_timeline',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary:
        'Detections of the window per species in UTC buckets (hour up to 2 days, day up to 92 days, week beyond); tentative ones apart',
      tags: ['detections'],
      schema: { querystring: Window, response: { 200: SpeciesTimeline } },
      handler: ({ actor, query }) => {
        const w = windowOf(query);
        return summary.timeline(actor.teamId, w.start, w.end);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/detections/:id/verify',
      action: 'detections.verify',
      access: memberPerson,
      team: ofDetection,
      audit: ['detection.voted'],
      summary: "Casts or replaces the caller's verification vote; answers the new status and the vote counts",
      tags: ['detections'],
      schema: { params: IdParams, body: Type.Object({ vote: VoteValue }, { additionalProperties: false }), response: { 200: VerifyReply } },
      handler: ({ actor, params, body }) => review.verify(actor, params.id, body.vote),
    }),

    defineRoute({
      method: 'POST',
      url: '/detections/:id/annotate',
      action: 'detections.annotate',
      access: memberPerson,
      team: ofDetection,
      audit: ['detection.annotated'],
      summary: 'Records a spectrogram annotation and the vote it carries (same consensus as verify)',
      tags: ['detections'],
      schema: {
        params: IdParams,
        body: Type.Object(
          {
            vote: VoteValue,
            timeStartMs: Type.Integer(),
            timeEndMs: Type.Integer(),
            freqLowHz: Type.Optional(Type.Number()),
            freqHighHz: Type.Optional(Type.Number()),
            notes: Type.Optional(Type.String({ maxLength: 10_000 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: AnnotateReply },
      },
      handler: async ({ actor, params, body, reply }) => {
        const out = await review.annotate(actor, params.id, body);
        reply.code(201);
        return out;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/detections/:id/annotations',
      action: 'detections.annotations.list',
      access: access.role('viewer'),
      team: ofDetection,
      audit: [],
      summary: 'Annotations of the detection, oldest first',
      tags: ['detections'],
      schema: { params: IdParams, response: { 200: AnnotationList } },
      handler: ({ actor, params }) => review.annotations(actor.teamId, params.id),
    }),

    defineRoute({
      method: 'GET',
      url: '/detections/:id/comments',
      action: 'detections.comments.list',
      access: access.role('viewer'),
      team: ofDetection,
      audit: [],
      summary: 'Comments on the detection, oldest first',
      tags: ['detections'],
      schema: { params: IdParams, response: { 200: CommentList } },
      handler: ({ actor, params }) => review.comments(actor.teamId, params.id),
    }),

    defineRoute({
      method: 'POST',
      url: '/detections/:id/comments',
      action: 'detections.comments.create',
      access: memberPerson,
      team: ofDetection,
      audit: [],
      summary: 'Adds a comment (1 to 2000 characters); answers it with its id',
      tags: ['detections'],
      schema: {
        params: IdParams,
        body: Type.Object({ text: Type.String({ maxLength: 10_000 }) }, { additionalProperties: false }),
        response: { 201: CommentView },
      },
      handler: async ({ actor, params, body, reply }) => {
        const out = await review.addComment(actor, params.id, body.text);
        reply.code(201);
        return out;
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/detections/:id/comments/:commentId',
      action: 'detections.comments.delete',
      access: memberPerson,
      team: ofDetection,
      audit: ['detection.comment_deleted'],
      summary: 'Deletes a comment: the author their own, a team admin or owner any',
      tags: ['detections'],
      schema: { params: Type.Object({ id: Uuid, commentId: Uuid }), response: { 200: CommentDeleted } },
      handler: ({ actor, params }) => review.deleteComment(actor, params.id, params.commentId),
    }),

    defineRoute({
      method: 'POST',
      url: '/detections/:id/pin',
      action: 'detections.pin',
      access: access.role('member'),
      team: ofDetection,
      audit: ['detection.pinned'],
      summary: 'Pins the detection for the team (pinning a pinned one changes nothing)',
      tags: ['detections'],
      schema: { params: IdParams, response: { 200: PinState } },
      handler: ({ actor, params }) => review.setPinned(actor, params.id, true),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/detections/:id/pin',
      action: 'detections.unpin',
      access: access.role('member'),
      team: ofDetection,
      audit: ['detection.unpinned'],
      summary: 'Unpins the detection',
      tags: ['detections'],
      schema: { params: IdParams, response: { 200: PinState } },
      handler: ({ actor, params }) => review.setPinned(actor, params.id, false),
    }),
  ];
}
