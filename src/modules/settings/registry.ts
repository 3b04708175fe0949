/**
 * The settings registry: every setting Chorus knows, its type, range, default, the levels that
 * may hold it and the levels that may lock it for the levels below. Adding a setting is one
 * entry here, and its value type in values.ts (what a read hands out); storage is generic (table
 * `settings`). Registry order is response order.
 */
import { STREAMS } from '../../protocol/messages.ts';
import type { ScheduleWindow } from '../../protocol/schedule.ts';
import { isSemver } from '../../protocol/version.ts';
import { SENSITIVE_SEED } from './sensitive-seed.ts';
import { allowListProblem } from '../../core/outbound-allow-list.ts';

export type Level = 'hub' | 'team' | 'satellite' | 'account';

export const CATEGORIES = ['bird', 'amphibian', 'insect', 'anthropogenic', 'human_voice', 'other_animal'] as const;

export type { ScheduleWindow };

export type SettingType =
  | { type: 'boolean' }
  | { type: 'integer'; min: number; max: number }
  | { type: 'number'; min: number; max: number }
  | { type: 'enum'; options: readonly string[] }
  | { type: 'enumList'; options: readonly string[]; maxItems: number }
  | { type: 'schedule'; maxItems: number }
  /** An object from a stream name (one of `streams`) to that stream's latest release, a SemVer string. */
  | { type: 'releases'; streams: readonly string[] }
  /** The id of a row another module owns (e.g. a classifier model); the settings service asks that module whether it exists. */
  | { type: 'ref'; ref: 'model' }
  /** A short line of text (a satellite's town); `check` names what is wrong with a value, or null. */
  | { type: 'text'; maxLength: number; check?: (value: string) => string | null }
  /** A list of species codes (sensitive species); the codes are not checked against the catalog. */
  | { type: 'speciesList'; maxItems: number }
  /** An http(s) URL template holding each of `placeholders` (e.g. "{z}"), or '' for none. */
  | { type: 'urlTemplate'; placeholders: readonly string[] };

type SettingBody = SettingType & {
  key: string;
  default: unknown;
  description: string;
  /** What a number counts, shown beside its input ("dB", "ms", "MB", "min", "h", "d", "s"). */
  unit?: string;
  /** Levels allowed to lock this key for the levels below them (their `mayOverride`). */
  lockableAt?: readonly Level[];
  /** At the satellite level only team admins (not the registrant) may set it. */
  adminOnlyAtSatellite?: boolean;
};

export type SettingDef = SettingBody & { levels: readonly Level[] };

export const LANGUAGES = [
  'en',
  'en-GB',
  'af',
  'ar',
  'bg',
  'ca',
  'cs',
  'da',
  'de',
  'el',
  'es',
  'et',
  'fi',
  'fr',
  'he',
  'hi',
  'hr',
  'hu',
  'id',
  'is',
  'it',
  'ja',
  'ko',
  'lt',
  'lv',
  'ml',
  'nl',
  'no',
  'pl',
  'pt-BR',
  'pt-PT',
  'ro',
  'ru',
  'sk',
  'sl',
  'sr',
  'sv',
  'th',
  'tr',
  'uk',
  'vi',
  'zh',
] as const;

export const DATE_FORMATS = ['YYYY-MM-DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'MM/DD/YYYY', 'D MMM YYYY', 'MMM D, YYYY'] as const;

// The options of the enum settings, named once for the registry and the value types (values.ts).
export const RECORDING_PROFILES = ['continuous', 'scheduled', 'dawn_dusk'] as const;
export const DEVICE_POLICIES = ['members', 'admins'] as const;
export const JOIN_ROLES = ['viewer', 'member'] as const;
export const JOIN_POLICIES = ['invite_only', 'listed', 'request', 'open'] as const;
export const DATE_FORMATS_SECONDARY = ['none', ...DATE_FORMATS] as const;
export const TIME_FORMATS = ['24h', '12h'] as const;
export const WEEK_STARTS = ['monday', 'sunday', 'saturday'] as const;
export const PAPER_SIZES = ['a4', 'letter'] as const;
/** Languages the hub writes its own text in (alert titles and messages; issue 36 point 5). */
export const TEAM_LANGUAGES = ['en', 'de'] as const;
/**
 * Licences a team may publish records and recordings under (SPDX ids; src/modules/exports/licenses.ts
 * names them): GBIF takes the first three only.
 */
export const PUBLICATION_LICENSES = [
  'CC0-1.0',
  'CC-BY-4.0',
  'CC-BY-NC-4.0',
  'CC-BY-SA-4.0',
  'CC-BY-NC-SA-4.0',
  'CC-BY-NC-ND-4.0',
  'all-rights-reserved',
] as const;

const at = (levels: readonly Level[], body: SettingBody): SettingDef => ({ ...body, levels });
const hubOnly = (key: string, def: boolean, description: string) => at(['hub'], { key, type: 'boolean', default: def, description });
/** Satellite config: held by hub, team and satellite; hub and team may lock it. */
const device = (body: SettingBody) => at(['hub', 'team', 'satellite'], { lockableAt: ['hub', 'team'], ...body });
const team = (body: SettingBody) => at(['hub', 'team'], body);
const teamOnly = (body: SettingBody) => at(['team'], body);
const preference = (body: SettingBody) => at(['hub', 'account'], body);

/** IANA zone names this Node knows, UTC first. */
const TIME_ZONES: readonly string[] = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];

