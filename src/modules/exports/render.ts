/**
 * One export kind → its file: media type, a file name, and the body as a stream. Text formats
 * stream as the rows arrive; the PDF report folds every row into its aggregates first. eBird and
 * iNaturalist files are one file within their importer's limit, else a zip of parts
 * (formats/parts.ts): an eBird file's media type is known once the first part is full or the
 * rows end; iNaturalist's from the count of rows listed when the caller gives it (`listed`).
 */
import { PassThrough, Readable } from 'node:stream';
import type { ExportContext, RowSource } from './types.ts';
import type { ExportKind } from './schemas.ts';
import { detectionsCsv, detectionsJson, type LineSource } from './formats/csv.ts';
import { EBIRD_MAX_FILE_BYTES, ebirdChecklist } from './formats/ebird.ts';
import { INATURALIST_MAX_ROWS, inaturalistHeader, inaturalistLines, type Geoprivacy } from './formats/inaturalist.ts';
import { partedLines, partedText, type PartLimit } from './formats/parts.ts';
import { PART_BREAK } from '../../infra/db/index.ts';
import { darwinCoreArchive, darwinCoreArchiveOfLines } from './formats/dwca.ts';
import { type CallChunks, xenoCantoZip } from './formats/xenocanto.ts';
import { ebirdTaxon } from './formats/ebird-names.ts';
import type { SkippedSpecies } from './formats/shared.ts';
import { createReportAccumulator } from './report/data.ts';
import { renderReport } from './report/pdf.ts';

export interface RenderOptions {
  counts?: 'presence' | 'calls';
  geoprivacy?: Geoprivacy;
  /** The report's period when no window was given (defaults to the rows' own span). */
  period?: { start: string; end: string };
  paperSize?: 'a4' | 'letter';
  language?: 'en' | 'de';
  /** Tests only: a smaller limit per file than the importer's (eBird bytes, iNaturalist rows). */
  partLimit?: PartLimit;
}

export interface Rendered {
  contentType: string;
  filename: string;
  body: Readable;
}

