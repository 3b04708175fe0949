/**
 * The settings registry: every setting Chorus knows, its type, range, default and the levels
 * that may hold it. Adding a setting is one entry here; storage is generic (table `settings`).
 */
export type Level = 'hub' | 'team' | 'satellite' | 'account';

export type SettingType =
  | { type: 'boolean' }
  | { type: 'integer'; min: number; max: number }
  | { type: 'number'; min: number; max: number }
  | { type: 'enum'; options: readonly string[] }
  | { type: 'enumList'; options: readonly string[]; maxItems: number };

type SettingBody = SettingType & { key: string; default: unknown; description: string };

export type SettingDef = SettingBody & { levels: readonly Level[] };

export const LANGUAGES = [
  'en', 'en-GB', 'af', 'ar', 'bg', 'ca', 'cs', 'da', 'de', 'el', 'es', 'et', 'fi', 'fr', 'he', 'hi', 'hr', 'hu',
  'id', 'is', 'it', 'ja', 'ko', 'lt', 'lv', 'ml', 'nl', 'no', 'pl', 'pt-BR', 'pt-PT', 'ro', 'ru', 'sk', 'sl',
  'sr', 'sv', 'th', 'tr', 'uk', 'vi', 'zh',
] as const;

export const DATE_FORMATS = ['YYYY-MM-DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'MM/DD/YYYY', 'D MMM YYYY', 'MMM D, YYYY'] as const;

const hubSwitch = (key: string, def: boolean, description: string): SettingDef => ({
  key, type: 'boolean', default: def, levels: ['hub'], description,
});

const preference = (def: SettingBody): SettingDef => ({ ...def, levels: ['hub', 'account'] });

export const SETTINGS: readonly SettingDef[] = [
  hubSwitch('allow_self_registration', true, 'People may create an account without an invite'),
  hubSwitch('allow_tenant_creation', true, 'Signed-in people may create teams'),
  hubSwitch('allow_public_pages', false, 'Teams may publish a public page'),
  hubSwitch('allow_public_teams', false, 'The team directory lists teams accepting newcomers'),
  preference({ key: 'primaryLanguage', type: 'enum', options: LANGUAGES, default: 'en', description: 'Language of species names and the interface' }),
  preference({ key: 'secondaryLanguages', type: 'enumList', options: LANGUAGES, maxItems: 3, default: [], description: 'Extra languages shown beside species names' }),
  preference({ key: 'dateFormatPrimary', type: 'enum', options: DATE_FORMATS, default: 'YYYY-MM-DD', description: 'Date format' }),
  preference({ key: 'dateFormatSecondary', type: 'enum', options: ['none', ...DATE_FORMATS], default: 'none', description: 'Second date format shown beside the first' }),
  preference({ key: 'timeFormat', type: 'enum', options: ['24h', '12h'], default: '24h', description: 'Clock format' }),
  preference({ key: 'startOfWeek', type: 'enum', options: ['monday', 'sunday', 'saturday'], default: 'monday', description: 'First day of the week in calendars' }),
  preference({ key: 'paperSize', type: 'enum', options: ['a4', 'letter'], default: 'a4', description: 'Paper size of PDF reports' }),
  preference({ key: 'showVoting', type: 'boolean', default: true, description: 'Show verification voting controls' }),
];

export const PREFERENCE_KEYS = SETTINGS.filter((s) => s.levels.includes('account')).map((s) => s.key);

const byKey = new Map(SETTINGS.map((s) => [s.key, s]));
export const findSetting = (key: string): SettingDef | undefined => byKey.get(key);

/** Why a value is refused for a setting, or null when it is acceptable. null values always pass (they clear). */
export function refuseValue(def: SettingDef, value: unknown): string | null {
  if (value === null) return null;
  switch (def.type) {
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a number`;
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
  }
}
