/**
 * What a read of each setting hands out: its value type, key by key, as a TypeBox type. The
 * service checks a stored value against it (Value.Check, a type guard) instead of casting the
 * jsonb, and the key picks the type, so a caller cannot name a wrong one. The registry
 * (registry.ts) holds the write rules (ranges, lengths, lists); a type here is the shape only.
 * A setting whose default is null reads as nullable. test/settings.test.ts checks that every
 * registry key has a type here and that every default passes it.
 */
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { col } from '../../infra/db/index.ts';
import type { ScheduleWindow } from '../../protocol/schedule.ts';
import {
  CATEGORIES,
  findSetting,
  DATE_FORMATS,
  DATE_FORMATS_SECONDARY,
  DEVICE_POLICIES,
  JOIN_POLICIES,
  JOIN_ROLES,
  LANGUAGES,
  PAPER_SIZES,
  PUBLICATION_LICENSES,
  TEAM_LANGUAGES,
  RECORDING_PROFILES,
  TIME_FORMATS,
  WEEK_STARTS,
} from './registry.ts';

const bool = col.bool;
const int = col.int;
const num = col.num;
const text = col.text;

const MinutesOrHhmm = Type.Union([Type.String(), Type.Number()]);
const Window = Type.Object({ start: MinutesOrHhmm, end: MinutesOrHhmm, reference: col.oneOf(['sunrise', 'sunset', 'absolute']) });
// A window read is a window of the protocol (fails to compile otherwise).
type Reads<A extends B, B> = A;
type _WindowIsProtocol = Reads<Static<typeof Window>, ScheduleWindow>;

export const SETTING_VALUES = {
  allow_self_registration: bool(),
  allow_tenant_creation: bool(),
  allow_public_pages: bool(),
  allow_public_teams: bool(),
  retention_enabled: bool(),
  require_admin_mfa: bool(),
  satellite_releases: Type.Record(Type.String(), Type.String()),
  device_inference: bool(),
  recording_profile: col.oneOf(RECORDING_PROFILES),
  recording_schedule: Type.Array(Window),
  recording_gain_db: num(),
  recording_overlap_ms: int(),
  heartbeat_interval_sec: int(),
  filter_enabled: bool(),
  filter_min_rms: num(),
  classifier_min_bird_prob: num(),
  drop_amphibian_at_satellite: bool(),
  drop_insect_at_satellite: bool(),
  drop_anthropogenic_at_satellite: bool(),
  drop_human_voice_at_satellite: bool(),
  drop_other_animal_at_satellite: bool(),
  outbox_soft_size_mb: int(),
  outbox_hard_size_mb: int(),
  outbox_max_age_hours: int(),
  offline_threshold_minutes: int(),
  audio_retention_days: int(),
  storage_warning_days: int(),
  satellite_storage_warning_mb: int(),
  aggregation_enabled: bool(),
  aggregation_count: int(),
  aggregation_window_minutes: int(),
  aggregation_confidence_high: num(),
  inference_model: col.nullable(text()),
  inference_sensitivity: num(),
  inference_min_confidence: num(),
  remove_human_voice_audio: bool(),
  human_voice_threshold: num(),
  range_filter_threshold: num(),
  range_include_species: Type.Array(text()),
  range_exclude_species: Type.Array(text()),
  inference_overlap_sec: num(),
  aggregation_retention_hours: int(),
  verification_quorum: int(),
  species_threshold_target: num(),
  observation_merge_enabled: bool(),
  observation_merge_distance_m: int(),
  observation_merge_window_sec: num(),
  device_policy: col.oneOf(DEVICE_POLICIES),
  default_join_role: col.oneOf(JOIN_ROLES),
  public_page: bool(),
  join_policy: col.oneOf(JOIN_POLICIES),
  // One of the IANA zones this Node knows (the registry's options): a list too long for a union.
  time_zone: text(),
  team_language: col.oneOf(TEAM_LANGUAGES),
  town_opt_in: bool(),
  visible_categories: Type.Array(col.oneOf(CATEGORIES)),
  publication_license: col.oneOf(PUBLICATION_LICENSES),
  publish_audio: bool(),
  primaryLanguage: col.oneOf(LANGUAGES),
  secondaryLanguages: Type.Array(col.oneOf(LANGUAGES)),
  dateFormatPrimary: col.oneOf(DATE_FORMATS),
  dateFormatSecondary: col.oneOf(DATE_FORMATS_SECONDARY),
  timeFormat: col.oneOf(TIME_FORMATS),
  startOfWeek: col.oneOf(WEEK_STARTS),
  paperSize: col.oneOf(PAPER_SIZES),
  showVoting: bool(),
  sensitive_species: Type.Array(text()),
  sensitive_species_extra: Type.Array(text()),
  public_page_show_sensitive: bool(),
  town: col.nullable(text()),
  outbound_allow_hosts: col.nullable(text()),
  hub_name: text(),
  public_place_name: col.nullable(text()),
  map_tile_url: text(),
};

export type SettingKey = keyof typeof SETTING_VALUES;
/** What a read of `key` hands out. */
export type SettingValue<K extends SettingKey> = Static<(typeof SETTING_VALUES)[K]>;

/**
 * A stored value as its setting's value type. A value that no longer passes (stored before the
 * registry changed) reads as the registry default; when that fails too, the read throws, naming
 * the key.
 */
export function settingValue<K extends SettingKey>(key: K, value: unknown): SettingValue<K> {
  const type = SETTING_VALUES[key];
  if (Value.Check(type, value)) return value;
  const fallback = findSetting(key)?.default;
  if (Value.Check(type, fallback)) return fallback;
  throw new Error(`setting ${key}: neither the stored value ${JSON.stringify(value)} nor the registry default is of its value type`);
}
