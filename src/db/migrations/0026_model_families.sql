-- Model families (issue 31): what a model listens to, read from its input's length at upload
-- (src/infra/classifier/family.ts): 3 s at 48 kHz (BirdNET 2.4), 5 s at 32 kHz (BirdNET 3.0,
-- Perch 2), or a rate and window the upload gave. Models stored before are BirdNET 2.4's shape:
-- the defaults say so.
ALTER TABLE inference_models
  ADD COLUMN family text NOT NULL DEFAULT '3s-48k' CHECK (family IN ('3s-48k', '5s-32k', 'custom')),
  ADD COLUMN sample_rate integer NOT NULL DEFAULT 48000,
  ADD COLUMN window_ms integer NOT NULL DEFAULT 3000,
  ADD COLUMN input_samples integer NOT NULL DEFAULT 144000,
  -- The output kept as each window's embedding (null: the model has none) and its length.
  ADD COLUMN embedding_output text,
  ADD COLUMN embedding_size integer NOT NULL DEFAULT 0;

-- A window longer than a chunk is assembled from the chunk and the ones after it (src/inference/windows.ts).
-- span_chunk_ids: every chunk the window spans, its first (chunk_id) first; null for a window inside
-- one chunk (every row before this migration). padded: a neighbour never came (or its audio was gone)
-- and the window was completed with silence.
ALTER TABLE detections
  ADD COLUMN span_chunk_ids uuid[],
  ADD COLUMN padded boolean NOT NULL DEFAULT false;

-- The embedding of the window a detection came from (models with an embedding output), kept for
-- later use (similarity search, clustering). Float32 little-endian values; one row per detection,
-- so it goes with its detection. Only windows that gave a stored detection have one.
CREATE TABLE detection_embeddings (
  detection_id uuid PRIMARY KEY REFERENCES detections (id) ON DELETE CASCADE,
  model_id text NOT NULL,
  dims integer NOT NULL,
  vector bytea NOT NULL
);
