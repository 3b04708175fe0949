-- Species photos (issue 20): credited photos from upstream providers, stored once in object storage.
-- species_image_status holds each requested species' download state; species_images one row per
-- photo, in gallery order (position), with the credit that must be shown wherever the photo is.
CREATE TABLE species_image_status (
  species_code text PRIMARY KEY,
  status text NOT NULL CHECK (status IN ('pending', 'ready', 'failed', 'none')),
  -- Bumped on every queueing, so a retry gets a job id the queue has not seen.
  generation integer NOT NULL DEFAULT 0,
  error text,
  updated_at timestamptz NOT NULL
);
CREATE INDEX species_image_status_status_idx ON species_image_status (status);

CREATE TABLE species_images (
  id uuid PRIMARY KEY,
  species_code text NOT NULL,
  position integer NOT NULL,
  provider text NOT NULL,
  source_id text NOT NULL,
  storage_key text NOT NULL,
  content_type text NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  original_bytes integer NOT NULL,
  display_key text NOT NULL,
  display_bytes integer NOT NULL,
  display_width integer NOT NULL,
  display_height integer NOT NULL,
  author text NOT NULL,
  licence text NOT NULL,
  licence_url text,
  source_url text NOT NULL,
  -- The bird's position as fractions of width and height; null while the photo awaits analysis.
  focus_x double precision,
  focus_y double precision,
  analysed_at timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (species_code, provider, source_id)
);
CREATE INDEX species_images_code_idx ON species_images (species_code, position);
