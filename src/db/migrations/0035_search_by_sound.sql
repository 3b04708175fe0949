-- Search by sound (issue 35 point 4): "Find similar calls" looks for a detection's nearest
-- neighbours among its team's window embeddings (migration 0026) of the same model, by cosine.

-- The team of each embedding, so a search reads one team's rows without joining detections
-- (the team never changes: a detection stays with its team; deleting it deletes the embedding).
ALTER TABLE detection_embeddings ADD COLUMN tenant_id uuid;
UPDATE detection_embeddings e SET tenant_id = d.tenant_id FROM detections d WHERE d.id = e.detection_id;
ALTER TABLE detection_embeddings ALTER COLUMN tenant_id SET NOT NULL;
-- The exact scan (a PostgreSQL without pgvector) reads one team's embeddings of one model in
-- detection_id order, in batches (src/modules/similarity/repo.ts).
CREATE INDEX detection_embeddings_team_model ON detection_embeddings (tenant_id, model_id, detection_id);

-- The stored float32 little-endian bytes as real[] (IEEE 754 single precision decoded by hand:
-- PostgreSQL has no cast from bytea). Non-finite values (never written by a model) become 0.
CREATE FUNCTION chorus_float32le(b bytea) RETURNS real[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(
    CASE
      WHEN ex = 255 THEN 0::real
      WHEN ex = 0 THEN ((CASE WHEN sg = 1 THEN -1 ELSE 1 END) * mant * 2::float8 ^ (-149))::real
      ELSE ((CASE WHEN sg = 1 THEN -1 ELSE 1 END) * (1 + mant / 8388608.0::float8) * 2::float8 ^ (ex - 127))::real
    END ORDER BY i), '{}')
  FROM (
    SELECT i, (w >> 31) & 1 AS sg, (w >> 23) & 255 AS ex, (w & 8388607)::float8 AS mant
    FROM (
      SELECT i, get_byte(b, 4 * i)::bigint | (get_byte(b, 4 * i + 1)::bigint << 8)
                | (get_byte(b, 4 * i + 2)::bigint << 16) | (get_byte(b, 4 * i + 3)::bigint << 24) AS w
      FROM generate_series(0, length(b) / 4 - 1) AS i
    ) words
  ) parts
$$;

-- Where pgvector can be had (PGlite always: src/infra/db/pglite-worker.mjs loads it; PostgreSQL
-- when the server has the package), each embedding is kept a second time as a pgvector `vector`,
-- filled from the bytes by a trigger, so every writer (the worker, a restore) fills it; each
-- model's embeddings get their own HNSW index, created by the hub (one length per index). A
-- PostgreSQL without pgvector (or whose user may not create it) keeps the bytes only and
-- searches by an exact scan. src/modules/similarity/repo.ts reads which is in force from the
-- column's presence.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    RETURN;
  END IF;
  BEGIN
    CREATE EXTENSION IF NOT EXISTS vector;
  EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'pgvector is installed but this user may not create it: search by sound scans exactly';
    RETURN;
  END;
  EXECUTE 'ALTER TABLE detection_embeddings ADD COLUMN embedding vector';
  EXECUTE $f$
    CREATE FUNCTION chorus_embedding_fill() RETURNS trigger LANGUAGE plpgsql AS $t$
    BEGIN
      IF NEW.embedding IS NULL THEN
        NEW.embedding := chorus_float32le(NEW.vector)::vector;
      END IF;
      RETURN NEW;
    END
    $t$
  $f$;
  EXECUTE 'CREATE TRIGGER detection_embeddings_fill BEFORE INSERT ON detection_embeddings
           FOR EACH ROW EXECUTE FUNCTION chorus_embedding_fill()';
  EXECUTE 'UPDATE detection_embeddings SET embedding = chorus_float32le(vector)::vector';
END
$$;
