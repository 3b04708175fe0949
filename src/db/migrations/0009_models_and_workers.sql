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

-- GET /detections at a million rows per team (bench/detections.ts): the species search is a
-- case-insensitive substring of the names; lower() indexes serve the species filter.
CREATE INDEX detections_tenant_lower_species_time_idx ON detections (tenant_id, lower(species_code), detected_at DESC, id DESC);
CREATE INDEX detections_tenant_confidence_time_idx ON detections (tenant_id, confidence, detected_at DESC, id DESC);
