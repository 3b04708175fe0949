/**
 * What the PDF detections report shows (issue 18), and the accumulator that builds it from the
 * export rows in one pass. The accumulator reads each row once and keeps only aggregates: one entry
 * per species, per local day, per local hour and per satellite (never the rows), so a report over
 * a year of detections costs memory in proportion to the species and days, not the calls.
 *
 * Rules:
 * - Only rows whose detectedAt lies in [period.start, period.end) count; others are skipped, so the
 *   totals, the trend and the hourly chart always add up to the same number.
 * - Local days and hours are those of `timeZone` (Intl.DateTimeFormat); a call is placed by when it
 *   starts (detectedAt).
 * - `daily` holds every local day from the day period.start falls on to the day of the last instant
 *   before period.end, zeros included. When that is more than 366 days, the entries are 7-day buckets
 *   instead (`trendBucket: 'week'`): each `day` is the first day of its bucket, counted from the first
 *   day of the period; the last bucket may be shorter.
 * - A species is keyed by speciesCode, a satellite by satelliteId (its name is the last one seen).
 * - firstAt/lastAt are the detectedAt (ISO UTC) of the species' first and last call in the period;
 *   bestConfidence is the highest calibratedConfidence (what the Detections page shows).
 * - Ordering: species and topSpecies by count, most first, then common name; satellites by
 *   detections, most first, then name. topSpecies is at most 10.
 */
import type { ExportRow } from '../types.ts';
import { localTime } from '../../../core/local-time.ts';

export type ReportLanguage = 'en' | 'de';
export type PaperSize = 'a4' | 'letter';

export interface ReportData {
  teamName: string;
  /** e.g. "Detections report". */
  title: string;
  /** ISO 8601 UTC; end exclusive. */
  period: { start: string; end: string };
  /** IANA zone: local dates and hours in the report. */
  timeZone: string;
  /** ISO 8601. */
  generatedAt: string;
  paperSize: PaperSize;
  /** Labels; default en. */
  language?: ReportLanguage;
  totals: { detections: number; species: number; satellites: number; confirmed: number };
  /** Most first, at most 10. */
  topSpecies: Array<{ commonName: string; scientificName: string; count: number }>;
  /** Every local day (YYYY-MM-DD) of the period, zeros included; 7-day buckets when the period exceeds 366 days. */
  daily: Array<{ day: string; count: number }>;
  /** What a `daily` entry covers: one day, or 7 days from `day` (periods longer than 366 days). Default 'day'. */
  trendBucket?: 'day' | 'week';
  /** 24 local hours, 0 to 23. */
  hourly: number[];
  satellites: Array<{ name: string; detections: number; species: number }>;
  /** All species, by count. */
  species: Array<{
    commonName: string;
    scientificName: string;
    count: number;
    firstAt: string;
    lastAt: string;
    bestConfidence: number;
  }>;
}

export interface ReportOptions {
  teamName: string;
  title: string;
  period: { start: string; end: string };
  timeZone: string;
  paperSize: PaperSize;
  language?: ReportLanguage;
  now: Date;
}

export interface ReportAccumulator {
  /** Folds a batch of rows into the aggregates; the rows are not kept. */
  add(rows: readonly ExportRow[]): void;
  /** The report of everything added so far (may be called more than once). */
  finish(): ReportData;
}

/** The longest period drawn day by day; longer periods are drawn in 7-day buckets. */
export const MAX_DAILY_DAYS = 366;
export const TOP_SPECIES = 10;

const DAY_MS = 86_400_000;

export interface LocalParts {
  /** YYYY-MM-DD */
  day: string;
  /** 0..23 */
  hour: number;
  /** HH:MM */
  time: string;
}

/**
 * Local calendar day, hour and time of an instant in an IANA zone (src/core/local-time.ts: one
 * Intl lookup per zone and quarter hour). Throws a RangeError for an unknown zone.
 */
export function zonedClock(timeZone: string): (ms: number) => LocalParts {
  new Intl.DateTimeFormat('en-US', { timeZone }); // refuses an unknown zone now, not at the first row
  return (ms: number) => {
    const t = localTime(new Date(ms), timeZone);
    return { day: t.date, hour: Number(t.time.slice(0, 2)), time: t.time.slice(0, 5) };
  };
}

/** Days from the epoch of a YYYY-MM-DD calendar date (zone-free date arithmetic). */
function dayNumber(day: string): number {
  const [y, m, d] = day.split('-').map(Number);
  return Math.round(Date.UTC(y, m - 1, d) / DAY_MS);
}

function dayString(n: number): string {
  return new Date(n * DAY_MS).toISOString().slice(0, 10);
}

function parseInstant(iso: string, what: string): number {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) throw new RangeError(`${what} is not a date: ${iso}`);
  return ms;
}

