/**
 * iNaturalist's CSV import (FORMATS.md): one observation per detection, the columns in the
 * order iNaturalist's template lists them, with its header row. Sounds cannot travel in the
 * CSV; the Description links the recording so the observer can attach it afterwards.
 *
 * Date observed is `YYYY-MM-DD HH:MM:SS ±HH:MM`: the local wall-clock time the birder expects
 * to see, plus the offset, so iNaturalist (which otherwise reads a bare time in the uploader's
 * profile zone) places the observation at the right instant.
 *
 * iNaturalist's importer reads the file as ISO-8859-1 (Ruby `CSV.foreach(..., encoding:
 * "iso-8859-1:utf-8")`, FORMATS.md): UTF-8 "Süd" would arrive as "SÃ¼d". So the file is Latin-1
 * bytes (the renderer encodes it) and every character outside Latin-1 is transliterated first
 * (latin1Text). Its import takes fewer than 10,000 rows a file: the renderer splits (parts.ts).
 */
import anyAscii from 'any-ascii';
import type { ExportContext, ExportRow, RowSource } from '../types.ts';
import { conf, coord, csvLine, isGeneralised, isOrganism, localStampOffset, neutralise, type SkipTally } from './shared.ts';

/** Observations per file: iNaturalist's import takes fewer than 10,000 rows. */
export const INATURALIST_MAX_ROWS = 9_999;

/**
 * Text that survives iNaturalist's ISO-8859-1 reading: composed first (u + combining diaeresis
 * is ü, which Latin-1 has), then each word holding a character outside Latin-1 transliterated to
 * ASCII as a whole by any-ascii, so a name is either kept as it is or spelled in one script
 * ("Süd" stays; "Łódź" → "Lodz", not "Lódz"; "金翅雀" → "JinChiQue"; "Зяблик" → "Zyablik"), and
 * so is each such sign between words ("–" → "-", "’" → "'", "€" → "EUR"). C1 control characters
 * (U+0080–U+009F), which read as no printable character, are dropped. The result encodes to
 * Latin-1 byte for byte.
 */
export function latin1Text(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(text)) return text;
  return (
    text
      .normalize('NFC')
      // eslint-disable-next-line no-control-regex
      .replace(/[\p{L}\p{M}\p{N}]*(?:(?![\x00-\xff])[\p{L}\p{M}\p{N}])[\p{L}\p{M}\p{N}]*/gu, (word) => anyAscii(word))
      // eslint-disable-next-line no-control-regex
      .replace(/[^\x00-\xff]+/gu, (signs) => anyAscii(signs))
      .replace(/[\x80-\x9f]/g, '')
  );
}

/** A text cell as csvLine writes a latin1Text-ed one: transliterated first ("–=1" becomes "-=1", which the guard then sees), neutralised, quoted where RFC 4180 needs it. */
const QUOTE = /[",\r\n]/;
function cell(v: string): string {
  const t = neutralise(latin1Text(v));
  return QUOTE.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

export const INATURALIST_COLUMNS = [
  'Taxon name',
  'Date observed',
  'Description',
  'Place name',
  'Latitude / y coord / northing',
  'Longitude / x coord / easting',
  'Tags',
  'Geoprivacy',
] as const;

export type Geoprivacy = 'open' | 'obscured' | 'private';

/** The end of a sensitive species' description, in place of its links. */
export const SENSITIVE_DESCRIPTION =
  'Sensitive species: position rounded to 0.1 degree, time to the hour, recorder and recording withheld.';

export interface InaturalistOptions {
  /** Default `open`: a fixed recorder's place is the team's to share or obscure. */
  geoprivacy?: Geoprivacy;
  /** Collects the rows left out (rejected detections, sounds that are no species). */
  skipped?: SkipTally;
}

/** The recording's public link when the export published it (issue 34 item 4), else nothing. */
const mediaOf = (r: ExportRow, ctx: ExportContext) => {
  const url = ctx.audioUrl(r.chunkId);
  return url ? ` Audio: ${url}` : '';
};

/** The header line (the renderer writes it at the top of the file and of every part). */
export const inaturalistHeader = (): string => csvLine(INATURALIST_COLUMNS);

/** The observation lines, one array per batch of rows; each line Latin-1-safe text (latin1Text). */
export async function* inaturalistLines(rows: RowSource, ctx: ExportContext, opts: InaturalistOptions = {}): AsyncGenerator<string[]> {
  const geoprivacy = opts.geoprivacy ?? 'open';
  for await (const batch of rows) {
    const out: string[] = [];
    for (const r of batch) {
      // A rejected identification is known to be wrong: it must not become an observation.
      if (r.verificationStatus === 'rejected') {
        opts.skipped?.add(r, 'rejected');
        continue;
      }
      if (!isOrganism(r)) {
        opts.skipped?.add(r, 'not_a_species');
        continue;
      }
      const generalised = isGeneralised(r);
      const description =
        `${r.commonName}, detected acoustically by Chorus: confidence ${conf(r.confidence)} ` +
        `(calibrated ${conf(r.calibratedConfidence)}), model ${r.modelId}. ` +
        (generalised ? SENSITIVE_DESCRIPTION : `Detection: ${ctx.detectionUrl(r.id)}${mediaOf(r, ctx)}`);
      // Byte for byte csvLine over the latin1Text-ed cells, built as one string (no cell arrays per row). The time, the
      // coordinates, the tags and the geoprivacy are ASCII that needs neither the guard nor quotes.
      out.push(
        `${cell(r.scientificName)},${localStampOffset(r.detectedAt, ctx.timeZone, ' ')},${cell(description)},` +
          `${cell(r.satelliteName)},${coord(r.latitude).text},${coord(r.longitude).text},"Chorus,acoustic",` +
          // iNaturalist obscures a sensitive species' place further unless the team asked for private.
          `${generalised && geoprivacy === 'open' ? 'obscured' : geoprivacy}\r\n`,
      );
    }
    if (out.length) yield out;
  }
}

/** The whole file as text, header first (one string per batch): tests and small callers. */
export async function* inaturalistCsv(rows: RowSource, ctx: ExportContext, opts: InaturalistOptions = {}): AsyncGenerator<string> {
  yield inaturalistHeader();
  for await (const lines of inaturalistLines(rows, ctx, opts)) yield lines.join('');
}
