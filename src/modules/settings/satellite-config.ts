import { settingsAt } from './registry.ts';
import { effectiveValues, type Layers } from './resolve.ts';

export const SAMPLE_RATE = 48_000;
export const CHUNK_DURATION_MS = 3_000;

const DROP_SWITCHES: Array<[string, string]> = [
  ['drop_anthropogenic_at_satellite', 'anthropogenic'],
  ['drop_human_voice_at_satellite', 'human_voice'],
  ['drop_amphibian_at_satellite', 'amphibian'],
  ['drop_insect_at_satellite', 'insect'],
  ['drop_other_animal_at_satellite', 'other_animal'],
];

/** The config push body (satellite protocol §2 "Config push"), every field resolved by the registry. */
export function satelliteConfig(layers: Layers): Record<string, unknown> {
  const v = effectiveValues(settingsAt('satellite'), 'satellite', layers);
  return {
    recordingProfile: {
      type: v.recording_profile,
      schedule: v.recording_schedule,
      sampleRate: SAMPLE_RATE,
      chunkDurationMs: CHUNK_DURATION_MS,
      overlapMs: v.recording_overlap_ms,
      gain: v.recording_gain_db,
    },
    heartbeatIntervalSec: v.heartbeat_interval_sec,
    filterEnabled: v.filter_enabled,
    filterMinRms: v.filter_min_rms,
    classifierMinBirdProb: v.classifier_min_bird_prob,
    excludedClassifierCategories: DROP_SWITCHES.filter(([key]) => v[key] === true).map(([, category]) => category),
    outboxSoftSizeMb: v.outbox_soft_size_mb,
    outboxHardSizeMb: v.outbox_hard_size_mb,
    outboxMaxAgeHours: v.outbox_max_age_hours,
    deviceInference: v.device_inference,
  };
}
