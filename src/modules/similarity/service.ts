/**
 * Search by sound (issue 35 point 4): "Find similar calls" answers a detection's nearest
 * recordings among its own team's, by cosine similarity of the model's window embeddings
 * (migration 0026), among embeddings of the same model only (each model has its own length and
 * space). "Label all like this" proposes the caller's vote for the neighbours of the same species,
 * and casts the ones the caller confirms through the review rules (review-service.ts verify: the
 * consensus, decisive admin votes, an audit entry per vote) — never a vote the caller did not pick.
 *
 * Two engines (docs/model.md "Search by sound"): where pgvector is in force (PGlite always,
 * PostgreSQL with the extension) an HNSW index per model answers; elsewhere an exact scan
 * streams the team's embeddings of the model in bounded batches and keeps the best.
 */
import type { Db } from '../../infra/db/index.ts';
import type { TeamActor } from '../../core/actor.ts';
import { badRequest, forbidden } from '../../core/errors.ts';
import { createSimilarityRepo, type Neighbour } from './repo.ts';
import type { RowOf } from '../../infra/db/index.ts';

export type SimilarityIndex = 'hnsw' | 'exact';
type Vote = 'confirm' | 'reject' | 'unsure';
export const DEFAULT_SIMILAR = 10;
export const MAX_SIMILAR = 50;
/** A bulk label looks at most this many neighbours, and casts at most this many votes at once. */
export const MAX_PROPOSALS = 100;
export const DEFAULT_MIN_SIMILARITY = 0.8;
/** Rows the exact scan reads at once: about 4 MB of BirdNET embeddings. */
const SCAN_BATCH = 1000;
/** Candidates past `limit`: room for rows the list's rules then leave out (a call's later rows, hidden categories). */
const SLACK = 20;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

type NeighbourRow = RowOf<typeof Neighbour>;
export interface SimilarCall {
  id: string;
  similarity: number;
  satelliteId: string;
  satelliteName: string | null;
  audioChunkId: string;
  speciesCode: string;
  commonName: string;
  scientificName: string;
  category: string;
  confidence: number;
  detectedAt: string;
  verificationStatus: NeighbourRow['verificationStatus'];
  tentative: boolean;
  votes: { confirm: number; reject: number; unsure: number };
  myVote: Vote | null;
}

/** Cosine similarity of two float32 little-endian byte strings (0 when either is all zeros). */
export function cosineOf(query: Float32Array, queryNorm: number, bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let dot = 0;
  let norm = 0;
  for (let i = 0; i < query.length; i++) {
    const v = view.getFloat32(i * 4, true);
    dot += v * query[i];
    norm += v * v;
  }
  return queryNorm === 0 || norm === 0 ? Number.NaN : dot / (queryNorm * Math.sqrt(norm));
}

export function decode(bytes: Uint8Array, dims: number): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Float32Array.from({ length: dims }, (_, i) => view.getFloat32(i * 4, true));
}

/** Which search is in force (system status reads it too): asked once, again after a failure. */
export function createSimilarityIndexReader(db: Db): () => Promise<SimilarityIndex> {
  const repo = createSimilarityRepo(db);
  let mode: Promise<SimilarityIndex> | null = null;
  return () =>
    (mode ??= repo.hasVectorColumn().then(
      (has) => (has ? 'hnsw' : 'exact'),
      (err: unknown) => {
        mode = null;
        throw err;
      },
    ));
}

