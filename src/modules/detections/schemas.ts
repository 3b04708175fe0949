import { Type } from 'typebox';
import { Open, Nullable } from '../../core/schemas.ts';

/**
 * A detection as the API shows it (detectionView in service.ts): the list's response schema, so
 * OpenAPI documents it, the dashboard's generated client types it and Fastify serialises it
 * with a compiled serializer instead of JSON.stringify.
 */
export const DetectionView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  tenantId: Type.String({ format: 'uuid' }),
  satelliteId: Type.String({ format: 'uuid' }),
  satelliteName: Nullable(Type.String()),
  audioChunkId: Type.String({ format: 'uuid' }),
  speciesCode: Type.String(),
  scientificName: Type.String(),
  commonName: Type.String(),
  category: Type.String(),
  confidence: Type.Number(),
  calibrated_confidence: Type.Number(),
  detectedAt: Type.String({ format: 'date-time' }),
  startMs: Type.Integer(),
  endMs: Type.Integer(),
  modelId: Type.String(),
  verificationStatus: Type.Union([
    Type.Literal('unverified'),
    Type.Literal('pending_review'),
    Type.Literal('confirmed'),
    Type.Literal('rejected'),
  ]),
  tentative: Type.Boolean(),
  promoted: Type.Boolean(),
  isFirstOfSeason: Type.Boolean(),
  isFirstOfDay: Type.Boolean(),
  isRare: Type.Boolean(),
  rareReason: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  pinned: Type.Boolean(),
  callId: Type.String({ format: 'uuid' }),
  callChunks: Type.Integer(),
  callEndAt: Type.String({ format: 'date-time' }),
  /** The satellites that heard this observation (issue 35 point 3); 1 for a call one satellite heard. */
  recorders: Type.Integer({ minimum: 1 }),
  /** Every chunk the detection's window spans, audioChunkId first (a 5 s window spans two 3 s chunks). */
  spanChunkIds: Type.Array(Type.String({ format: 'uuid' })),
  /** The window's later chunk never came (or its audio was gone): the rest of the window was silence. */
  padded: Type.Boolean(),
  /** The species threshold the detection fell below when recorded (it is then tentative); null: none (issue 35). */
  belowThreshold: Nullable(Type.Number()),
  /** The range filter flagged the species out of range at the satellite that week (issue 35): listed, no alert. */
  outOfRange: Type.Boolean(),
  /** What judged its range: the range model, eBird's recent reports near it (no range model installed), or a team list; null: nothing did. */
  rangeSource: Nullable(Type.Union([Type.Literal('range_model'), Type.Literal('ebird'), Type.Literal('team_list')])),
  /** The range model's score for the species there; null unless the range model judged it. */
  rangeScore: Nullable(Type.Number()),
});

/** A team's aggregation rule (spec §2 Team), as the list's `aggregation` member maps it. */
export const AggregationRuleView = Type.Object({
  enabled: Type.Boolean(),
  count: Type.Integer(),
  windowMinutes: Type.Integer(),
  confidenceHigh: Type.Number(),
  retentionHours: Nullable(Type.Integer()),
});

export const DetectionList = Type.Object({
  detections: Type.Array(DetectionView),
  total: Nullable(Type.Integer()),
  aggregation: Type.Record(Type.String(), AggregationRuleView),
});

/**
 * GET /detections/:id (service.ts get): the list's fields, the storage key and the review
 * summary (review-repo.ts reviewSummary). Open (additionalProperties) so a field added to the
 * service still reaches the client.
 */
export const DetectionDetail = Open({
  ...DetectionView.properties,
  /** What the model's licence asks its detections to credit ("Powered by BirdNET …"); null when nothing. */
  modelAttribution: Nullable(Type.String()),
  storageKey: Nullable(Type.String()),
  votes: Open({ confirm: Type.Integer(), reject: Type.Integer(), unsure: Type.Integer() }),
  myVote: Nullable(Type.String()),
  annotationCount: Type.Integer(),
  commentCount: Type.Integer(),
  /** Each satellite's recording of the observation, the listed one first (observations.ts recordingsOf). */
  recordings: Type.Array(
    Open({
      detectionId: Type.String({ format: 'uuid' }),
      satelliteId: Type.String({ format: 'uuid' }),
      satelliteName: Nullable(Type.String()),
      audioChunkId: Type.String({ format: 'uuid' }),
      confidence: Type.Number(),
      detectedAt: Type.String({ format: 'date-time' }),
      startMs: Type.Integer(),
      endMs: Type.Integer(),
      callChunks: Type.Integer(),
      lead: Type.Boolean(),
    }),
  ),
});

