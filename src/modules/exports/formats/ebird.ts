/**
 * eBird Record Format (Extended): the CSV eBird's "Import data" accepts (FORMATS.md). No header,
 * 19 columns, one line per species per checklist.
 *
 * A checklist is one satellite on one local day (team time zone): a recorder sits in one place,
 * so the day's detections are one stationary count from the first call's start to the last
 * call's end. eBird merges lines sharing location, date, start time and protocol, so each
 * checklist has one start time (its first detection) on all its lines.
 *
 * Country and State come from the satellite's position, looked up offline (ebirdPlace); both
 * are empty for a position off the mapped land, and eBird's import then asks for them.
 * Only birds in eBird's taxonomy are written; everything else is counted in skipped().
 *
 * eBird's import splits lines on commas and wants no quotation marks and no line breaks in the
 * data (FORMATS.md), so no value is ever quoted: each is written so that it needs no quoting
 * (ebirdValue). Files of more than 1 MB are split by the renderer (parts.ts).
 */
import type { ExportContext, ExportRow, RowSource } from '../types.ts';
import { ebirdTaxon, type EbirdTaxon } from './ebird-names.ts';
import { placeAt } from '../../places/index.ts';
import { WITHHELD } from '../../sensitive/service.ts';
import { conf, coord, localDay, localTime, neutralise, Raw, SkipTally, type SkippedSpecies } from './shared.ts';

export const EBIRD_COLUMNS = [
  'Common Name',
  'Genus',
  'Species',
  'Number',
  'Species Comments',
  'Location Name',
  'Latitude',
  'Longitude',
  'Date',
  'Start Time',
  'State/Province',
  'Country Code',
  'Protocol',
  'Number of Observers',
  'Duration (minutes)',
  'All observations reported?',
  'Effort Distance Miles',
  'Effort area acres',
  'Submission Comments',
] as const;

/** eBird's import takes files up to 1 MB (FORMATS.md); counted in bytes of UTF-8, decimal megabyte to be safe. */
export const EBIRD_MAX_FILE_BYTES = 1_000_000;

/** Anything ebirdValue would change before the formula guard: most values have none of it and skip the replacing. */
const EBIRD_UNPLAIN = /[\r\n\t\v\f\u0085\u2028\u2029",]| {2}|^\s|\s$/;

/**
 * A value that needs no quoting in eBird's comma-split lines: line breaks and tabs become one
 * space, double quotes single quotes, commas semicolons; then the formula guard (a spreadsheet
 * opens this file too), after trimming, so a value that started with a space or tab before `=`
 * is still caught.
 */

export function ebirdValue(text: string): string {
  if (!EBIRD_UNPLAIN.test(text)) return neutralise(text);
  const plain = text
    .replace(/[\r\n\t\v\f\u0085\u2028\u2029]+/g, ' ')
    .replace(/"/g, "'")
    .replace(/,/g, ';')
    .replace(/ {2,}/g, ' ')
    .trim();
  return neutralise(plain);
}

/**
 * State/Province and Country Code from the satellite's position, offline (src/modules/places):
 * the country as ISO 3166-1 alpha-2 ("DE"), the state as the ISO 3166-2 first-level code
 * without its country prefix ("NW" for DE-NW), the short code eBird's Record Format asks for
 * beside the country (FORMATS.md: "NY" with "US"). Both empty off the mapped land.
 */
export function ebirdPlace(latitude: number | null, longitude: number | null): { state: string; country: string } {
  const p = placeAt(latitude, longitude);
  if (!p) return { state: '', country: '' };
  return { state: p.subdivision.slice(p.country.length + 1), country: p.country };
}

type EbirdCell = string | number | Raw;

/** One line of 19 comma-separated values, CRLF-terminated, nothing quoted. */
function ebirdLine(cells: readonly EbirdCell[]): string {
  let out = '';
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i]!;
    if (i) out += ',';
    out += c instanceof Raw ? c.text : typeof c === 'number' ? (Number.isFinite(c) ? String(c) : '') : ebirdValue(c);
  }
  return out + '\r\n';
}

export interface EbirdOptions {
  /** 'presence' (default): Number is `X`. 'calls': the number of calls (rows) that day. */
  counts?: 'presence' | 'calls';
}

