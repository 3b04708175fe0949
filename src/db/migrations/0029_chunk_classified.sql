-- Issue 32: a chunk is marked when the worker has classified it, detections or none. Before,
-- "classified" meant "has a detection", so every bird-free chunk of the last 24 hours was offered to
-- inference again at each start (~28,000 a day for one satellite recording all day). Chunks
-- classified before this migration keep their old mark (a detection); bird-free ones among them
-- are classified once more and then marked.
ALTER TABLE chunks ADD COLUMN classified_at TIMESTAMPTZ;
-- The start-up re-queue scans only what was never classified.
CREATE INDEX chunks_unclassified ON chunks (received_at, id) WHERE classified_at IS NULL;