export const SETTINGS: readonly SettingDef[] = [
  // Hub switches
  hubOnly('allow_self_registration', true, 'People may create an account without an invite'),
  hubOnly('allow_tenant_creation', true, 'Signed-in people may create teams'),
  hubOnly('allow_public_pages', false, 'Teams may publish a public page'),
  hubOnly('allow_public_teams', false, 'The team directory lists teams accepting newcomers'),
  hubOnly('retention_enabled', true, 'Clean-up of expired tentative detections and old audio runs'),
  hubOnly('require_admin_mfa', false, 'Hub admins without a second factor may only enrol one until they do'),
  // Issue 36 point 6: a LAN receiver allowed from the dashboard, beside the operator's OUTBOUND_ALLOW_HOSTS (both count).
  at(['hub'], {
    key: 'outbound_allow_hosts',
    type: 'text',
    maxLength: 1000,
    check: allowListProblem,
    default: null,
    description:
      'Private or local hosts that webhooks and chat channels may reach (a LAN receiver): comma-separated host names, addresses and CIDR ranges such as 192.168.1.20 or 10.0.0.0/8',
  }),
  at(['hub'], {
    key: 'satellite_releases',
    type: 'releases',
    streams: STREAMS,
    default: {},
    description: 'Latest satellite release per stream (e.g. {"satellite": "1.4.0"}): the targetVersion of update requests',
  }),

  // On-satellite inference, with the hub's and the team's locks
  device({
    key: 'device_inference',
    type: 'boolean',
    default: false,
    adminOnlyAtSatellite: true,
    description: 'Satellites run the classifier themselves',
  }),

  // Satellite config (config push)
  device({
    key: 'recording_profile',
    type: 'enum',
    options: RECORDING_PROFILES,
    default: 'continuous',
    description: 'When the satellite records',
  }),
  device({
    key: 'recording_schedule',
    type: 'schedule',
    maxItems: 12,
    default: [],
    description: 'Recording windows: absolute HH:MM, or minutes relative to sunrise/sunset',
  }),
  device({ key: 'recording_gain_db', type: 'number', min: -20, max: 40, default: 0, unit: 'dB', description: 'Microphone gain in dB' }),
  device({
    key: 'recording_overlap_ms',
    unit: 'ms',
    type: 'integer',
    min: 0,
    max: 1500,
    default: 0,
    description: 'Overlap between consecutive 3-second chunks',
  }),
  device({
    key: 'heartbeat_interval_sec',
    type: 'integer',
    min: 10,
    max: 3600,
    default: 30,
    unit: 's',
    description: 'Seconds between heartbeats',
  }),
  device({
    key: 'filter_enabled',
    type: 'boolean',
    default: true,
    description: 'Pre-upload gates (silence gate and sound classifier) are on',
  }),
  device({
    key: 'filter_min_rms',
    type: 'number',
    min: 0,
    max: 1,
    default: 0.003,
    description: 'Silence gate: minimum RMS of a chunk (full scale = 1)',
  }),
  device({
    key: 'classifier_min_bird_prob',
    type: 'number',
    min: 0,
    max: 1,
    default: 0.1,
    description: 'Sound classifier: minimum bird probability to upload',
  }),
  // The drop switches act on the satellite, before upload, where it runs a sound classifier
  // (docs/model.md "Privacy"); the hub's own voice removal is remove_human_voice_audio below.
  device({
    key: 'drop_amphibian_at_satellite',
    type: 'boolean',
    default: true,
    description: 'On the satellite, before upload: drop chunks classified as amphibian',
  }),
  device({
    key: 'drop_insect_at_satellite',
    type: 'boolean',
    default: true,
    description: 'On the satellite, before upload: drop chunks classified as insect',
  }),
  device({
    key: 'drop_anthropogenic_at_satellite',
    type: 'boolean',
    default: true,
    description: 'On the satellite, before upload: drop chunks classified as anthropogenic noise',
  }),
  device({
    key: 'drop_human_voice_at_satellite',
    type: 'boolean',
    default: true,
    description: 'On the satellite, before upload: drop chunks with human voices',
  }),
  device({
    key: 'drop_other_animal_at_satellite',
    type: 'boolean',
    default: true,
    description: 'On the satellite, before upload: drop chunks classified as other animals',
  }),
  device({
    key: 'outbox_soft_size_mb',
    unit: 'MB',
    type: 'integer',
    min: 16,
    max: 1_048_576,
    default: 512,
    description: 'Outbox size at which the oldest acked audio is pruned',
  }),
  device({
    key: 'outbox_hard_size_mb',
    unit: 'MB',
    type: 'integer',
    min: 32,
    max: 2_097_152,
    default: 1024,
    description: 'Outbox size at which the oldest audio is dropped',
  }),
  device({
    key: 'outbox_max_age_hours',
    unit: 'h',
    type: 'integer',
    min: 1,
    max: 8760,
    default: 168,
    description: 'Unsent chunks older than this are dropped',
  }),

  // Team operations
  team({
    key: 'offline_threshold_minutes',
    unit: 'min',
    type: 'integer',
    min: 1,
    max: 1440,
    default: 5,
    description: 'Minutes without a heartbeat before a satellite is offline',
  }),
  team({
    key: 'audio_retention_days',
    unit: 'd',
    type: 'integer',
    min: 0,
    max: 36_500,
    default: 0,
    description: 'Days audio is kept (0 keeps it forever)',
  }),
  // Storage in sight (issue 23)
  at(['hub'], {
    key: 'storage_warning_days',
    unit: 'd',
    type: 'integer',
    min: 1,
    max: 3650,
    default: 14,
    description: 'Warn when the free space where the hub writes lasts fewer days than this at the current growth',
  }),
  team({
    key: 'satellite_storage_warning_mb',
    unit: 'MB',
    type: 'integer',
    min: 1,
    max: 1_048_576,
    default: 1024,
    description: "Warn when a satellite's latest telemetry reports less free space than this",
  }),
  team({ key: 'aggregation_enabled', type: 'boolean', default: false, description: 'New detections wait on the aggregation rule' }),
  team({
    key: 'aggregation_count',
    type: 'integer',
    min: 1,
    max: 100,
    default: 3,
    description: 'Detections of a species from one satellite that promote the group',
  }),
  team({
    key: 'aggregation_window_minutes',
    unit: 'min',
    type: 'integer',
    min: 1,
    max: 1440,
    default: 15,
    description: 'Window in which those detections must fall',
  }),
  team({
    key: 'aggregation_confidence_high',
    type: 'number',
    min: 0,
    max: 1,
    default: 0.85,
    description: 'One detection this confident promotes at once',
  }),
  // Inference on the hub (docs/model.md): the team's model (null = the hub default) and BirdNET's knobs
  teamOnly({
    key: 'inference_model',
    type: 'ref',
    ref: 'model',
    default: null,
    description: 'Classifier model id for this team (null follows the hub default model)',
  }),
  team({
    key: 'inference_sensitivity',
    type: 'number',
    min: 0.5,
    max: 1.5,
    default: 1,
    description: 'Slope of the sigmoid that turns model scores into confidences',
  }),
  team({
    key: 'inference_min_confidence',
    type: 'number',
    min: 0.01,
    max: 0.99,
    default: 0.25,
    description: 'Predictions below this confidence are not stored',
  }),
  // Voice privacy on the hub (issue 31): whatever the satellite did, a chunk in which the model
  // hears a human voice loses its audio at once; the row and a count stay.
  at(['hub', 'team'], {
    key: 'remove_human_voice_audio',
    type: 'boolean',
    default: true,
    lockableAt: ['hub'],
    description: 'On the hub, after inference: delete the audio of chunks in which a human voice is heard',
  }),
  at(['hub', 'team'], {
    key: 'human_voice_threshold',
    type: 'number',
    min: 0.05,
    max: 0.99,
    default: 0.5,
    lockableAt: ['hub'],
    description: "A chunk holds a human voice when the model's voice confidence reaches this",
  }),
  // The range filter (issue 35, docs/model.md "Range filter"): species scoring below the threshold
  // at a satellite's position that week are flagged out of range; the lists override the model.
  team({
    key: 'range_filter_threshold',
    type: 'number',
    min: 0.0001,
    max: 0.99,
    default: 0.03,
    description: "A species whose range-model score at the satellite's position that week is below this is out of range",
  }),
  teamOnly({
    key: 'range_include_species',
    type: 'speciesList',
    maxItems: 2000,
    default: [],
    description: 'Species codes never flagged out of range, whatever the range model says',
  }),
  teamOnly({
    key: 'range_exclude_species',
    type: 'speciesList',
    maxItems: 2000,
    default: [],
    description: 'Species codes always flagged out of range (with or without a range model)',
  }),
  team({
    key: 'inference_overlap_sec',
    unit: 's',
    type: 'number',
    min: 0,
    max: 2.5,
    default: 0,
    description: 'Overlap of consecutive 3-second windows inside a chunk longer than 3 s',
  }),
  team({
    key: 'aggregation_retention_hours',
    unit: 'h',
    type: 'integer',
    min: 1,
    max: 8760,
    default: 48,
    description: 'Tentative detections older than this are removed',
  }),
  team({
    key: 'verification_quorum',
    type: 'integer',
    min: 1,
    max: 20,
    default: 1,
    description: 'Confirm votes must outnumber reject votes by this many to confirm a detection (and the reverse to reject it)',
  }),
  // One call, several recorders (issue 35 point 3, src/modules/detections/observations.ts): off by
  // default, since the specification counts one row per stitched call of one satellite.
  team({
    key: 'observation_merge_enabled',
    type: 'boolean',
    default: false,
    description: 'New detections of one species from nearby satellites at the same moment become one observation with several recordings',
  }),
  team({
    key: 'observation_merge_distance_m',
    unit: 'm',
    type: 'integer',
    min: 1,
    max: 10000,
    default: 250,
    description: 'Farthest apart two satellites may be to hear one call (satellites without a position never merge)',
  }),
  team({
    key: 'observation_merge_window_sec',
    unit: 's',
    type: 'number',
    min: 0,
    max: 30,
    default: 2,
    description: 'Farthest apart, either way, the starts of two recordings of one call may be',
  }),
  // Per-species thresholds (issue 35 item 2, src/modules/species-thresholds): the precision they keep.
  team({
    key: 'species_threshold_target',
    type: 'number',
    min: 0.5,
    max: 0.99,
    default: 0.9,
    description: 'Per-species thresholds keep the share of confirmed detections at or above this',
  }),

  // Team fields
  team({ key: 'device_policy', type: 'enum', options: DEVICE_POLICIES, default: 'members', description: 'Who may register devices' }),
  team({
    key: 'default_join_role',
    type: 'enum',
    options: JOIN_ROLES,
    default: 'viewer',
    description: 'Role of people who join',
  }),
  teamOnly({ key: 'public_page', type: 'boolean', default: false, description: 'The team has a public page (needs the hub switch)' }),
  teamOnly({
    key: 'join_policy',
    type: 'enum',
    options: JOIN_POLICIES,
    default: 'invite_only',
    description: 'How others join: invite only; listed in the directory, by request; by request with the link; open',
  }),
  teamOnly({
    key: 'time_zone',
    type: 'enum',
    options: TIME_ZONES,
    default: 'UTC',
    description: 'The team time zone: alert quiet hours and daily windows',
  }),
  team({
    key: 'team_language',
    type: 'enum',
    options: TEAM_LANGUAGES,
    default: 'en',
    description: 'Language of the text the hub writes for the team: alert titles and messages, with times in the team time zone',
  }),
  teamOnly({ key: 'town_opt_in', type: 'boolean', default: false, description: 'Towns appear on the public page' }),
  team({
    key: 'visible_categories',
    type: 'enumList',
    options: CATEGORIES,
    maxItems: CATEGORIES.length,
    default: ['bird', 'amphibian', 'insect', 'other_animal'],
    description: 'Detection categories the team shows',
  }),
  // Exports (issue 34): the licence in Darwin Core (column and eml.xml) and xeno-canto files
  team({
    key: 'publication_license',
    type: 'enum',
    options: PUBLICATION_LICENSES,
    default: 'CC-BY-4.0',
    description:
      'Licence of the records and recordings the team publishes (Darwin Core, xeno-canto); GBIF accepts only CC0-1.0, CC-BY-4.0 and CC-BY-NC-4.0',
  }),
  // Issue 34 item 4: public links to recordings in submitted files, only while this is on and an export asks
  teamOnly({
    key: 'publish_audio',
    type: 'boolean',
    default: false,
    description:
      'Exports for GBIF, iNaturalist and xeno-canto may publish their recordings as public links (never a sensitive species); admins revoke them on the Export page',
  }),

  // Account preferences (hub sets the defaults)
  preference({
    key: 'primaryLanguage',
    type: 'enum',
    options: LANGUAGES,
    default: 'en',
    description: 'Language of species names and the interface',
  }),
  preference({
    key: 'secondaryLanguages',
    type: 'enumList',
    options: LANGUAGES,
    maxItems: 3,
    default: [],
    description: 'Extra languages shown beside species names',
  }),
  preference({ key: 'dateFormatPrimary', type: 'enum', options: DATE_FORMATS, default: 'YYYY-MM-DD', description: 'Date format' }),
  preference({
    key: 'dateFormatSecondary',
    type: 'enum',
    options: DATE_FORMATS_SECONDARY,
    default: 'none',
    description: 'Second date format shown beside the first',
  }),
  preference({ key: 'timeFormat', type: 'enum', options: TIME_FORMATS, default: '24h', description: 'Clock format' }),
  preference({
    key: 'startOfWeek',
    type: 'enum',
    options: WEEK_STARTS,
    default: 'monday',
    description: 'First day of the week in calendars',
  }),
  preference({ key: 'paperSize', type: 'enum', options: PAPER_SIZES, default: 'a4', description: 'Paper size of PDF reports' }),
  preference({ key: 'showVoting', type: 'boolean', default: true, description: 'Show verification voting controls' }),

  // Public pages and sensitive species (issue 20; docs/decisions.md "Public pages and sensitive species")
  at(['hub'], {
    key: 'sensitive_species',
    type: 'speciesList',
    maxItems: 2000,
    default: SENSITIVE_SEED,
    description: 'Species codes whose positions never leave a team finer than a 0.1° grid (seed: assets/sensitive-species)',
  }),
  teamOnly({
    key: 'sensitive_species_extra',
    type: 'speciesList',
    maxItems: 500,
    default: [],
    description: 'Species this team also treats as sensitive',
  }),
  teamOnly({
    key: 'public_page_show_sensitive',
    type: 'boolean',
    default: false,
    description: 'Sensitive species appear on the public page (never with a position or satellite)',
  }),
  at(['satellite'], {
    key: 'town',
    type: 'text',
    maxLength: 80,
    default: null,
    adminOnlyAtSatellite: true,
    description: 'The town the satellite stands in, shown on the public page when the team opts in',
  }),
  // Pages that explain themselves (issue 23): what a share page names; docs/decisions.md "The first hour"
  at(['hub'], {
    key: 'hub_name',
    type: 'text',
    maxLength: 80,
    default: 'Chorus',
    description: 'The name of this hub, shown on shared detections',
  }),
  teamOnly({
    key: 'public_place_name',
    type: 'text',
    maxLength: 100,
    default: null,
    description: 'The place named on shared detections instead of a coarse area, e.g. "Lower Saxony, Germany"',
  }),
  // Statistics map (issue 19): empty keeps the map offline on the bundled world outline
  at(['hub', 'team'], {
    key: 'map_tile_url',
    type: 'urlTemplate',
    placeholders: ['{z}', '{x}', '{y}'],
    default: '',
    lockableAt: ['hub'],
    description:
      'Raster tile URL for the statistics map, e.g. https://tile.example.org/{z}/{x}/{y}.png (empty: offline world outline only)',
  }),
];

