-- Audio retention (issue 22): chunks whose audio object the daily run removed, and the runs.

-- The row stays (detections, sessions and counts still point at it); only its audio is gone.
ALTER TABLE chunks ADD COLUMN audio_deleted_at timestamptz;
-- The run walks each team's chunks still holding audio by (recorded_at, id); removed ones leave the index.
CREATE INDEX chunks_retention_idx ON chunks (tenant_id, recorded_at, id) WHERE audio_deleted_at IS NULL;

-- One row per run. A scheduled run claims its UTC day (unique); one run at a time (unique while running).
-- `teams` holds, per team, the cutoff fixed at the start and the counts so far; the cursor is the
-- last chunk handled (team, recorded_at, id), so a run taken over after its process stopped goes on
-- from there. `owner` and `lease_until`: the process working the run and until when it may.
CREATE TABLE retention_runs (
  id uuid PRIMARY KEY,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  day date,
  status text NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  started_by uuid REFERENCES users (id) ON DELETE SET NULL,
  teams jsonb NOT NULL DEFAULT '{}',
  chunks_removed integer NOT NULL DEFAULT 0,
  bytes_freed bigint NOT NULL DEFAULT 0,
  chunks_kept integer NOT NULL DEFAULT 0,
  cursor_tenant_id uuid,
  cursor_recorded_at timestamptz,
  cursor_chunk_id uuid,
  owner text,
  lease_until timestamptz,
  error text
);
CREATE UNIQUE INDEX retention_runs_day_key ON retention_runs (day) WHERE trigger = 'schedule';
CREATE UNIQUE INDEX retention_runs_one_running ON retention_runs ((true)) WHERE status = 'running';
CREATE INDEX retention_runs_started_idx ON retention_runs (started_at DESC, id DESC);
