-- The leaderboard counts, per voter, the votes on listed detections of a window. It checked every
-- vote of the team against its detection: at 10 million detections a team's 100,000 votes cost
-- 1.2 s for a year (issue 37), each looked up in every monthly partition since the detections key
-- is (id, detected_at); given the detection's time, still ~4 µs a vote (420 ms). A vote now carries
-- what the leaderboard filters on: its detection's time, category, satellite and species (which
-- never change), and whether the detection is listed (one row per call, promoted, not tentative),
-- which a trigger keeps in step when stitching, observations or the threshold review change it.
-- Filled by a trigger on insert, so every writer (the review service, the benches, tests) gets them.
ALTER TABLE detection_votes ADD COLUMN detected_at timestamptz, ADD COLUMN listed boolean, ADD COLUMN category text,
  ADD COLUMN satellite_id uuid, ADD COLUMN species_key text;
UPDATE detection_votes v SET
  detected_at = d.detected_at, listed = (d.call_id IS NULL AND d.promoted AND NOT d.tentative), category = d.category,
  satellite_id = d.satellite_id, species_key = lower(d.species_code)
FROM detections d WHERE d.id = v.detection_id;
ALTER TABLE detection_votes ALTER COLUMN detected_at SET NOT NULL, ALTER COLUMN listed SET NOT NULL,
  ALTER COLUMN category SET NOT NULL, ALTER COLUMN satellite_id SET NOT NULL, ALTER COLUMN species_key SET NOT NULL;
CREATE INDEX detection_votes_window_idx ON detection_votes (tenant_id, detected_at)
  INCLUDE (user_id, vote, listed, category, satellite_id, species_key);

CREATE FUNCTION chorus_vote_detection_facts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT d.detected_at, d.call_id IS NULL AND d.promoted AND NOT d.tentative, d.category, d.satellite_id, lower(d.species_code)
  INTO NEW.detected_at, NEW.listed, NEW.category, NEW.satellite_id, NEW.species_key
  FROM detections d WHERE d.id = NEW.detection_id;
  RETURN NEW;
END $$;

CREATE TRIGGER detection_votes_facts BEFORE INSERT ON detection_votes
  FOR EACH ROW EXECUTE FUNCTION chorus_vote_detection_facts();

CREATE FUNCTION chorus_detection_listed_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE detection_votes SET listed = (NEW.call_id IS NULL AND NEW.promoted AND NOT NEW.tentative) WHERE detection_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER detections_vote_listed AFTER UPDATE OF call_id, promoted, tentative ON detections
  FOR EACH ROW
  WHEN ((OLD.call_id IS NULL AND OLD.promoted AND NOT OLD.tentative) IS DISTINCT FROM (NEW.call_id IS NULL AND NEW.promoted AND NOT NEW.tentative))
  EXECUTE FUNCTION chorus_detection_listed_changed();