/** GET /detections/summary (summary-service.ts summary): promoted detections per species of the window. */
export const SpeciesSummaryRow = Open({
  speciesCode: Type.String(),
  commonName: Type.String(),
  scientificName: Type.String(),
  count: Type.Integer(),
  maxConfidence: Type.Number(),
  firstDetectedAt: Type.String({ format: 'date-time' }),
  lastDetectedAt: Type.String({ format: 'date-time' }),
});

export const DetectionSummary = Open({
  tenantId: Type.String(),
  start: Type.String({ format: 'date-time' }),
  end: Type.String({ format: 'date-time' }),
  species: Type.Array(SpeciesSummaryRow),
  total_detections: Type.Integer(),
  tentative_detections: Type.Integer(),
  tentative_species: Type.Integer(),
  aggregation: Type.Record(Type.String(), Open({ ...AggregationRuleView.properties })),
});

/** review-repo.ts: votes per outcome. */
export const VoteCountsView = Open({ confirm: Type.Integer(), reject: Type.Integer(), unsure: Type.Integer() });

export const VoteView = Type.Union([Type.Literal('confirm'), Type.Literal('reject'), Type.Literal('unsure')]);

/** GET /detections/votes: the caller's own vote per detection id. */
export const MyVotes = Open({ votes: Type.Record(Type.String(), VoteView) });

const TimelineBucket = Open({ start: Type.String(), count: Type.Integer(), maxConfidence: Type.Number() });

/** GET /detections/species-timeline (summary-service.ts speciesTimeline): counts per species and time bucket. */
export const SpeciesTimeline = Open({
  tenantId: Type.String(),
  start: Type.String(),
  end: Type.String(),
  bucket: Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week')]),
  species: Type.Array(
    Open({
      speciesCode: Type.String(),
      commonName: Type.String(),
      scientificName: Type.String(),
      count: Type.Integer(),
      buckets: Type.Array(TimelineBucket),
      tentative: Type.Optional(Type.Boolean()),
      tentative_count: Type.Optional(Type.Integer()),
      tentative_buckets: Type.Optional(Type.Array(TimelineBucket)),
    }),
  ),
  aggregation: Type.Record(Type.String(), Open({ ...AggregationRuleView.properties })),
});

/** The review state after a vote (verify, annotate). */
const ReviewState = {
  verificationStatus: DetectionView.properties.verificationStatus,
  votes: VoteCountsView,
  myVote: VoteView,
};

export const VerifyReply = Open({ id: Type.String(), ...ReviewState });

export const AnnotationView = Open({
  id: Type.String(),
  detectionId: Type.String(),
  authorId: Nullable(Type.String()),
  authorName: Nullable(Type.String()),
  vote: VoteView,
  timeStartMs: Type.Number(),
  timeEndMs: Type.Number(),
  freqLowHz: Nullable(Type.Number()),
  freqHighHz: Nullable(Type.Number()),
  notes: Nullable(Type.String()),
  createdAt: Type.String(),
});

export const AnnotateReply = Open({ annotation: AnnotationView, ...ReviewState });

export const AnnotationList = Open({ annotations: Type.Array(AnnotationView) });

export const CommentView = Open({
  id: Type.String(),
  detectionId: Type.String(),
  authorId: Nullable(Type.String()),
  authorName: Nullable(Type.String()),
  text: Type.String(),
  createdAt: Type.String(),
});

export const CommentList = Open({ comments: Type.Array(CommentView) });

export const CommentDeleted = Open({ deleted: Type.Boolean(), id: Type.String() });

export const PinState = Open({ id: Type.String(), pinned: Type.Boolean(), pinnedAt: Nullable(Type.String()) });
