-- Mobile app releases (issue 22): hub-wide packages (.apk, .aab, .ipa) the mobile app offers as updates.

-- version_key is the SemVer without build metadata: two releases of equal precedence
-- (1.2.0+1 and 1.2.0+2) cannot both exist, so "newer than" always has one answer.
-- seq orders uploads made within the same instant.
CREATE TABLE mobile_releases (
  id uuid PRIMARY KEY,
  seq bigserial NOT NULL,
  version text NOT NULL,
  version_key text NOT NULL UNIQUE,
  notes text NOT NULL DEFAULT '',
  force_update boolean NOT NULL DEFAULT false,
  extension text NOT NULL,
  storage_key text NOT NULL,
  file_size bigint NOT NULL,
  sha256 text NOT NULL,
  uploaded_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX mobile_releases_recent_idx ON mobile_releases (created_at DESC, seq DESC);
