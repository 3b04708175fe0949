-- A vote carries its detection's time, so the leaderboard reads a window's votes from an index
-- instead of checking every vote of the team against its detection (issue 37: at 10 million
-- detections a team's 100,000 votes cost 1.2 s for a year, each looked up in every monthly
-- partition, since the detections key is (id, detected_at)). Filled by a trigger on insert, so
-- every writer (the review service, imports, the benches) gets it; a detection's time never changes.
ALTER TABLE detection_votes ADD COLUMN detected_at timestamptz;
UPDATE detection_votes v SET detected_at = d.detected_at FROM detections d WHERE d.id = v.detection_id;
ALTER TABLE detection_votes ALTER COLUMN detected_at SET NOT NULL;
CREATE INDEX detection_votes_tenant_time_idx ON detection_votes (tenant_id, detected_at);

CREATE FUNCTION chorus_vote_detected_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.detected_at IS NULL THEN
    NEW.detected_at := (SELECT d.detected_at FROM detections d WHERE d.id = NEW.detection_id);
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER detection_votes_detected_at BEFORE INSERT ON detection_votes
  FOR EACH ROW EXECUTE FUNCTION chorus_vote_detected_at();
