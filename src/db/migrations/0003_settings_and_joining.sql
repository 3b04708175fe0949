-- Satellites as far as settings need them (the satellites issue adds the rest), their config
-- history, and the ways people join teams: join requests and per-team blocks.

CREATE TABLE satellites (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name text NOT NULL,
  device_id text,
  registered_by uuid REFERENCES users (id) ON DELETE SET NULL,
  config_locked boolean NOT NULL DEFAULT false,
  archived boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX satellites_tenant_idx ON satellites (tenant_id);

CREATE TABLE satellite_config_history (
  id uuid PRIMARY KEY,
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL,
  changed_at timestamptz NOT NULL,
  source text NOT NULL CHECK (source IN ('web', 'device', 'team', 'hub')),
  changed_by uuid,
  changes jsonb NOT NULL,
  config jsonb NOT NULL
);
CREATE INDEX satellite_config_history_sat_idx ON satellite_config_history (satellite_id, changed_at DESC);

CREATE TABLE join_requests (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  message text NOT NULL DEFAULT '',
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'withdrawn')),
  role text CHECK (role IN ('viewer', 'member')),
  created_at timestamptz NOT NULL,
  decided_at timestamptz,
  decided_by uuid REFERENCES users (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX join_requests_one_pending ON join_requests (tenant_id, user_id) WHERE status = 'pending';
CREATE INDEX join_requests_tenant_idx ON join_requests (tenant_id, status, created_at);

CREATE TABLE team_blocks (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  blocked_at timestamptz NOT NULL,
  blocked_by uuid REFERENCES users (id) ON DELETE SET NULL,
  PRIMARY KEY (tenant_id, user_id)
);
