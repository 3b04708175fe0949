-- Alerting (issue 17): channels (where a message goes), rules (when one is sent), the alerts
-- they stored and each channel's deliveries.

-- config holds what a response may show; secrets holds the write-only parts (webhook secret,
-- bot token, URLs that carry a token) sealed with a key derived from CHORUS_SECRET, the
-- channel id as additional data (src/core/sealer.ts).
CREATE TABLE alert_channels (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  type text NOT NULL,
  name text NOT NULL,
  config jsonb NOT NULL DEFAULT '{}',
  secrets text,
  payload_template text,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX alert_channels_tenant_idx ON alert_channels (tenant_id, created_at);

CREATE TABLE alert_rules (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  conditions jsonb NOT NULL DEFAULT '{}',
  cooldown_minutes integer NOT NULL DEFAULT 0,
  cooldown_scope text NOT NULL DEFAULT 'species',
  quiet_hours jsonb,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX alert_rules_tenant_idx ON alert_rules (tenant_id, created_at);

-- Deleting a channel takes it out of every rule; deleting a rule forgets its links.
CREATE TABLE alert_rule_channels (
  rule_id uuid NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
  channel_id uuid NOT NULL REFERENCES alert_channels (id) ON DELETE CASCADE,
  PRIMARY KEY (rule_id, channel_id)
);
CREATE INDEX alert_rule_channels_channel_idx ON alert_rule_channels (channel_id);

-- dedup_key makes an alert unique per team: every hub process that sees the same event tries
-- the same insert and one wins. cooldown_key is what the rule's cooldown counts per
-- (rule and satellite, or rule and species). A deleted satellite, detection or rule leaves the
-- alert in place, unlinked (spec: "alerts and field notes stay with the device unlinked").
CREATE TABLE alerts (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  rule_id uuid REFERENCES alert_rules (id) ON DELETE SET NULL,
  rule_name text NOT NULL,
  event text NOT NULL,
  satellite_id uuid REFERENCES satellites (id) ON DELETE SET NULL,
  satellite_name text,
  detection_id uuid REFERENCES detections (id) ON DELETE SET NULL,
  species_code text,
  species text,
  common_name text,
  confidence double precision,
  message text NOT NULL,
  dedup_key text NOT NULL,
  cooldown_key text NOT NULL,
  muted boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  acknowledged_at timestamptz,
  acknowledged_by uuid REFERENCES users (id) ON DELETE SET NULL,
  UNIQUE (tenant_id, dedup_key)
);
CREATE INDEX alerts_tenant_time_idx ON alerts (tenant_id, created_at DESC, id DESC);
CREATE INDEX alerts_unacknowledged_idx ON alerts (tenant_id, created_at DESC) WHERE acknowledged_at IS NULL;
CREATE INDEX alerts_cooldown_idx ON alerts (rule_id, cooldown_key, created_at DESC);
CREATE INDEX alerts_satellite_idx ON alerts (satellite_id) WHERE satellite_id IS NOT NULL;

-- One row per (alert, channel), or per channel test; status pending → retrying → delivered or failed.
CREATE TABLE alert_deliveries (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  channel_id uuid NOT NULL REFERENCES alert_channels (id) ON DELETE CASCADE,
  alert_id uuid REFERENCES alerts (id) ON DELETE CASCADE,
  event text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  receiver_status integer,
  duration_ms integer,
  error text,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX alert_deliveries_channel_idx ON alert_deliveries (channel_id, created_at DESC);
CREATE INDEX alert_deliveries_open_idx ON alert_deliveries (updated_at) WHERE status IN ('pending', 'retrying');
