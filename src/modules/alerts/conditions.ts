/**
 * What a rule matches, as pure functions: the engine calls them for every announced detection,
 * so they read only values already in memory (bench/alerts.ts measures them).
 */
import type { RuleRow } from './repo.ts';
import { localTime } from '../../core/local-time.ts';
import { formatConfidence, wordsOf, type AlertLanguage } from './words.ts';

import type { AlertEvent, DailyWindow } from './schemas.ts';

/** A detection as the rules see it. */
export interface DetectionFacts {
  id: string;
  tenantId: string;
  satelliteId: string;
  satelliteName: string;
  speciesCode: string;
  scientificName: string;
  commonName: string;
  category: string;
  modelId: string | null;
  confidence: number;
  isRare: boolean;
  isFirstOfDay: boolean;
  isFirstOfSeason: boolean;
  detectedAt: string;
}

/** Announced: the Detections page lists it now. Confirmed: the team's votes confirmed it. */
export type DetectionTrigger = 'announced' | 'confirmed';

export function eventOfRule(r: Pick<RuleRow, 'type' | 'conditions'>): AlertEvent {
  if (r.type === 'trend') return 'trend';
  if (r.type === 'absence') return r.conditions.system === 'satellite_offline' ? 'satellite_offline' : 'absence';
  return r.conditions.system && r.conditions.system !== 'satellite_offline' ? r.conditions.system : 'custom_rule';
}

const lower = (s: string) => s.toLowerCase();

/**
 * Whether a detection rule fires for this detection. `calibrated` is read only when the rule
 * compares calibrated confidence (the caller computes it lazily, once per detection).
 */
export function matchesDetection(rule: RuleRow, d: DetectionFacts, trigger: DetectionTrigger, calibrated: () => number): boolean {
  if (rule.type !== 'detection' || !rule.enabled) return false;
  const c = rule.conditions;
  if ((c.verifiedOnly === true) !== (trigger === 'confirmed')) return false;
  if (c.system === 'rare_species' && !d.isRare) return false;
  if (c.system === 'first_of_day' && !d.isFirstOfDay) return false;
  if (c.system === 'first_of_season' && !d.isFirstOfSeason) return false;
  if (c.rareOnly && !d.isRare) return false;
  if (c.firstOfDay && !d.isFirstOfDay) return false;
  if (c.firstOfSeason && !d.isFirstOfSeason) return false;
  if (c.satelliteIds?.length && !c.satelliteIds.includes(d.satelliteId)) return false;
  if (c.categories?.length && !c.categories.includes(d.category)) return false;
  if (c.species?.length) {
    const code = lower(d.speciesCode);
    const sci = lower(d.scientificName);
    if (!c.species.some((s) => lower(s) === code || lower(s) === sci)) return false;
  }
  if (c.minConfidence !== undefined) {
    const value = c.confidenceKind === 'calibrated' ? calibrated() : d.confidence;
    if (value < c.minConfidence) return false;
  }
  return true;
}

/** The cooldown counts per rule and satellite, or per rule and species. */
export const cooldownKeyOf = (rule: Pick<RuleRow, 'cooldownScope'>, satelliteId: string | null, speciesCode: string | null) =>
  rule.cooldownScope === 'satellite' ? `satellite:${satelliteId ?? 'team'}` : `species:${speciesCode ?? 'any'}`;

/** Minutes since midnight at `at` in the time zone. */
export function minuteOfDay(at: Date, timeZone: string): number {
  const { time } = localTime(at, timeZone);
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Whether `at` falls in the daily window, in the time zone; a start after the end wraps past midnight. */
export function inWindow(w: DailyWindow, at: Date, timeZone: string): boolean {
  const m = minuteOfDay(at, timeZone);
  const start = minutesOf(w.start);
  const end = minutesOf(w.end);
  if (start === end) return true;
  return start < end ? m >= start && m < end : m >= start || m < end;
}

/** A null satelliteName leaves the place out (a sensitive species' delivery); words in the team's language. */
export function describeDetection(
  event: AlertEvent,
  d: Pick<DetectionFacts, 'commonName' | 'confidence'> & { satelliteName: string | null },
  language: AlertLanguage = 'en',
): string {
  const w = wordsOf(language);
  const kind = event === 'rare_species' || event === 'first_of_day' || event === 'first_of_season' ? w.label[event] : w.detectionWord;
  return w.detection(kind, d.commonName, formatConfidence(d.confidence, language), d.satelliteName);
}
