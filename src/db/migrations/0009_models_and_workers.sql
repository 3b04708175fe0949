-- Classifier models (issue 5): the built-in model plus ONNX models hub admins upload. The files
-- live in object storage (model_key, labels_key); the built-in one ships with the code (keys null).
CREATE TABLE inference_models (
  id text PRIMARY KEY,
  name text NOT NULL,
  version text,
  description text,
  enabled boolean NOT NULL DEFAULT true,
  is_default boolean NOT NULL DEFAULT false,
  model_key text,
  labels_key text,
  model_bytes bigint NOT NULL DEFAULT 0,
  model_sha256 text,
  label_count integer NOT NULL,
  unknown_labels jsonb NOT NULL DEFAULT '[]',
  uploaded_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- At most one default: the partial unique index makes a second default a constraint error.
CREATE UNIQUE INDEX inference_models_one_default ON inference_models (is_default) WHERE is_default;
INSERT INTO inference_models (id, name, version, description, enabled, is_default, label_count, created_at, updated_at)
VALUES ('builtin', 'Built-in demonstration model', '1', 'Five synthetic species of the reference satellite (docs/model.md)', true, true, 5, now(), now());

-- GET /detections at a million rows per team (bench/detections.ts). The list orders by
-- (detected_at, id) in one direction: this index reads both directions in order (the 0005 one
-- had id ascending under detected_at descending, which forced a sort). The species filter is on
-- lower(species_code). Every list filters `NOT tentative` and `call_id IS NULL`: carried in the
-- indexes (INCLUDE), counts are index-only scans once autovacuum has marked the pages visible.
CREATE INDEX detections_tenant_time_id_idx ON detections (tenant_id, detected_at DESC, id DESC) INCLUDE (tentative, call_id);
DROP INDEX detections_tenant_time_idx;
-- species_code is included too: PostgreSQL reads an expression index alone only when the column itself is in it.
CREATE INDEX detections_tenant_lower_species_time_idx ON detections (tenant_id, lower(species_code), detected_at DESC, id DESC) INCLUDE (tentative, call_id, species_code);
CREATE INDEX detections_tenant_confidence_incl_idx ON detections (tenant_id, confidence) INCLUDE (tentative, call_id);
DROP INDEX detections_tenant_confidence_idx;

-- speciesSearch is a case-insensitive substring of the common or scientific name: trigram
-- indexes serve it where pg_trgm exists (PostgreSQL with contrib); PGlite has no pg_trgm unless
-- loaded, and there the search scans. The extension lives in public, named with its schema, so
-- hubs in other schemas of one database share it.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
  CREATE INDEX detections_common_name_trgm_idx ON detections USING gin (common_name public.gin_trgm_ops);
  CREATE INDEX detections_scientific_name_trgm_idx ON detections USING gin (scientific_name public.gin_trgm_ops);
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'pg_trgm is not available (%): the species search scans', SQLERRM;
END $$;
