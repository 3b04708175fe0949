/**
 * Text files an importer takes only up to a limit (eBird: 1 MB; iNaturalist: fewer than 10,000
 * rows). The file stays one plain file while everything fits; past the limit it becomes a zip of
 * numbered parts, each within the limit and each with the header, if the format has one.
 *
 * Whether it fits is known only once the limit is passed or the rows end, and the media type must
 * be sent before the first byte: so the first part is held in memory (at most one part) until one
 * or the other happens. In a zip, each part then streams as its entry, deflated as its lines come
 * (zip.ts ZipEntry): no temp file, and nothing of a later part held.
 */
import { isAscii } from 'node:buffer';
import { Readable } from 'node:stream';
import { zipStream, type ZipEntry } from './zip.ts';
import { PIECE_CHARS } from './shared.ts';
import { PART_BREAK } from '../../../infra/db/index.ts';

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
  /**
   * How many rows the export lists, when known up front (a COUNT): with a row limit and no byte
   * limit, at most the limit is one plain file streamed from its first line, more is a zip whose
   * first part streams at once; nothing is held to decide. Rows left out of the file count here
   * too, so a file that skips enough of them to fit comes as a zip of one part.
   */
  listed?: number;
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
  const known = p.listed !== undefined && maxBytes === Infinity && maxRows !== Infinity;
  if (known && p.listed! <= maxRows) {
    const enc = p.encoding;
    const lines = async function* () {
      if (header) yield Buffer.from(header, enc);
      for (let got = await source.next(); !got.done; got = await source.next())
        if (got.value.length) yield Buffer.from(got.value.join(''), enc);
    };
    return { ...p.single, body: Readable.from(lines(), { highWaterMark: 2 }) };
  }
  if (known) overflow = [];
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
    let entry: ZipEntry | null = null;
    /** The part being written: its counts, and the text of its lines not yet written. */
    let part = first;
    let text = '';
    const flush = async () => {
      if (text) await entry!.write(Buffer.from(text, p.encoding));
      text = '';
    };
    /** Ends the part being written and starts the next, header first. */
    const next = async () => {
      if (entry) {
        await flush();
        entry.close();
      }
      n++;
      entry = job.entry(p.zip.part(n));
      if (header) await entry.write(Buffer.from(header, p.encoding));
      part = new Part(headerBytes);
    };
    const add = (line: string, bytes: number) => {
      text += line;
      part.bytes += bytes;
      part.rows++;
    };
    const one = async (line: string) => {
      const b = size(line);
      if (!fits(part, b, 1) && part.rows > 0) await next();
      add(line, b);
      if (text.length >= PIECE_CHARS) await flush();
    };
    const put = async (lines: string[]) => {
      job.check();
      if (p.together) {
        const bytes = sizeOf(lines);
        if (!fits(part, bytes, lines.length) && part.rows > 0) await next();
        // A group larger than a whole part is split between lines.
        if (fits(part, bytes, lines.length)) for (const l of lines) add(l, size(l));
        else for (const l of lines) await one(l);
      } else for (const l of lines) await one(l);
      // Written in pieces as the lines come: nothing of a part waits in memory for the rest of it.
      if (text.length >= PIECE_CHARS) await flush();
    };
    try {
      // The held first part is the first entry; what did not fit in it follows.
      n = 1;
      entry = job.entry(p.zip.part(1));
      await entry.write(Buffer.from(header + first.lines.join(''), p.encoding));
      first.lines.length = 0;
      await put(pending);
      for (let got = await source.next(); !got.done; got = await source.next()) await put(got.value);
      await flush();
      entry.close();
    } finally {
      // A reader gone away: the rows' source (a database scan) is told to stop too.
      await source.return?.();
    }
  });
  return { ...p.zip, contentType: 'application/zip', body };
}

/**
 * A file of lines the database wrote (UTF-8 bytes, every character Latin-1's where `encoding` is
 * latin1), whose parts end where the stream says (PART_BREAK: Db.copyColumn's partLines after so
 * many rows, or partBytes before a checklist that would not fit), each part with the header.
 * With the rows counted up front (`listed`, as in partedText) one plain file or a zip is known at
 * once; without, the first part is held (at most one part) until a break says zip or the end
 * says one plain file.
 */
export async function partedLines(p: {
  pieces: AsyncIterable<Buffer | typeof PART_BREAK>;
  header: string;
  /** The file's row limit, when `listed` decides: at most this many rows listed make one plain file. */
  maxRows?: number;
  listed?: number;
  encoding: 'utf8' | 'latin1';
  single: { filename: string; contentType: string };
  zip: { filename: string; part: (n: number) => string };
}): Promise<PartedFile> {
  // Pieces end between rows, so no character is cut in two.
  // An ASCII piece (most of them) is the same bytes in either.
  const bytes = (b: Buffer) => (p.encoding === 'latin1' && !isAscii(b) ? Buffer.from(b.toString('utf8'), 'latin1') : b);
  const header = Buffer.from(p.header, p.encoding);
  const source = p.pieces[Symbol.asyncIterator]();
  const plain = (held: Buffer[]) => {
    const body = async function* () {
      try {
        if (header.length) yield header;
        yield* held;
        for (let got = await source.next(); !got.done; got = await source.next()) if (got.value !== PART_BREAK) yield bytes(got.value);
      } finally {
        // A reader gone away: the statement's stream is told to stop too (its connection goes back to the pool).
        await source.return?.();
      }
    };
    return { ...p.single, body: Readable.from(body(), { highWaterMark: 2 }) };
  };
  /** The first part's pieces, held until a break or the end decides (only when nothing was counted). */
  const held: Buffer[] = [];
  if (p.listed === undefined) {
    for (;;) {
      const got = await source.next();
      if (got.done) return plain(held);
      if (got.value === PART_BREAK) break;
      held.push(bytes(got.value));
    }
  } else if (p.listed <= (p.maxRows ?? Infinity)) return plain(held);
  const body = zipStream(async (job) => {
    let n = 1;
    let entry = job.entry(p.zip.part(n));
    if (header.length) await entry.write(header);
    for (const b of held) await entry.write(b);
    held.length = 0;
    // A part starts with its first line: a break after the last line makes no empty part. The
    // break that decided for a zip ended the held part.
    let open = p.listed === undefined;
    try {
      for (let got = await source.next(); !got.done; got = await source.next()) {
        const piece = got.value;
        if (piece === PART_BREAK) {
          open = true;
          continue;
        }
        if (open) {
          entry.close();
          entry = job.entry(p.zip.part(++n));
          if (header.length) await entry.write(header);
          open = false;
        }
        await entry.write(bytes(piece));
      }
    } finally {
      await source.return?.();
    }
    entry.close();
  });
  return { ...p.zip, contentType: 'application/zip', body };
}
