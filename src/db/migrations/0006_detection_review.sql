-- Review of detections (spec hub-http-api §2 "Vote, annotation, comment", §4 "Detections"):
-- verification votes, annotations, comments and the team's pin.

-- One vote per person per detection; voting again replaces it. `decisive` records whether the
-- voter was a team admin or owner (or hub admin) when voting, so the consensus can be
-- recomputed later without asking what their role was then.
CREATE TABLE detection_votes (
  detection_id uuid NOT NULL REFERENCES detections (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  vote text NOT NULL CHECK (vote IN ('confirm', 'reject', 'unsure')),
  decisive boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (detection_id, user_id)
);
-- GET /detections/votes (the caller's votes) and calibration (per team).
CREATE INDEX detection_votes_user_idx ON detection_votes (user_id, detection_id);
CREATE INDEX detection_votes_tenant_idx ON detection_votes (tenant_id);

-- Authors become null when their account is erased; the text stays with the detection.
CREATE TABLE detection_comments (
  id uuid PRIMARY KEY,
  detection_id uuid NOT NULL REFERENCES detections (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  author_id uuid REFERENCES users (id) ON DELETE SET NULL,
  text text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX detection_comments_detection_idx ON detection_comments (detection_id, created_at, id);

CREATE TABLE detection_annotations (
  id uuid PRIMARY KEY,
  detection_id uuid NOT NULL REFERENCES detections (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  author_id uuid REFERENCES users (id) ON DELETE SET NULL,
  vote text NOT NULL CHECK (vote IN ('confirm', 'reject', 'unsure')),
  time_start_ms integer NOT NULL,
  time_end_ms integer NOT NULL,
  freq_low_hz double precision,
  freq_high_hz double precision,
  notes text,
  created_at timestamptz NOT NULL
);
CREATE INDEX detection_annotations_detection_idx ON detection_annotations (detection_id, created_at, id);

-- A pin is the team's, not a person's: one flag on the row, with who set it and when.
ALTER TABLE detections ADD COLUMN pinned_at timestamptz;
ALTER TABLE detections ADD COLUMN pinned_by uuid REFERENCES users (id) ON DELETE SET NULL;
