/**
 * Text files an importer takes only up to a limit (eBird: 1 MB; iNaturalist: fewer than 10,000
 * rows). The file stays one plain file while everything fits; past the limit it becomes a zip of
 * numbered parts, each within the limit and each with the header, if the format has one.
 *
 * Whether it fits is known only once the limit is passed or the rows end, and the media type must
 * be sent before the first byte: so the first part is held in memory (at most one part) until one
 * or the other happens. Later parts go to temp files as they fill and into the zip when full.
 */
import { Readable } from 'node:stream';
import { zipStream, type TempText } from './zip.ts';

export interface PartLimit {
  /** Bytes per file, header included (as encoded). */
  bytes?: number;
  /** Data lines per file, header excluded. */
  rows?: number;
}

export interface PartedText {
  /** Lines, each ending in its line break, as they come (one array per checklist or per batch). */
  lines: AsyncIterable<string[]>;
  /**
   * true: each array is a group kept in one part where it fits (an eBird checklist); a group
   * larger than a whole part is split between lines. false: every line stands alone.
   */
  together: boolean;
  /** Written at the top of the file and of every part. */
  header?: string;
  limit: PartLimit;
  encoding: 'utf8' | 'latin1';
  single: { filename: string; contentType: string };
  zip: { filename: string; part: (n: number) => string };
}

export interface PartedFile {
  filename: string;
  contentType: string;
  body: Readable;
}

/** A part being filled: lines not yet written, and the part's bytes and rows so far. */
class Part {
  readonly lines: string[] = [];
  rows = 0;
  constructor(public bytes: number) {}
}

/** Resolves once the first part is known to be all there is (a plain file) or not (a zip). */
export async function partedText(p: PartedText): Promise<PartedFile> {
  const header = p.header ?? '';
  const maxBytes = p.limit.bytes ?? Infinity;
  const maxRows = p.limit.rows ?? Infinity;
  // Sizes are counted only under a byte limit; latin1 is one byte a character (the rest was transliterated).
  const size = (s: string) => (maxBytes === Infinity ? 0 : p.encoding === 'latin1' ? s.length : Buffer.byteLength(s, 'utf8'));
  const headerBytes = size(header);
  const fits = (part: Part, bytes: number, rows: number) => part.bytes + bytes <= maxBytes && part.rows + rows <= maxRows;
  const add = (part: Part, line: string, bytes: number) => {
    part.lines.push(line);
    part.bytes += bytes;
    part.rows++;
  };
  const sizeOf = (lines: string[]) => {
    let n = 0;
    for (const l of lines) n += size(l);
    return n;
  };

  const source = p.lines[Symbol.asyncIterator]();
  const first = new Part(headerBytes);
  /** What did not fit in the first part: the zip starts with it. */
  let overflow: string[] | null = null;
  while (!overflow) {
    const next = await source.next();
    if (next.done) break;
    const lines = next.value;
    if (p.together) {
      if (fits(first, sizeOf(lines), lines.length)) for (const l of lines) add(first, l, size(l));
      else overflow = lines;
    } else {
      let i = 0;
      for (; i < lines.length; i++) {
        const b = size(lines[i]!);
        if (!fits(first, b, 1)) break;
        add(first, lines[i]!, b);
      }
      if (i < lines.length) overflow = lines.slice(i);
    }
  }
  if (!overflow) {
    return { ...p.single, body: Readable.from([Buffer.from(header + first.lines.join(''), p.encoding)]) };
  }

  const pending = overflow;
  const body = zipStream(async (job) => {
    let n = 0;
    let part = first;
    /** The temp file of the part being filled, once its lines outgrew memory. */
    let file: TempText | null = null;
    const open = async () => {
      const t = job.temp(p.zip.part(n + 1));
      await t.write(Buffer.from(header, p.encoding));
      return t;
    };
    /** Writes the part to its temp file, adds it to the zip and starts the next. */
    const close = async () => {
      const t = file ?? (await open());
      if (part.lines.length) await t.write(Buffer.from(part.lines.join(''), p.encoding));
      await t.close();
      n++;
      job.zip.addFile(t.file, p.zip.part(n));
      file = null;
      part = new Part(headerBytes);
    };
    /** A part's lines are held up to a few thousand, then appended to its temp file. */
    const spill = async () => {
      if (part.lines.length < 2000) return;
      file ??= await open();
      await file.write(Buffer.from(part.lines.join(''), p.encoding));
      part.lines.length = 0;
    };
    const one = async (line: string) => {
      const b = size(line);
      if (!fits(part, b, 1) && part.rows > 0) await close();
      add(part, line, b);
    };
    const put = async (lines: string[]) => {
      job.check();
      if (p.together) {
        const bytes = sizeOf(lines);
        if (!fits(part, bytes, lines.length) && part.rows > 0) await close();
        // A group larger than a whole part is split between lines.
        if (fits(part, bytes, lines.length)) for (const l of lines) add(part, l, size(l));
        else for (const l of lines) await one(l);
      } else for (const l of lines) await one(l);
      await spill();
    };
    try {
      await put(pending);
      for (let next = await source.next(); !next.done; next = await source.next()) await put(next.value);
      if (part.rows > 0) await close();
    } finally {
      // A reader gone away: the rows' source (a database scan) is told to stop too.
      await source.return?.();
    }
  });
  return { ...p.zip, contentType: 'application/zip', body };
}
