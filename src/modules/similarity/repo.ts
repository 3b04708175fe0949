/**
 * The SQL of search by sound (issue 35 point 4). Embeddings are the detections module's table
 * (detection_embeddings, migrations 0026 and 0035); this module reads it, and creates the HNSW
 * index of each model where pgvector is in force.
 */
import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import { col, shape, type Db } from '../../infra/db/index.ts';

/** bytea: a Buffer from node-postgres, a Uint8Array from PGlite. */
const bytes = () => Type.Unsafe<Uint8Array>({ 'x-column': 'bytea' });

const Found = shape({ found: col.bool() });
const Source = shape({
  modelId: col.text(),
  dims: col.int(),
  speciesCode: col.text(),
  callId: col.nullable(col.text()),
  /** pgvector's text of the embedding; null where pgvector is not in force. */
  embedding: col.nullable(col.text()),
  vector: bytes(),
});
const Near = shape({ id: col.text(), distance: col.num() });
const Stored = shape({ id: col.text(), vector: bytes() });

/** One neighbour as the API shows it: what the detection list shows of it, and its votes. */
export const Neighbour = shape({
  id: col.text(),
  satelliteId: col.text(),
  satelliteName: col.nullable(col.text()),
  audioChunkId: col.text(),
  speciesCode: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  category: col.text(),
  confidence: col.num(),
  detectedAt: col.text(),
  verificationStatus: col.oneOf(['unverified', 'pending_review', 'confirmed', 'rejected'] as const),
  tentative: col.bool(),
  callId: col.nullable(col.text()),
  confirm: col.int(),
  reject: col.int(),
  unsure: col.int(),
  /** The caller's vote (null: none, or no person asked). */
  myVote: col.nullable(col.oneOf(['confirm', 'reject', 'unsure'] as const)),
});

/** A model id inside DDL and the index predicate (a literal, so the planner matches the partial index). */
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** One index per model and length: the name from a hash (model ids are free text). */
export const indexName = (modelId: string, dims: number) =>
  `detection_embeddings_hnsw_${createHash('sha256').update(`${modelId}\u0000${dims}`).digest('hex').slice(0, 16)}`;
const asVector = (dims: number) => `embedding::vector(${Math.trunc(dims)})`;

