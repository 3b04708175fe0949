-- Field notes (issue 22): what people write in the field beside a recorder. A note may name a
-- satellite; deleting the satellite leaves the note in place, unlinked, with the satellite's
-- name as it was (spec: "alerts and field notes stay with the device unlinked"). A note's
-- photo lives in object storage under photo_key (notes/{team}/{id}.{ext}).
CREATE TABLE field_notes (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  author_id uuid REFERENCES users (id) ON DELETE SET NULL,
  author_name text NOT NULL,
  text text NOT NULL,
  at timestamptz NOT NULL,
  satellite_id uuid REFERENCES satellites (id) ON DELETE SET NULL,
  satellite_name text,
  latitude double precision,
  longitude double precision,
  photo_key text,
  photo_type text,
  photo_bytes integer,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX field_notes_tenant_at_idx ON field_notes (tenant_id, at DESC, id DESC);
CREATE INDEX field_notes_satellite_idx ON field_notes (satellite_id, at DESC) WHERE satellite_id IS NOT NULL;