/** The first and last local day of a period (end exclusive). */
export function periodDays(period: { start: string; end: string }, timeZone: string): { first: string; last: string } {
  const clock = zonedClock(timeZone);
  const start = parseInstant(period.start, 'period.start');
  const end = parseInstant(period.end, 'period.end');
  return { first: clock(start).day, last: clock(Math.max(start, end - 1)).day };
}

interface SpeciesAgg {
  commonName: string;
  scientificName: string;
  count: number;
  firstMs: number;
  firstAt: string;
  lastMs: number;
  lastAt: string;
  best: number;
}

interface SatelliteAgg {
  name: string;
  detections: number;
  species: Set<string>;
}

export function createReportAccumulator(opts: ReportOptions): ReportAccumulator {
  const start = parseInstant(opts.period.start, 'period.start');
  const end = parseInstant(opts.period.end, 'period.end');
  if (!(end > start)) throw new RangeError('period.end must be after period.start');
  const clock = zonedClock(opts.timeZone);
  const firstDay = dayNumber(clock(start).day);
  const lastDay = dayNumber(clock(end - 1).day);

  const species = new Map<string, SpeciesAgg>();
  const satellites = new Map<string, SatelliteAgg>();
  const perDay = new Map<string, number>();
  const hourly: number[] = new Array(24).fill(0);
  let detections = 0;
  let confirmed = 0;

  function add(rows: readonly ExportRow[]): void {
    for (const row of rows) {
      const ms = Date.parse(row.detectedAt);
      if (!(ms >= start && ms < end)) continue;
      detections++;
      if (row.verificationStatus === 'confirmed') confirmed++;
      const local = clock(ms);
      perDay.set(local.day, (perDay.get(local.day) ?? 0) + 1);
      hourly[local.hour]++;

      const sp = species.get(row.speciesCode);
      if (!sp) {
        species.set(row.speciesCode, {
          commonName: row.commonName,
          scientificName: row.scientificName,
          count: 1,
          firstMs: ms,
          firstAt: row.detectedAt,
          lastMs: ms,
          lastAt: row.detectedAt,
          best: row.calibratedConfidence,
        });
      } else {
        sp.count++;
        if (ms < sp.firstMs) {
          sp.firstMs = ms;
          sp.firstAt = row.detectedAt;
        }
        if (ms > sp.lastMs) {
          sp.lastMs = ms;
          sp.lastAt = row.detectedAt;
        }
        if (row.calibratedConfidence > sp.best) sp.best = row.calibratedConfidence;
      }

      let sat = satellites.get(row.satelliteId);
      if (!sat) {
        sat = { name: row.satelliteName, detections: 0, species: new Set() };
        satellites.set(row.satelliteId, sat);
      }
      sat.name = row.satelliteName;
      sat.detections++;
      sat.species.add(row.speciesCode);
    }
  }

  function trend(): { daily: ReportData['daily']; bucket: 'day' | 'week' } {
    const days = lastDay - firstDay + 1;
    const step = days > MAX_DAILY_DAYS ? 7 : 1;
    const daily: ReportData['daily'] = [];
    for (let d = firstDay; d <= lastDay; d += step) daily.push({ day: dayString(d), count: 0 });
    for (const [day, count] of perDay) {
      const i = Math.floor((dayNumber(day) - firstDay) / step);
      if (i >= 0 && i < daily.length) daily[i].count += count;
    }
    return { daily, bucket: step === 1 ? 'day' : 'week' };
  }

  function finish(): ReportData {
    const byCount = [...species.values()].sort((a, b) => b.count - a.count || compareText(a.commonName, b.commonName));
    const { daily, bucket } = trend();
    return {
      teamName: opts.teamName,
      title: opts.title,
      period: { start: opts.period.start, end: opts.period.end },
      timeZone: opts.timeZone,
      generatedAt: opts.now.toISOString(),
      paperSize: opts.paperSize,
      language: opts.language ?? 'en',
      totals: { detections, species: species.size, satellites: satellites.size, confirmed },
      topSpecies: byCount
        .slice(0, TOP_SPECIES)
        .map((s) => ({ commonName: s.commonName, scientificName: s.scientificName, count: s.count })),
      daily,
      trendBucket: bucket,
      hourly: [...hourly],
      satellites: [...satellites.values()]
        .sort((a, b) => b.detections - a.detections || compareText(a.name, b.name))
        .map((s) => ({ name: s.name, detections: s.detections, species: s.species.size })),
      species: byCount.map((s) => ({
        commonName: s.commonName,
        scientificName: s.scientificName,
        count: s.count,
        firstAt: s.firstAt,
        lastAt: s.lastAt,
        bestConfidence: s.best,
      })),
    };
  }

  return { add, finish };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