/** Older names for the two locks of device inference, still accepted by the platform and team endpoints. */
export const LOCK_ALIASES: Record<string, { key: string; level: Level }> = {
  device_inference_teams_may_override: { key: 'device_inference', level: 'hub' },
  device_inference_devices_may_override: { key: 'device_inference', level: 'team' },
};

export const PREFERENCE_KEYS = SETTINGS.filter((s) => s.levels.includes('account')).map((s) => s.key);

const byKey = new Map(SETTINGS.map((s) => [s.key, s]));
export const findSetting = (key: string): SettingDef | undefined => byKey.get(key);
export const settingsAt = (level: Level): SettingDef[] => SETTINGS.filter((s) => s.levels.includes(level));

const SPECIES_CODE = /^[A-Za-z0-9_-]{1,40}$/;
const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

function refuseSchedule(value: unknown, maxItems: number): string | null {
  if (!Array.isArray(value)) return 'must be a list of {start, end, reference}';
  if (value.length > maxItems) return `may hold at most ${maxItems} windows`;
  for (const [i, w] of value.entries()) {
    if (!w || typeof w !== 'object' || Array.isArray(w)) return `window ${i} must be an object`;
    const { start, end, reference, ...rest } = w as Record<string, unknown>;
    if (Object.keys(rest).length) return `window ${i} has unknown fields ${Object.keys(rest).join(', ')}`;
    if (reference === 'absolute') {
      if (typeof start !== 'string' || !HHMM.test(start) || typeof end !== 'string' || !HHMM.test(end)) {
        return `window ${i}: absolute start and end must be HH:MM`;
      }
    } else if (reference === 'sunrise' || reference === 'sunset') {
      const ok = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= -720 && v <= 720;
      if (!ok(start) || !ok(end)) return `window ${i}: start and end must be whole minutes between -720 and 720`;
      if ((start as number) >= (end as number)) return `window ${i}: start must come before end`;
    } else {
      return `window ${i}: reference must be sunrise, sunset or absolute`;
    }
  }
  return null;
}