const stamp = (d: Date) => d.toISOString().slice(0, 10);
const slug = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/[^\w-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase()
    .slice(0, 40) || 'team';

/** The kinds written from rows in JavaScript; CSV and JSON are lines the database writes (renderLines). */
export type RowKind = Exclude<ExportKind, 'csv' | 'json'>;

const fileBase = (ctx: Pick<ExportContext, 'teamName' | 'generatedAt'>) => `chorus-${slug(ctx.teamName)}-${stamp(ctx.generatedAt)}`;

/** The detections CSV or JSON around its lines (formats/lines-sql.ts), streamed as they come. */
export function renderLines(kind: 'csv' | 'json', lines: LineSource, ctx: Pick<ExportContext, 'teamName' | 'generatedAt'>): Rendered {
  return kind === 'csv'
    ? { contentType: 'text/csv; charset=utf-8', filename: `${fileBase(ctx)}-detections.csv`, body: Readable.from(detectionsCsv(lines)) }
    : {
        contentType: 'application/json; charset=utf-8',
        filename: `${fileBase(ctx)}-detections.json`,
        body: Readable.from(detectionsJson(lines)),
      };
}

/**
 * A submission file of lines the database wrote (formats/submission-lines.ts): Darwin Core's
 * archive around them, or iNaturalist's CSV (Latin-1, a zip of parts past its limit: `listed` as
 * for renderExport; the pieces break where Db.copyColumn's partLines cut them).
 */
export async function renderSubmissionLines(
  kind: 'dwca' | 'inaturalist',
  pieces: AsyncIterable<Buffer | typeof PART_BREAK>,
  ctx: ExportContext,
  listed: number,
): Promise<Rendered> {
  const base = fileBase(ctx);
  if (kind === 'dwca') {
    const lines = (async function* () {
      for await (const piece of pieces) if (piece !== PART_BREAK) yield piece;
    })();
    return { contentType: 'application/zip', filename: `${base}-dwca.zip`, body: darwinCoreArchiveOfLines(lines, ctx) };
  }
  return partedLines({
    pieces,
    header: inaturalistHeader(),
    maxRows: INATURALIST_MAX_ROWS,
    listed,
    encoding: 'latin1',
    single: { contentType: 'text/csv; charset=iso-8859-1', filename: `${base}-inaturalist.csv` },
    zip: { filename: `${base}-inaturalist.zip`, part: (n) => `inaturalist-part-${n}.csv` },
  });
}

/** The eBird file of checklists the database wrote (formats/ebird-lines.ts): one file, or a zip once a part is full. */
export function renderChecklistLines(pieces: AsyncIterable<Buffer | typeof PART_BREAK>, ctx: ExportContext): Promise<Rendered> {
  const base = fileBase(ctx);
  return partedLines({
    pieces,
    header: '',
    encoding: 'utf8',
    single: { contentType: 'text/csv; charset=utf-8', filename: `${base}-ebird.csv` },
    zip: { filename: `${base}-ebird.zip`, part: (n) => `ebird-part-${n}.csv` },
  });
}

export async function renderExport(
  kind: RowKind,
  rows: RowSource,
  ctx: ExportContext,
  opts: RenderOptions & {
    audio: (chunkId: string) => Promise<Buffer | null>;
    /** The chunks of a row's call, oldest first (xeno-canto); the row's own chunk when absent. */
    callChunks?: CallChunks;
    /** How many rows the filter lists, when counted up front: iNaturalist decides one file or a zip from it (parts.ts). */
    listed?: number;
  },
): Promise<Rendered> {
  const base = fileBase(ctx);
  switch (kind) {
    case 'checklist':
      // UTF-8, up to 1 MB a file: a zip of ebird-part-N.csv past that, whole checklists kept in one part.
      return partedText({
        lines: ebirdChecklist(rows, ctx, { counts: opts.counts }).chunks,
        together: true,
        limit: opts.partLimit ?? { bytes: EBIRD_MAX_FILE_BYTES },
        encoding: 'utf8',
        single: { contentType: 'text/csv; charset=utf-8', filename: `${base}-ebird.csv` },
        zip: { filename: `${base}-ebird.zip`, part: (n) => `ebird-part-${n}.csv` },
      });
    case 'inaturalist':
      // Latin-1 (what its importer reads), up to 9,999 observations a file: a zip of inaturalist-part-N.csv past that.
      return partedText({
        lines: inaturalistLines(rows, ctx, { geoprivacy: opts.geoprivacy }),
        together: false,
        header: inaturalistHeader(),
        limit: opts.partLimit ?? { rows: INATURALIST_MAX_ROWS },
        listed: opts.listed,
        encoding: 'latin1',
        single: { contentType: 'text/csv; charset=iso-8859-1', filename: `${base}-inaturalist.csv` },
        zip: { filename: `${base}-inaturalist.zip`, part: (n) => `inaturalist-part-${n}.csv` },
      });
    case 'dwca':
      return { contentType: 'application/zip', filename: `${base}-dwca.zip`, body: darwinCoreArchive(rows, ctx) };
    case 'recording':
      return {
        contentType: 'application/zip',
        filename: `${base}-xeno-canto.zip`,
        body: xenoCantoZip(rows, ctx, opts.audio, { callChunks: opts.callChunks }),
      };
    case 'report':
      return { contentType: 'application/pdf', filename: `${base}-report.pdf`, body: reportStream(rows, ctx, opts) };
  }
}

function reportStream(rows: RowSource, ctx: ExportContext, opts: RenderOptions): Readable {
  const out = new PassThrough();
  void (async () => {
    const period = opts.period ?? { start: new Date(0).toISOString(), end: ctx.generatedAt.toISOString() };
    const acc = createReportAccumulator({
      teamName: ctx.teamName,
      title: 'Detections report',
      period,
      timeZone: ctx.timeZone,
      paperSize: opts.paperSize ?? 'a4',
      language: opts.language ?? 'en',
      now: ctx.generatedAt,
    });
    for await (const batch of rows) acc.add(batch);
    renderReport(acc.finish()).pipe(out);
  })().catch((err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err))));
  return out;
}

/** What an eBird checklist leaves out, from a per-species tally (the export preview says it before the file is made). */
export function skippedOf(
  tally: ReadonlyArray<{ speciesCode: string; commonName: string; category: string; count: number }>,
): SkippedSpecies[] {
  const out: SkippedSpecies[] = [];
  for (const t of tally) {
    if (t.category !== 'bird') out.push({ speciesCode: t.speciesCode, commonName: t.commonName, reason: 'not_a_bird', count: t.count });
    else if (!ebirdTaxon(t.speciesCode))
      out.push({ speciesCode: t.speciesCode, commonName: t.commonName, reason: 'not_in_ebird_taxonomy', count: t.count });
  }
  return out;
}
