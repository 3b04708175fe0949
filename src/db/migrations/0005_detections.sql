-- Detections (spec hub-http-api §2 "Detection"): one row per species the model heard in a chunk.
-- chunk_id has no foreign key: audio retention may delete a chunk while its detections stay.
CREATE TABLE detections (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  chunk_id uuid NOT NULL,
  species_code text NOT NULL,
  scientific_name text NOT NULL,
  common_name text NOT NULL,
  category text NOT NULL,
  confidence real NOT NULL,
  detected_at timestamptz NOT NULL,
  start_ms integer NOT NULL,
  end_ms integer NOT NULL,
  model_id text NOT NULL,
  verification_status text NOT NULL DEFAULT 'unverified'
    CHECK (verification_status IN ('unverified', 'pending_review', 'confirmed', 'rejected')),
  tentative boolean NOT NULL DEFAULT false,
  promoted boolean NOT NULL DEFAULT true,
  is_first_of_season boolean NOT NULL DEFAULT false,
  is_first_of_day boolean NOT NULL DEFAULT false,
  is_rare boolean NOT NULL DEFAULT false,
  rare_reason text,
  created_at timestamptz NOT NULL
);
CREATE INDEX detections_tenant_time_idx ON detections (tenant_id, detected_at DESC, id);
CREATE INDEX detections_tenant_species_time_idx ON detections (tenant_id, species_code, detected_at DESC);
CREATE INDEX detections_tenant_satellite_time_idx ON detections (tenant_id, satellite_id, detected_at DESC);
CREATE INDEX detections_tenant_confidence_idx ON detections (tenant_id, confidence);
-- Idempotence per chunk (the worker skips a chunk that already has detections) and the chunk lookup.
CREATE INDEX detections_chunk_idx ON detections (chunk_id);
