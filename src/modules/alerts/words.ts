/**
 * The words the hub writes into alerts (issue 36 point 5): titles, messages, the labels of chat
 * cards and e-mails, in the team's language (team setting `team_language`) with times in the
 * team's zone as people read them ("28 Nov 2026, 06:42 CET"), never ISO. Machine fields (a
 * webhook body's `timestamp`, Discord's embed timestamp) stay ISO: only human text is here.
 */
import type { AlertEvent } from './schemas.ts';
import type { TEAM_LANGUAGES } from '../settings/registry.ts';

export type AlertLanguage = (typeof TEAM_LANGUAGES)[number];

/** The team's words and clock, read once per finding. */
export interface TeamLocale {
  language: AlertLanguage;
  timeZone: string;
}

export const DEFAULT_LOCALE: TeamLocale = Object.freeze({ language: 'en', timeZone: 'UTC' });

const INTL_LOCALE: Record<AlertLanguage, string> = { en: 'en-GB', de: 'de-DE' };

interface Words {
  label: Record<AlertEvent, string>;
  /** The kind word of a detection message for events without their own (custom rules). */
  detectionWord: string;
  detection: (kind: string, commonName: string, confidence: string, satellite: string | null) => string;
  offline: (satellite: string, lastSeen: string) => string;
  absence: (what: string | null, where: string | null, span: string) => string;
  trend: (
    metric: 'diversity' | 'detections',
    direction: 'fall' | 'rise',
    percent: string,
    before: string,
    after: string,
    span: string,
  ) => string;
  minutes: (n: number) => string;
  hours: (n: number) => string;
  fact: { species: string; confidence: string; satellite: string; rule: string; team: string; time: string };
  open: string;
  testMessage: (commonName: string, confidence: string, satellite: string) => string;
  emailReason: (rule: string, team: string) => string;
}

const EN: Words = {
  label: {
    rare_species: 'Rare species',
    first_of_day: 'First of the day',
    first_of_season: 'First of the season',
    satellite_offline: 'Satellite offline',
    absence: 'Species absent',
    trend: 'Trend',
    custom_rule: 'Alert',
    test: 'Test alert',
  },
  detectionWord: 'Detection',
  detection: (kind, name, conf, sat) => `${kind}: ${name} (${conf})${sat === null ? '' : ` at ${sat}`}`,
  offline: (sat, last) => `Satellite offline: ${sat} (last seen ${last})`,
  absence: (what, where, span) => `No detection of ${what ?? 'anything'}${where === null ? '' : ` from ${where}`} for ${span}`,
  trend: (metric, dir, pct, before, after, span) =>
    `${metric === 'diversity' ? 'Species diversity' : 'Detections'} ${dir === 'fall' ? 'fell' : 'rose'} ${pct} (${before} → ${after}) over the last ${span}`,
  minutes: (n) => `${n} min`,
  hours: (n) => `${n} h`,
  fact: { species: 'Species', confidence: 'Confidence', satellite: 'Satellite', rule: 'Rule', team: 'Team', time: 'Time' },
  open: 'Open in Chorus',
  testMessage: (name, conf, sat) => `Test alert: ${name} (${conf}) at ${sat}`,
  emailReason: (rule, team) => `You receive this because the alert rule "${rule}" of ${team} names this address.`,
};

const DE: Words = {
  label: {
    rare_species: 'Seltene Art',
    first_of_day: 'Erste des Tages',
    first_of_season: 'Erste der Saison',
    satellite_offline: 'Satellit offline',
    absence: 'Art fehlt',
    trend: 'Trend',
    custom_rule: 'Alarm',
    test: 'Testalarm',
  },
  detectionWord: 'Erkennung',
  detection: (kind, name, conf, sat) => `${kind}: ${name} (${conf})${sat === null ? '' : ` bei ${sat}`}`,
  offline: (sat, last) => `Satellit offline: ${sat} (zuletzt gesehen ${last})`,
  absence: (what, where, span) =>
    what === null
      ? `Keine Erkennung${where === null ? '' : ` von ${where}`} seit ${span}`
      : `Keine Erkennung von ${what}${where === null ? '' : ` bei ${where}`} seit ${span}`,
  trend: (metric, dir, pct, before, after, span) =>
    `${metric === 'diversity' ? 'Artenvielfalt' : 'Erkennungen'} ${dir === 'fall' ? 'gesunken' : 'gestiegen'} um ${pct} (${before} → ${after}) in den letzten ${span}`,
  minutes: (n) => `${n} Min.`,
  hours: (n) => `${n} Std.`,
  fact: { species: 'Art', confidence: 'Konfidenz', satellite: 'Satellit', rule: 'Regel', team: 'Team', time: 'Zeit' },
  open: 'In Chorus öffnen',
  testMessage: (name, conf, sat) => `Testalarm: ${name} (${conf}) bei ${sat}`,
  emailReason: (rule, team) => `Sie erhalten diese Nachricht, weil die Alarmregel „${rule}“ von ${team} diese Adresse nennt.`,
};

const WORDS: Record<AlertLanguage, Words> = { en: EN, de: DE };

/** Words of a language; an unknown one (a payload stored before a language existed) reads English. */
export const wordsOf = (language: string | undefined): Words => WORDS[language as AlertLanguage] ?? EN;

/** A confidence in the language's decimals: 0.91 / 0,91. */
export function formatConfidence(value: number, language: string | undefined): string {
  return new Intl.NumberFormat(INTL_LOCALE[language as AlertLanguage] ?? 'en-GB', {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  }).format(value);
}

/** A whole number with the language's grouping (1,234 / 1.234). */
export const formatCount = (value: number, language: string | undefined): string =>
  new Intl.NumberFormat(INTL_LOCALE[language as AlertLanguage] ?? 'en-GB').format(value);

/** A percentage in the language's form: 75% / 75 %. */
export const formatPercent = (percent: number, language: string | undefined): string =>
  new Intl.NumberFormat(INTL_LOCALE[language as AlertLanguage] ?? 'en-GB', { style: 'percent', maximumFractionDigits: 0 }).format(
    percent / 100,
  );

/** A span of minutes in hours and minutes: "2 h", "45 min", "2 h 1 min". */
export function formatSpan(minutes: number, language: string | undefined): string {
  const w = wordsOf(language);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h === 0) return w.minutes(m);
  return m === 0 ? w.hours(h) : `${w.hours(h)} ${w.minutes(m)}`;
}

/**
 * An instant as people read it, in the zone and language: "28 Nov 2026, 06:42 CET" /
 * "28. Nov. 2026, 06:42 MEZ". An unknown zone falls back to UTC rather than failing a delivery.
 */
export function formatWhen(at: Date | string, locale: { language?: string; timeZone?: string } | undefined): string {
  const date = typeof at === 'string' ? new Date(at) : at;
  if (Number.isNaN(date.getTime())) return String(at);
  const options: Intl.DateTimeFormatOptions = {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  };
  const lang = INTL_LOCALE[locale?.language as AlertLanguage] ?? 'en-GB';
  try {
    return new Intl.DateTimeFormat(lang, { ...options, timeZone: locale?.timeZone ?? 'UTC' }).format(date);
  } catch {
    return new Intl.DateTimeFormat(lang, { ...options, timeZone: 'UTC' }).format(date);
  }
}
