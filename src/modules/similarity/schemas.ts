import { Type } from 'typebox';
import { Nullable, OneOf, Uuid } from '../../core/schemas.ts';

/** Search by sound (issue 35 point 4): response schemas for the generated client. */

const VoteValue = OneOf(['confirm', 'reject', 'unsure'] as const);
export const SimilarityIndexValue = OneOf(['hnsw', 'exact'] as const);

export const SimilarCallView = Type.Object({
  id: Uuid,
  /** Cosine similarity of the two windows' embeddings (1: the same direction). */
  similarity: Type.Number(),
  satelliteId: Uuid,
  satelliteName: Nullable(Type.String()),
  audioChunkId: Uuid,
  speciesCode: Type.String(),
  commonName: Type.String(),
  scientificName: Type.String(),
  category: Type.String(),
  confidence: Type.Number(),
  detectedAt: Type.String({ format: 'date-time' }),
  verificationStatus: OneOf(['unverified', 'pending_review', 'confirmed', 'rejected'] as const),
  tentative: Type.Boolean(),
  votes: Type.Object({ confirm: Type.Integer(), reject: Type.Integer(), unsure: Type.Integer() }),
  /** The caller's own vote on it; null without one. */
  myVote: Nullable(VoteValue),
});

export const SimilarCalls = Type.Object({
  /** The model whose embeddings were compared; null when the detection has no embedding. */
  modelId: Nullable(Type.String()),
  /** false: the detection's model keeps no embedding (or it came before embeddings were kept). */
  searchable: Type.Boolean(),
  /** hnsw: pgvector's index answered; exact: a full scan of the team's embeddings of the model (no pgvector). */
  index: SimilarityIndexValue,
  similar: Type.Array(SimilarCallView),
});

export const LabelProposals = Type.Object({
  modelId: Nullable(Type.String()),
  index: SimilarityIndexValue,
  /** The detection's species: only neighbours that name it can take the vote. */
  speciesCode: Nullable(Type.String()),
  vote: VoteValue,
  minSimilarity: Type.Number(),
  proposals: Type.Array(SimilarCallView),
});

export const LabelResult = Type.Object({
  vote: VoteValue,
  /** Voted, each through the review rules (consensus, audit entry). */
  voted: Type.Array(Uuid),
  /** Not among the proposals now (less similar, another species, or already given this vote): not voted. */
  skipped: Type.Array(Uuid),
});
