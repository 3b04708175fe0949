-- Issue 32 item 6: a satellite stopped cleanly says goodbye (channel `goodbye`) and shows offline at
-- once, instead of after the offline threshold. Its next heartbeat clears the mark.
ALTER TABLE satellites ADD COLUMN stopped_at TIMESTAMPTZ;
