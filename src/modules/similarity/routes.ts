import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, OneOf, Uuid } from '../../core/schemas.ts';
import { LabelProposals, LabelResult, SimilarCalls } from './schemas.ts';
import { DEFAULT_MIN_SIMILARITY, DEFAULT_SIMILAR, MAX_PROPOSALS, MAX_SIMILAR, type SimilarityService } from './service.ts';

const ofDetection = { resource: 'detection', param: 'id' } as const;
/** A bulk label confirms or rejects the species; "unsure" is a person's own doubt about one recording. */
const BulkVote = OneOf(['confirm', 'reject'] as const);
const MinSimilarity = Type.Number({ minimum: -1, maximum: 1, default: DEFAULT_MIN_SIMILARITY });
// Proposals and labels are votes: a person's, as /detections/:id/verify (keys have nobody to count).
const memberPerson = access.role('member', { personOnly: true });

export function similarityRoutes(similarity: SimilarityService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/detections/:id/similar',
      action: 'detections.similar',
      access: access.role('viewer'),
      team: ofDetection,
      audit: [],
      summary:
        "Find similar calls: the team's detections nearest to this one by cosine similarity of the model's window embeddings (same model only), with species, confidence, votes, satellite and time",
      tags: ['detections'],
      schema: {
        params: IdParams,
        querystring: Type.Object(
          { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SIMILAR, default: DEFAULT_SIMILAR })) },
          { additionalProperties: false },
        ),
        response: { 200: SimilarCalls },
      },
      handler: ({ actor, params, query }) => similarity.similarCalls(actor, params.id, query.limit ?? DEFAULT_SIMILAR),
    }),

    defineRoute({
      method: 'GET',
      url: '/detections/:id/similar/proposals',
      action: 'detections.similar.proposals',
      access: memberPerson,
      team: ofDetection,
      audit: [],
      summary:
        'Label all like this, step 1: the votes it would cast — the nearest calls of the same species at minSimilarity or closer that the caller has not given this vote; casts nothing',
      tags: ['detections'],
      schema: {
        params: IdParams,
        querystring: Type.Object(
          {
            vote: BulkVote,
            minSimilarity: Type.Optional(MinSimilarity),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PROPOSALS, default: 50 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: LabelProposals },
      },
      handler: ({ actor, params, query }) =>
        similarity.proposals(actor, params.id, query.vote, query.minSimilarity ?? DEFAULT_MIN_SIMILARITY, query.limit ?? 50),
    }),

    defineRoute({
      method: 'POST',
      url: '/detections/:id/similar/label',
      action: 'detections.similar.label',
      access: memberPerson,
      team: ofDetection,
      audit: ['detection.voted'],
      summary:
        'Label all like this, step 2: casts the vote on the proposals the caller kept, each through the review rules (consensus, audit entry); ids no longer proposed are skipped',
      tags: ['detections'],
      schema: {
        params: IdParams,
        body: Type.Object(
          {
            vote: BulkVote,
            detectionIds: Type.Array(Uuid, { minItems: 1, maxItems: MAX_PROPOSALS }),
            minSimilarity: Type.Optional(MinSimilarity),
          },
          { additionalProperties: false },
        ),
        response: { 200: LabelResult },
      },
      handler: ({ actor, params, body }) =>
        similarity.label(actor, params.id, body.vote, body.detectionIds, body.minSimilarity ?? DEFAULT_MIN_SIMILARITY),
    }),
  ];
}
