-- Recovering failed inference jobs (issue 21, docs/operations-jobs.md). The worker marks a chunk
-- whose job failed its last attempt; the hub re-drives it under a new job id (a bounded number of
-- times, spaced further apart each time) and lists what stays failed for a hub admin to retry.
ALTER TABLE chunks ADD COLUMN inference_failed_at timestamptz;
ALTER TABLE chunks ADD COLUMN inference_error text;
-- Re-drives so far, automatic and asked for: the next job id is `${chunk id}.r${count}`.
ALTER TABLE chunks ADD COLUMN inference_redrives integer NOT NULL DEFAULT 0;
-- A retry asked for where the workers' queue was out of reach (`chorus jobs retry` beside a hub
-- on the in-process queue): the hub's next re-drive tick enqueues it.
ALTER TABLE chunks ADD COLUMN inference_retry_requested boolean NOT NULL DEFAULT false;
CREATE INDEX chunks_inference_failed_idx ON chunks (inference_failed_at, id) WHERE inference_failed_at IS NOT NULL;
