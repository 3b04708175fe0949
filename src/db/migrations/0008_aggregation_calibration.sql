-- Temporal aggregation, stitched calls and confidence calibration (issue 5; docs/decisions.md
-- "Aggregation, stitched calls, sessions and calibration").

-- A call is a run of one species' detections from one satellite in adjacent chunks. Its first
-- row is the representative (call_id NULL); each later row points at it (call_id) and is left
-- out of lists and counts. The representative keeps the call's extent.
ALTER TABLE detections
  ADD COLUMN call_id uuid,
  ADD COLUMN call_chunks integer NOT NULL DEFAULT 1,
  ADD COLUMN call_end_at timestamptz;
CREATE INDEX detections_call_idx ON detections (call_id) WHERE call_id IS NOT NULL;
-- Tentative rows are few: promotion flips them by (satellite, species, time), retention sweeps them by age.
CREATE INDEX detections_tentative_idx ON detections (tenant_id, satellite_id, species_code, detected_at) WHERE tentative;
-- Verified rows are few too: calibration fits and coverage read only them.
CREATE INDEX detections_verified_idx ON detections (tenant_id, model_id) WHERE verification_status IN ('confirmed', 'rejected');

-- One isotonic fit per (team, model): buckets [{minConfidence, maxConfidence, calibrated, samples}] in confidence order.
CREATE TABLE calibration_curves (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  model_id text NOT NULL,
  fitted_at timestamptz NOT NULL,
  samples integer NOT NULL,
  buckets jsonb NOT NULL,
  PRIMARY KEY (tenant_id, model_id)
);