export interface EbirdExport {
  /** The file's lines, one array per finished checklist (a part never splits one that fits whole). */
  chunks: AsyncGenerator<string[]>;
  /** Species left out and why; complete once `chunks` has been read to the end. */
  skipped(): SkippedSpecies[];
  /** Checklists written so far. */
  checklists(): number;
}

interface SpeciesTally {
  taxon: EbirdTaxon;
  calls: number;
  bestConfidence: number;
  bestModel: string;
  /** The three most confident detections: the links a reviewer opens first. */
  top: { id: string; confidence: number }[];
}

/** What a checklist keeps: per species a few numbers, never the rows themselves. */
interface Checklist {
  day: number;
  satelliteName: string;
  satelliteId: string;
  latitude: number | null;
  longitude: number | null;
  firstMs: number;
  lastEndMs: number;
  date: string;
  startTime: string;
  models: Set<string>;
  calls: number;
  species: Map<string, SpeciesTally>;
  /** The position its rows carry (its key's; `latitude` is the first non-null one): a row of the same satellite and day finds it by these. */
  rowLatitude: number | null;
  rowLongitude: number | null;
  /** Rendered and left: a late row of its day opens a new list, as it would by key. */
  done: boolean;
}

/** Code point order (UTF-8 bytes compare as code points do): the database sorts names by bytes (COLLATE "C"). */
const byCodePoints = (a: string, b: string) => (a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b)));
/** A position's order: by number, an absent one last. */
const byNumber = (a: number | null, b: number | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a - b);

/**
 * The file's order of checklists: local day, satellite name, satellite, position — the order of
 * the key the database groups them by (ebird-lines.ts), so both writers make the same file.
 * Generalised checklists share the withheld id, which sorts after every real one.
 */
function byChecklist(a: Checklist, b: Checklist): number {
  return (
    a.day - b.day ||
    byCodePoints(a.satelliteName, b.satelliteName) ||
    (a.satelliteId === b.satelliteId
      ? 0
      : a.satelliteId === WITHHELD
        ? 1
        : b.satelliteId === WITHHELD
          ? -1
          : a.satelliteId < b.satelliteId
            ? -1
            : 1) ||
    byNumber(a.rowLatitude, b.rowLatitude) ||
    byNumber(a.rowLongitude, b.rowLongitude)
  );
}

function addRow(list: Checklist, taxon: EbirdTaxon, r: ExportRow): void {
  list.lastEndMs = Math.max(list.lastEndMs, Date.parse(r.endAt), Date.parse(r.detectedAt));
  if (list.latitude == null && r.latitude != null && r.longitude != null) {
    list.latitude = r.latitude;
    list.longitude = r.longitude;
  }
  list.models.add(r.modelId);
  list.calls++;
  let s = list.species.get(taxon.code);
  if (!s) {
    s = { taxon, calls: 0, bestConfidence: -Infinity, bestModel: r.modelId, top: [] };
    list.species.set(taxon.code, s);
  }
  s.calls++;
  if (r.confidence > s.bestConfidence) {
    s.bestConfidence = r.confidence;
    s.bestModel = r.modelId;
  }
  // Kept sorted, most confident first; a row below the third is not even looked at again.
  if (s.top.length === 3 && r.confidence <= s.top[2]!.confidence) return;
  let i = s.top.length;
  while (i > 0 && s.top[i - 1]!.confidence < r.confidence) i--;
  s.top.splice(i, 0, { id: r.id, confidence: r.confidence });
  if (s.top.length > 3) s.top.length = 3;
}

