-- Issue 34 item 4: recordings a team published for the files it submits (GBIF, iNaturalist,
-- xeno-canto), each opened without a sign-in by GET /api/public/audio/{id}.{signature}. The row
-- holds no token: the signature is an HMAC of the row id under a key derived from the hub secret,
-- so a copy of the database opens nothing. Revoking deletes the row; the chunk's or the team's
-- deletion takes it along. One link per chunk: exporting again names the same link.
CREATE TABLE published_audio (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  chunk_id uuid NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
  published_by uuid REFERENCES users (id) ON DELETE SET NULL,
  published_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX published_audio_chunk_key ON published_audio (tenant_id, chunk_id);
CREATE INDEX published_audio_chunk_idx ON published_audio (chunk_id);
CREATE INDEX published_audio_time_idx ON published_audio (tenant_id, published_at);