export function createSimilarityService(deps: {
  db: Db;
  /** The categories the team shows (its list leaves the others out, so does this). */
  visibleCategories: (tenantId: string) => Promise<readonly string[]>;
  /** The review rules' vote (review-service.ts verify). */
  verify: (actor: TeamActor, detectionId: string, vote: Vote) => Promise<unknown>;
}) {
  const repo = createSimilarityRepo(deps.db);
  const indexes = new Map<string, Promise<void>>();
  const index = createSimilarityIndexReader(deps.db);

  /** The model's HNSW index, created once per process (a model's first search builds it over what is stored). */
  const ensureIndex = (modelId: string, dims: number) => {
    const key = `${modelId}\u0000${dims}`;
    let p = indexes.get(key);
    if (!p) {
      p = repo.ensureIndex(modelId, dims).catch((err: unknown) => {
        indexes.delete(key);
        throw err;
      });
      indexes.set(key, p);
    }
    return p;
  };

  /** The exact scan: every embedding of the team's of the model, in batches, the best `keep` kept. */
  async function scan(q: { tenantId: string; modelId: string; dims: number; vector: Uint8Array; exclude: Set<string>; keep: number }) {
    const query = decode(q.vector, q.dims);
    const queryNorm = Math.sqrt(query.reduce((s, v) => s + v * v, 0));
    const best: Array<{ id: string; similarity: number }> = [];
    let after = FIRST_ID;
    for (;;) {
      const rows = await repo.batchAfter({ tenantId: q.tenantId, modelId: q.modelId, dims: q.dims, after, limit: SCAN_BATCH });
      for (const r of rows) {
        if (q.exclude.has(r.id)) continue;
        const similarity = cosineOf(query, queryNorm, r.vector);
        if (Number.isNaN(similarity)) continue;
        if (best.length === q.keep && similarity <= best[best.length - 1].similarity) continue;
        let at = best.length;
        while (at > 0 && best[at - 1].similarity < similarity) at--;
        best.splice(at, 0, { id: r.id, similarity });
        if (best.length > q.keep) best.pop();
      }
      if (rows.length < SCAN_BATCH) return best;
      after = rows[rows.length - 1].id;
    }
  }

  /** The caller: its team, and the person whose own votes the answer shows. */
  type Asker = Pick<TeamActor, 'teamId' | 'userId'>;

  async function similar(actor: Asker, detectionId: string, limit: number) {
    const tenantId = actor.teamId;
    const how = await index();
    const source = await repo.source(tenantId, detectionId, how === 'hnsw');
    if (!source) {
      // A detection of another team reads as missing (the route resolved the team from it, so it is the team's).
      return { source: null, index: how, similar: [] as SimilarCall[] };
    }
    const exclude = [detectionId, ...(source.callId ? [source.callId] : [])];
    const keep = limit + SLACK;
    let found: Array<{ id: string; similarity: number }>;
    if (how === 'hnsw' && source.embedding !== null) {
      await ensureIndex(source.modelId, source.dims);
      const q = { tenantId, modelId: source.modelId, dims: source.dims, embedding: source.embedding, exclude, limit: keep };
      let near = await repo.nearestByIndex(q);
      // Fewer than asked: the team has fewer, or is a small part of the model's embeddings and the
      // index's filtered scan gave up (hnsw.max_scan_tuples). Either way its own rows are few: exact.
      if (near.length < keep) near = await repo.nearestExact(q);
      found = near.filter((n) => Number.isFinite(n.distance)).map((n) => ({ id: n.id, similarity: 1 - n.distance }));
    } else {
      found = await scan({ tenantId, modelId: source.modelId, dims: source.dims, vector: source.vector, exclude: new Set(exclude), keep });
    }
    const rows = found.length
      ? await repo.neighbours(
          tenantId,
          found.map((f) => f.id),
          await deps.visibleCategories(tenantId),
          actor.userId,
        )
      : [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const calls: SimilarCall[] = [];
    // Relaxed order from the index: sorted here, most similar first (ties by id, so answers repeat).
    for (const f of [...found].sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id))) {
      const r = byId.get(f.id);
      if (!r) continue;
      calls.push({
        id: r.id,
        similarity: Math.round(f.similarity * 1e6) / 1e6,
        satelliteId: r.satelliteId,
        satelliteName: r.satelliteName,
        audioChunkId: r.audioChunkId,
        speciesCode: r.speciesCode,
        commonName: r.commonName,
        scientificName: r.scientificName,
        category: r.category,
        confidence: r.confidence,
        detectedAt: r.detectedAt,
        verificationStatus: r.verificationStatus,
        tentative: r.tentative,
        votes: { confirm: r.confirm, reject: r.reject, unsure: r.unsure },
        myVote: r.myVote,
      });
      if (calls.length === limit) break;
    }
    return { source, index: how, similar: calls };
  }

  /**
   * What "label all like this" would vote: the neighbours within `limit` at `minSimilarity` or
   * closer that carry the detection's own species (a vote confirms or rejects the species a
   * detection names, so only those can take it), less those the caller already gave this vote.
   */
  async function proposals(actor: TeamActor, detectionId: string, vote: Vote, minSimilarity: number, limit: number) {
    if (!actor.userId) throw forbidden('Only a signed-in person can do this', 'PERSON_REQUIRED');
    const found = await similar(actor, detectionId, limit);
    const speciesCode = found.source?.speciesCode ?? null;
    const list = found.similar.filter((c) => c.similarity >= minSimilarity && c.speciesCode === speciesCode && c.myVote !== vote);
    return { index: found.index, modelId: found.source?.modelId ?? null, speciesCode, vote, minSimilarity, proposals: list };
  }

  return {
    index,

    /**
     * At start-up (src/runtime.ts): the HNSW index of every model that keeps embeddings, so no
     * search pays for a build (a model installed later gets its index at its first search).
     */
    async prepare(): Promise<string[]> {
      if ((await index()) !== 'hnsw') return [];
      const models = await repo.embeddingModels();
      for (const m of models) await ensureIndex(m.modelId, m.dims);
      return models.map((m) => m.modelId);
    },

    /** GET /detections/:id/similar. */
    async similarCalls(actor: Pick<TeamActor, 'teamId' | 'userId'>, detectionId: string, limit = DEFAULT_SIMILAR) {
      const found = await similar(actor, detectionId, Math.min(limit, MAX_SIMILAR));
      return { modelId: found.source?.modelId ?? null, searchable: found.source !== null, index: found.index, similar: found.similar };
    },

    /** GET /detections/:id/similar/proposals: the list the person reviews; nothing is cast. */
    proposals: (actor: TeamActor, detectionId: string, vote: Vote, minSimilarity: number, limit: number) =>
      proposals(actor, detectionId, vote, minSimilarity, Math.min(limit, MAX_PROPOSALS)),

    /**
     * POST /detections/:id/similar/label: casts the vote on the ids the person kept of the
     * proposals, each through the review rules. An id the proposals (recomputed now, at their
     * widest) do not hold is skipped, said so, never voted.
     */
    async label(actor: TeamActor, detectionId: string, vote: Vote, ids: readonly string[], minSimilarity: number) {
      const wanted = [...new Set(ids)];
      if (wanted.length === 0) throw badRequest('Name at least one detection to label');
      if (wanted.length > MAX_PROPOSALS) throw badRequest(`At most ${MAX_PROPOSALS} detections at once`);
      const proposed = new Set((await proposals(actor, detectionId, vote, minSimilarity, MAX_PROPOSALS)).proposals.map((p) => p.id));
      const voted: string[] = [];
      const skipped: string[] = [];
      for (const id of wanted) {
        if (!proposed.has(id)) {
          skipped.push(id);
          continue;
        }
        await deps.verify(actor, id, vote);
        voted.push(id);
      }
      return { vote, voted, skipped };
    },
  };
}

export type SimilarityService = ReturnType<typeof createSimilarityService>;