export function createSimilarityRepo(db: Db) {
  return {
    /** pgvector is in force: migration 0035 added the `embedding` column (else the exact scan). */
    hasVectorColumn: async () =>
      (
        await db.one(
          Found,
          `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'detection_embeddings'::regclass
             AND attname = 'embedding' AND NOT attisdropped) AS found`,
        )
      ).found,

    /**
     * The HNSW index of one model's embeddings (cosine), partial on the model and length: pgvector
     * indexes one length per index, and a search reads one model's embeddings only. Idempotent;
     * two processes creating it at once take turns.
     */
    ensureIndex: (modelId: string, dims: number) =>
      db.tx(async (tx) => {
        if (tx.kind === 'postgres') await tx.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`similarity-index:${modelId}`]);
        await tx.run(
          `CREATE INDEX IF NOT EXISTS ${indexName(modelId, dims)} ON detection_embeddings
             USING hnsw ((${asVector(dims)}) vector_cosine_ops) WHERE model_id = ${literal(modelId)} AND dims = ${Math.trunc(dims)}`,
        );
      }),

    /** The models that keep an embedding, and its length: each gets its index at start-up. */
    embeddingModels: () =>
      db.query(
        shape({ modelId: col.text(), dims: col.int() }),
        'SELECT id AS "modelId", embedding_size AS dims FROM inference_models WHERE embedding_size > 0',
      ),

    /** The detection's own embedding, species and call (null: not the team's, or it has none). */
    source: (tenantId: string, detectionId: string, withVector: boolean) =>
      db.maybeOne(
        Source,
        `SELECT e.model_id AS "modelId", e.dims, d.species_code AS "speciesCode", d.call_id AS "callId",
           ${withVector ? 'e.embedding::text' : 'NULL::text'} AS embedding, e.vector
         FROM detection_embeddings e JOIN detections d ON d.id = e.detection_id
         WHERE e.detection_id = $1 AND d.tenant_id = $2 AND e.tenant_id = $2`,
        [detectionId, tenantId],
      ),

    /**
     * The `limit` nearest embeddings of the team's by cosine distance through the model's HNSW
     * index. The team is a filter on the index's candidates: iterative scan (pgvector 0.8) goes
     * on past ef_search until `limit` rows of the team are found (relaxed order: sorted again by
     * the caller).
     */
    nearestByIndex: (q: { tenantId: string; modelId: string; dims: number; embedding: string; exclude: string[]; limit: number }) =>
      db.tx(async (tx) => {
        await tx.run(`SET LOCAL hnsw.ef_search = ${Math.max(40, Math.min(1000, q.limit * 2))}`);
        await tx.run(`SET LOCAL hnsw.iterative_scan = relaxed_order`);
        // Without fresh statistics (PGlite has no autovacuum) the planner takes the team's btree and
        // sorts every row: exact, and linear. No sort leaves it the HNSW index's ordered scan.
        await tx.run(`SET LOCAL enable_sort = off`);
        return tx.query(
          Near,
          `SELECT e.detection_id AS id, (${asVector(q.dims)} <=> $2::vector(${Math.trunc(q.dims)}))::float8 AS distance
           FROM detection_embeddings e
           WHERE e.model_id = ${literal(q.modelId)} AND e.dims = ${Math.trunc(q.dims)} AND e.tenant_id = $1
             AND e.detection_id <> ALL($3::uuid[])
           ORDER BY ${asVector(q.dims)} <=> $2::vector(${Math.trunc(q.dims)})
           LIMIT $4`,
          [q.tenantId, q.embedding, q.exclude, q.limit],
        );
      }),

    /**
     * The exact `limit` nearest by pgvector's cosine over the team's rows (the team's btree, then a
     * sort: `+ 0` keeps the HNSW index out): for a team the index's filtered scan found too few of.
     */
    nearestExact: (q: { tenantId: string; modelId: string; dims: number; embedding: string; exclude: string[]; limit: number }) =>
      db.query(
        Near,
        `SELECT e.detection_id AS id, (${asVector(q.dims)} <=> $2::vector(${Math.trunc(q.dims)}))::float8 AS distance
         FROM detection_embeddings e
         WHERE e.model_id = $5 AND e.dims = ${Math.trunc(q.dims)} AND e.tenant_id = $1 AND e.detection_id <> ALL($3::uuid[])
         ORDER BY (${asVector(q.dims)} <=> $2::vector(${Math.trunc(q.dims)})) + 0
         LIMIT $4`,
        [q.tenantId, q.embedding, q.exclude, q.limit, q.modelId],
      ),

    /** One batch of the team's embeddings of the model after `after` (detection id order): the exact scan. */
    batchAfter: (q: { tenantId: string; modelId: string; dims: number; after: string; limit: number }) =>
      db.query(
        Stored,
        `SELECT detection_id AS id, vector FROM detection_embeddings
         WHERE tenant_id = $1 AND model_id = $2 AND dims = $3 AND detection_id > $4::uuid
         ORDER BY detection_id LIMIT $5`,
        [q.tenantId, q.modelId, q.dims, q.after, q.limit],
      ),

    /**
     * The neighbours' rows, kept to what the team's list shows: its own detections, one row per
     * call (the call's first row), categories the team shows.
     */
    neighbours: (tenantId: string, ids: string[], categories: readonly string[], userId: string | null) =>
      db.query(
        Neighbour,
        `SELECT d.id, d.satellite_id AS "satelliteId", s.name AS "satelliteName", d.chunk_id AS "audioChunkId",
           d.species_code AS "speciesCode", d.common_name AS "commonName", d.scientific_name AS "scientificName", d.category,
           d.confidence, to_char(d.detected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "detectedAt",
           d.verification_status AS "verificationStatus", d.tentative, d.call_id AS "callId",
           (SELECT count(*)::int FROM detection_votes v WHERE v.detection_id = d.id AND v.vote = 'confirm') AS confirm,
           (SELECT count(*)::int FROM detection_votes v WHERE v.detection_id = d.id AND v.vote = 'reject') AS reject,
           (SELECT count(*)::int FROM detection_votes v WHERE v.detection_id = d.id AND v.vote = 'unsure') AS unsure,
           (SELECT v.vote FROM detection_votes v WHERE v.detection_id = d.id AND v.user_id = $4::uuid) AS "myVote"
         FROM detections d LEFT JOIN satellites s ON s.id = d.satellite_id
         WHERE d.tenant_id = $1 AND d.id = ANY($2::uuid[]) AND d.category = ANY($3::text[]) AND d.call_id IS NULL`,
        [tenantId, ids, [...categories], userId],
      ),
  };
}

export type SimilarityRepo = ReturnType<typeof createSimilarityRepo>;
