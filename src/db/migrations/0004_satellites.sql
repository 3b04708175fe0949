-- Satellites in full: credentials, reported state, chunks, telemetry and log responses.

ALTER TABLE satellites
  ADD COLUMN mqtt_password_hash text,
  ADD COLUMN latitude double precision,
  ADD COLUMN longitude double precision,
  ADD COLUMN last_seen_at timestamptz,
  ADD COLUMN version text,
  ADD COLUMN stream text,
  ADD COLUMN state text,
  ADD COLUMN uptime_seconds integer,
  ADD COLUMN noise_floor_rms double precision,
  ADD COLUMN filter_stats jsonb,
  ADD COLUMN outbox_stats jsonb,
  ADD COLUMN update_status text,
  ADD COLUMN target_version text,
  ADD COLUMN offline_alerted_at timestamptz;
CREATE UNIQUE INDEX satellites_device_key ON satellites (tenant_id, device_id) WHERE device_id IS NOT NULL AND NOT archived;

-- One row per stored audio chunk. chunkId is the satellite's id for it: redelivery is idempotent.
CREATE TABLE chunks (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  recorded_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  sample_rate integer NOT NULL,
  storage_key text NOT NULL,
  bytes integer NOT NULL,
  latitude double precision,
  longitude double precision,
  received_at timestamptz NOT NULL
);
CREATE INDEX chunks_satellite_time_idx ON chunks (satellite_id, recorded_at);
CREATE INDEX chunks_tenant_time_idx ON chunks (tenant_id, recorded_at);

CREATE TABLE telemetry (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  battery_level double precision,
  storage_free_bytes bigint,
  cpu_temp double precision,
  network_latency_ms double precision,
  packet_loss_pct double precision,
  uptime_seconds integer
);
CREATE INDEX telemetry_satellite_time_idx ON telemetry (satellite_id, at DESC);

CREATE TABLE satellite_logs (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  requested_at timestamptz NOT NULL,
  requested_by uuid REFERENCES users (id) ON DELETE SET NULL,
  received_at timestamptz,
  lines jsonb
);
CREATE INDEX satellite_logs_sat_idx ON satellite_logs (satellite_id, requested_at DESC);
