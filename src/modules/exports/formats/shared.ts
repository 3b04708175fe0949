/**
 * What the export writers share: local times in the team's zone (src/core/local-time.ts), RFC 4180 lines with formula
 * neutralisation, fixed-decimal coordinates and the rule for which rows are organisms.
 */
import type { ExportRow } from '../types.ts';

export { localDay, localStamp, localStampOffset, localTime, type LocalTime } from '../../../core/local-time.ts';

/**
 * Characters of output a writer gathers before handing it on (at most 64 KB even as UTF-16): a
 * string above V8's 128 KB regular-object limit is allocated straight into the old generation
 * when flattened for the socket or a Buffer; pieces this size start young and die there.
 */
export const PIECE_CHARS = 32 * 1024;

/** A cell written as it is: numbers formatted by the writer (coordinates with 6 decimals). */
export class Raw {
  constructor(readonly text: string) {}
}

export type Cell = string | number | boolean | null | undefined | Raw;

/**
 * `v` with `digits` decimals, rounded half away from zero on its decimal value (the digits
 * String(v) writes: 0.835 → "0.84", where toFixed, rounding the binary value 0.83499…, gives
 * "0.83"). What PostgreSQL's `round(v::text::numeric, digits)` gives, so the lines the database
 * writes and these agree (formats/lines-sql.ts).
 */
export function fixedDecimal(v: number, digits: number): string {
  const [whole, fraction = ''] = plainDecimal(Math.abs(v)).split('.');
  const kept = BigInt(whole! + fraction.padEnd(digits, '0').slice(0, digits)) + ((fraction[digits] ?? '0') >= '5' ? 1n : 0n);
  const text = kept.toString().padStart(digits + 1, '0');
  const out = `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  return v < 0 && kept > 0n ? `-${out}` : out;
}

/** String(v) without an exponent (below 1e-6 String writes `5e-7`; as PostgreSQL's numeric reads it, 0.0000005). */
function plainDecimal(v: number): string {
  const text = String(v);
  const e = text.indexOf('e-');
  if (e < 0) return text;
  const digits = text.slice(0, e).replace('.', '');
  return `0.${'0'.repeat(Number(text.slice(e + 2)) - 1)}${digits}`;
}

/** A coordinate with 6 decimals (about 0.1 m), or an empty cell. */
export const coord = (v: number | null): Raw => new Raw(v == null || !Number.isFinite(v) ? '' : fixedDecimal(v, 6));

/**
 * Spreadsheets run a cell starting with = + - @ tab or CR as a formula (OWASP "CSV injection").
 * Text gets a leading apostrophe; numbers and Raw cells are left alone, so -33.9 stays a number.
 * The one guard for every text file the exports write (CSV writers, Darwin Core's tab-separated
 * files, which spreadsheets open as readily).
 */
export function neutralise(text: string): string {
  // The first character's code, not a regular expression: every text cell of every row passes here.
  const c = text.charCodeAt(0);
  return c === 61 /* = */ || c === 43 /* + */ || c === 45 /* - */ || c === 64 /* @ */ || c === 9 /* tab */ || c === 13 /* CR */
    ? `'${text}`
    : text;
}

function cellText(c: Cell): string {
  if (c == null) return '';
  if (c instanceof Raw) return c.text;
  if (typeof c === 'number') return Number.isFinite(c) ? String(c) : '';
  if (typeof c === 'boolean') return c ? 'true' : 'false';
  return neutralise(c);
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
export const conf = (v: number): string => (Number.isFinite(v) ? fixedDecimal(v, 2) : '?');

/**
 * Rows the observation formats (iNaturalist, Darwin Core, xeno-canto) can carry: an organism
 * with a Latin binomial. Anthropogenic sounds and human voices are no occurrence of a species,
 * and BirdNET's non-species classes (`Dog`, `Engine`, …) have no scientific name to submit.
 */
export function isOrganism(row: ExportRow): boolean {
  return row.category !== 'anthropogenic' && row.category !== 'human_voice' && /^[A-Z][a-z-]+ [a-z-]+/.test(row.scientificName);
}

/**
 * A sensitive species' row generalised for outside eyes (exports generalise.ts generaliseRow): its
 * chunk is withheld, and with it the audio link and the recording.
 */
export const isGeneralised = (row: Pick<ExportRow, 'chunkId'>): boolean => row.chunkId === '';

/** Why a row or species was left out of a submission file. */
export type SkipReason = 'not_a_bird' | 'not_in_ebird_taxonomy' | 'not_a_species' | 'rejected' | 'audio_missing' | 'sensitive_species';

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
