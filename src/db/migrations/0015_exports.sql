-- Exports (issue 18): exports that run in the background (large ones), and scheduled exports.

-- A background export: its file lives in object storage under storage_key until expires_at.
CREATE TABLE export_jobs (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  requested_by uuid REFERENCES users (id) ON DELETE SET NULL,
  format text NOT NULL,
  filters jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL,
  rows_done integer NOT NULL DEFAULT 0,
  rows_total integer,
  storage_key text,
  filename text,
  content_type text,
  bytes bigint,
  error text,
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  expires_at timestamptz NOT NULL
);
CREATE INDEX export_jobs_tenant_idx ON export_jobs (tenant_id, created_at DESC);
CREATE INDEX export_jobs_expiry_idx ON export_jobs (expires_at);

-- next_run_at is the claim: a run moves it forward only where it still holds the due time, so
-- one process runs each occurrence however many evaluate the schedule.
CREATE TABLE scheduled_exports (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name text NOT NULL,
  format text NOT NULL,
  schedule text NOT NULL,
  time_zone text NOT NULL,
  filters jsonb NOT NULL DEFAULT '{}',
  channel_id uuid REFERENCES alert_channels (id) ON DELETE SET NULL,
  enabled boolean NOT NULL DEFAULT true,
  next_run_at timestamptz,
  last_run_at timestamptz,
  last_status text,
  last_error text,
  last_rows integer,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX scheduled_exports_tenant_idx ON scheduled_exports (tenant_id, created_at);
CREATE INDEX scheduled_exports_due_idx ON scheduled_exports (next_run_at) WHERE enabled;