function render(list: Checklist, ctx: ExportContext, opts: EbirdOptions): string[] {
  // At least a minute (eBird wants a positive effort), at most a day (a stationary count's limit).
  const minutes = Math.min(1440, Math.max(1, Math.ceil((list.lastEndMs - list.firstMs) / 60_000)));
  // Written without commas or double quotes: ebirdValue would replace them anyway.
  const models = [...list.models].sort().join('; ');
  const submission =
    `Automated acoustic monitoring by Chorus satellite '${list.satelliteName}' (team ${ctx.teamName}). ` +
    `Species identified by machine learning (${list.models.size > 1 ? 'models' : 'model'} ${models}) from ${list.calls} ` +
    `${list.calls === 1 ? 'call' : 'calls'}; an automated recorder does not report every species present.`;
  const place = ebirdPlace(list.latitude, list.longitude);
  const out: string[] = [];
  const species = [...list.species.values()].sort((a, b) => a.taxon.taxonomicOrder - b.taxon.taxonomicOrder);
  for (const s of species) {
    const sci = s.taxon.scientificName;
    const cut = sci.indexOf(' ');
    const links = s.top.map((t) => ctx.detectionUrl(t.id)).join(' ');
    const comment =
      `Detected acoustically by Chorus (model ${s.bestModel}; best confidence ${conf(s.bestConfidence)}); ` +
      `${s.calls} ${s.calls === 1 ? 'call' : 'calls'}; ${links}`;
    out.push(
      ebirdLine([
        s.taxon.commonName,
        cut > 0 ? sci.slice(0, cut) : sci,
        cut > 0 ? sci.slice(cut + 1) : '',
        opts.counts === 'calls' ? s.calls : 'X',
        comment,
        list.satelliteName,
        coord(list.latitude),
        coord(list.longitude),
        list.date,
        list.startTime,
        place.state,
        place.country,
        'Stationary',
        1,
        minutes,
        'N',
        '',
        '',
        submission,
      ]),
    );
  }
  return out;
}

/**
 * Streams the checklists. Rows come oldest first, so a checklist is finished once rows of a
 * later day arrive. One day stays open behind the current one: if a zone's clocks ever go back
 * across midnight (00:30 back to 23:30, say), the local day steps back by one, and that late
 * row must still join its checklist. Memory is per open satellite-day and species, not per row.
 */
export function ebirdChecklist(rows: RowSource, ctx: ExportContext, opts: EbirdOptions = {}): EbirdExport {
  const skips = new SkipTally();
  let written = 0;

  async function* chunks(): AsyncGenerator<string[]> {
    const open = new Map<string, Checklist>();
    /** Each satellite's list of its last row: rows of one satellite, day and place find theirs without a key string. */
    const recent = new Map<string, Checklist>();
    let latestDay = -Infinity;
    const flush = function* (before: number): Generator<string[]> {
      const done = [...open.entries()].filter(([, l]) => l.day < before);
      done.sort(([, a], [, b]) => byChecklist(a, b));
      for (const [key, list] of done) {
        open.delete(key);
        list.done = true;
        if (list.species.size === 0) continue;
        written++;
        yield render(list, ctx, opts);
      }
    };
    for await (const batch of rows) {
      const out: string[][] = [];
      for (const r of batch) {
        if (r.verificationStatus === 'rejected') {
          skips.add(r, 'rejected');
          continue;
        }
        if (r.category !== 'bird') {
          skips.add(r, 'not_a_bird');
          continue;
        }
        const taxon = ebirdTaxon(r.speciesCode);
        if (!taxon) {
          skips.add(r, 'not_in_ebird_taxonomy');
          continue;
        }
        // The local day alone on every row; its date and time only for a row that opens a checklist.
        const day = localDay(r.detectedAt, ctx.timeZone);
        if (day > latestDay) {
          latestDay = day;
          for (const lines of flush(day - 1)) out.push(lines);
        }
        // Withheld rows (sensitive species) share one satellite id: their grid cell keeps places apart.
        let list = recent.get(r.satelliteId);
        if (!list || list.done || list.day !== day || list.rowLatitude !== r.latitude || list.rowLongitude !== r.longitude) {
          const key = `${r.satelliteId}\u0000${r.latitude},${r.longitude}\u0000${day}`;
          list = open.get(key);
          if (!list) {
            list = opened(r);
            open.set(key, list);
          }
          recent.set(r.satelliteId, list);
        }
        addRow(list, taxon, r);
      }
      yield* out;
    }
    yield* flush(Infinity);
  }

  /** A new checklist for the row's satellite, place and local day. */
  function opened(r: ExportRow): Checklist {
    const t = localTime(r.detectedAt, ctx.timeZone);
    const [y, m, d] = t.date.split('-');
    return {
      day: t.day,
      satelliteName: r.satelliteName,
      satelliteId: r.satelliteId,
      latitude: null,
      longitude: null,
      firstMs: Date.parse(r.detectedAt),
      lastEndMs: Date.parse(r.detectedAt),
      date: `${m}/${d}/${y}`,
      startTime: t.time.slice(0, 5),
      models: new Set(),
      calls: 0,
      species: new Map(),
      rowLatitude: r.latitude,
      rowLongitude: r.longitude,
      done: false,
    };
  }

  return { chunks: chunks(), skipped: () => skips.list(), checklists: () => written };
}
