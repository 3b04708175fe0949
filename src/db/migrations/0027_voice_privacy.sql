-- Issue 31: why a chunk's audio object was removed. Audio retention (0017) removes old audio;
-- the hub removes a chunk's audio at once when a human voice is heard in it (the team's
-- remove_human_voice_audio and human_voice_threshold settings). The row stays either way, so
-- detections keep their chunk and the removals can be counted.
ALTER TABLE chunks ADD COLUMN audio_removed_reason TEXT
  CHECK (audio_removed_reason IN ('retention', 'human_voice'));
UPDATE chunks SET audio_removed_reason = 'retention' WHERE audio_deleted_at IS NOT NULL;
CREATE INDEX chunks_voice_removed ON chunks (tenant_id, satellite_id) WHERE audio_removed_reason = 'human_voice';

-- The built-in model's second version has three non-bird outputs after its five species
-- (Human vocal, Engine, Noise: models/builtin/labels.txt); its label mapping is completed from
-- the labels file when it next loads (ensureModelMapped).
UPDATE inference_models
SET label_count = 8, version = '2',
    description = 'Five synthetic species of the reference satellite, and human voice, engine and noise (docs/model.md)'
WHERE id = 'builtin';
