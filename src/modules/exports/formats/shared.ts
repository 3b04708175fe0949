/**
 * What the export writers share: local times in the team's zone, RFC 4180 lines with formula
 * neutralisation, fixed-decimal coordinates and the rule for which rows are organisms.
 */
import type { ExportRow } from '../types.ts';

export interface LocalTime {
  /** YYYY-MM-DD */
  date: string;
  /** HH:MM:SS (24 h) */
  time: string;
  /** ±HH:MM, the zone's offset at that instant */
  offset: string;
  /** Days since 1970-01-01 of the local date: compares local days across rows. */
  day: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

const SLOT_MS = 15 * 60_000;
/** Offsets by zone and 15-minute slot: every zone's offset changes only on a quarter hour. */
const offsets = new Map<string, Map<number, number>>();

/** The zone's offset from UTC in minutes at an instant (Intl once per zone and quarter hour). */
function offsetMinutes(ms: number, timeZone: string): number {
  let byZone = offsets.get(timeZone);
  if (!byZone) offsets.set(timeZone, (byZone = new Map()));
  const slot = Math.floor(ms / SLOT_MS);
  let minutes = byZone.get(slot);
  if (minutes === undefined) {
    const at = slot * SLOT_MS;
    const p: Record<string, number> = {};
    for (const part of formatter(timeZone).formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
    minutes = Math.round((Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - at) / 60_000);
    if (byZone.size > 100_000) byZone.clear();
    byZone.set(slot, minutes);
  }
  return minutes;
}

/** An instant (ISO string or Date) as a wall-clock time in an IANA zone. */
export function localTime(at: string | Date, timeZone: string): LocalTime {
  const ms = typeof at === 'string' ? Date.parse(at) : at.getTime();
  const minutes = offsetMinutes(ms, timeZone);
  // The wall clock as if it were UTC: its UTC fields are the local date and time.
  const wall = new Date(Math.floor(ms / 1000) * 1000 + minutes * 60_000);
  const abs = Math.abs(minutes);
  return {
    date: `${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}`,
    time: `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}`,
    offset: `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`,
    day: Math.floor(wall.getTime() / 86_400_000),
  };
}

/** A cell written as it is: numbers formatted by the writer (coordinates with 6 decimals). */
export class Raw {
  constructor(readonly text: string) {}
}

export type Cell = string | number | boolean | null | undefined | Raw;

/** A coordinate with 6 decimals (about 0.1 m), or an empty cell. */
export const coord = (v: number | null): Raw => new Raw(v == null || !Number.isFinite(v) ? '' : v.toFixed(6));

/**
 * Spreadsheets run a cell starting with = + - @ tab or CR as a formula (OWASP "CSV injection").
 * Text cells get a leading apostrophe; numbers and Raw cells are left alone, so -33.9 stays a number.
 */
const FORMULA = /^[=+\-@\t\r]/;

function cellText(c: Cell): string {
  if (c == null) return '';
  if (c instanceof Raw) return c.text;
  if (typeof c === 'number') return Number.isFinite(c) ? String(c) : '';
  if (typeof c === 'boolean') return c ? 'true' : 'false';
  return FORMULA.test(c) ? `'${c}` : c;
}

/** One RFC 4180 record, CRLF-terminated: a field with a quote, comma, CR or LF is quoted. */
export function csvLine(cells: readonly Cell[]): string {
  return (
    cells
      .map((c) => {
        const t = cellText(c);
        return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
      })
      .join(',') + '\r\n'
  );
}

/** 0.9312 → "0.93": confidences in prose. */
export const conf = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '?');

/**
 * Rows the observation formats (iNaturalist, Darwin Core, xeno-canto) can carry: an organism
 * with a Latin binomial. Anthropogenic sounds and human voices are no occurrence of a species,
 * and BirdNET's non-species classes (`Dog`, `Engine`, …) have no scientific name to submit.
 */
export function isOrganism(row: ExportRow): boolean {
  return row.category !== 'anthropogenic' && row.category !== 'human_voice' && /^[A-Z][a-z-]+ [a-z-]+/.test(row.scientificName);
}

/** Why a row or species was left out of a submission file. */
export type SkipReason = 'not_a_bird' | 'not_in_ebird_taxonomy' | 'not_a_species' | 'rejected' | 'audio_missing';

export interface SkippedSpecies {
  speciesCode: string;
  commonName: string;
  reason: SkipReason;
  count: number;
}

/** Counts left-out rows per species and reason; small (one entry per species), so kept whole. */
export class SkipTally {
  private readonly map = new Map<string, SkippedSpecies>();

  add(row: ExportRow, reason: SkipReason): void {
    const key = `${row.speciesCode}\u0000${reason}`;
    const hit = this.map.get(key);
    if (hit) hit.count++;
    else this.map.set(key, { speciesCode: row.speciesCode, commonName: row.commonName, reason, count: 1 });
  }

  list(): SkippedSpecies[] {
    return [...this.map.values()].sort((a, b) => b.count - a.count || a.speciesCode.localeCompare(b.speciesCode));
  }

  get total(): number {
    let n = 0;
    for (const s of this.map.values()) n += s.count;
    return n;
  }
}
