-- Issue 35 item 2: per-team, per-species minimum confidence learned from the team's votes
-- (src/modules/species-thresholds, docs/model.md "Per-species thresholds").
-- species_thresholds: the one in force per species. mode 'learned' applies `learned` (null: not
-- enough votes yet), 'pinned' applies `pinned` (an admin's value), 'none' applies nothing (an
-- admin's reset). The last computation's figures stay beside it whatever the mode.
CREATE TABLE species_thresholds (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  species_code text NOT NULL,
  mode text NOT NULL DEFAULT 'learned' CHECK (mode IN ('learned', 'pinned', 'none')),
  learned double precision,
  pinned double precision,
  computed_at timestamptz,
  votes integer NOT NULL DEFAULT 0,
  confirmed integer NOT NULL DEFAULT 0,
  rejected integer NOT NULL DEFAULT 0,
  -- Observed precision of the verified detections at or above `learned` (null without one).
  precision double precision,
  updated_at timestamptz NOT NULL,
  updated_by uuid REFERENCES users (id) ON DELETE SET NULL,
  PRIMARY KEY (tenant_id, species_code)
);

-- Every recomputation: when, what it found, from how many votes.
CREATE TABLE species_threshold_history (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  species_code text NOT NULL,
  computed_at timestamptz NOT NULL,
  threshold double precision,
  votes integer NOT NULL,
  confirmed integer NOT NULL,
  rejected integer NOT NULL,
  precision double precision,
  lower_bound double precision,
  target double precision NOT NULL,
  reason text NOT NULL
);
CREATE INDEX species_threshold_history_idx ON species_threshold_history (tenant_id, species_code, computed_at DESC);

-- The species threshold a detection fell below when it was recorded (stored tentative); null: it did not.
ALTER TABLE detections ADD COLUMN below_threshold double precision;

-- A species' verified detections by confidence, read on every vote that settles or unsettles one.
CREATE INDEX detections_verified_species_idx ON detections (tenant_id, species_code, confidence)
  WHERE verification_status IN ('confirmed', 'rejected');