/** Why a value is refused for a setting, or null when it is acceptable. null always passes (it clears). */
export function refuseValue(def: SettingDef, value: unknown): string | null {
  if (value === null) return null;
  switch (def.type) {
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (def.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      return value < def.min || value > def.max ? `must be between ${def.min} and ${def.max}` : null;
    case 'enum':
      return typeof value === 'string' && def.options.includes(value) ? null : `must be one of ${def.options.join(', ')}`;
    case 'enumList':
      if (!Array.isArray(value)) return 'must be a list';
      if (value.length > def.maxItems) return `may hold at most ${def.maxItems} entries`;
      if (new Set(value).size !== value.length) return 'must not repeat an entry';
      return value.every((v) => typeof v === 'string' && def.options.includes(v))
        ? null
        : `entries must be among ${def.options.join(', ')}`;
    case 'schedule':
      return refuseSchedule(value, def.maxItems);
    case 'ref':
      return typeof value === 'string' && value.length > 0 && value.length <= 100 ? null : `must be the id of a ${def.ref}`;
    case 'text':
      return typeof value === 'string' && value.trim().length > 0 && value.length <= def.maxLength
        ? (def.check?.(value) ?? null)
        : `must be text of 1 to ${def.maxLength} characters`;
    case 'speciesList':
      if (!Array.isArray(value)) return 'must be a list of species codes';
      if (value.length > def.maxItems) return `may hold at most ${def.maxItems} species`;
      return value.every((v) => typeof v === 'string' && SPECIES_CODE.test(v))
        ? null
        : 'entries must be species codes (letters and digits)';
    case 'urlTemplate': {
      if (value === '') return null;
      if (typeof value !== 'string' || value.length > 500) return 'must be an http(s) URL of at most 500 characters, or empty';
      const missing = def.placeholders.filter((p) => !value.includes(p));
      if (missing.length > 0) return `must contain ${missing.join(', ')}`;
      return tileOrigin(value) ? null : 'must be an http(s) URL';
    }
    case 'releases': {
      if (typeof value !== 'object' || Array.isArray(value)) return 'must be an object from stream name to SemVer version';
      for (const [stream, version] of Object.entries(value as Record<string, unknown>)) {
        if (!def.streams.includes(stream)) return `stream ${stream} must be one of ${def.streams.join(', ')}`;
        if (!isSemver(version)) return `the release of ${stream} must be a SemVer version such as 1.4.0`;
      }
      return null;
    }
  }
}

/** The origin of a tile URL template ("https://tile.example.org"), or null when it is no http(s) URL. */
export function tileOrigin(template: string): string | null {
  try {
    const u = new URL(template.replaceAll('{', '').replaceAll('}', ''));
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null;
  } catch {
    return null;
  }
}
