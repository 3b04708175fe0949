/**
 * PostgreSQL's binary COPY format, one column of text, read as the column's bytes end to end:
 * the rows an export's statement writes as finished lines (src/modules/exports/formats/lines-sql.ts)
 * go from the database's socket to the client's without a JavaScript string or object per row.
 * Binary, not text or CSV COPY: those escape or quote the value (a backslash, a tab, a line
 * break), the binary format frames it with its length and leaves it as it is.
 *
 * The format (PostgreSQL docs, "COPY", Binary Format): an 11-byte signature, a 32-bit flags
 * field, a 32-bit header extension length and that many bytes; then per row a 16-bit field count
 * and per field a 32-bit length (-1 for NULL) and the bytes; a field count of -1 ends the data.
 */
import { Transform, type TransformCallback } from 'node:stream';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** Output gathered before it is handed on: a few socket writes' worth, allocated outside V8's heap. */
const OUT_BYTES = 64 * 1024;

/** Pushed after the piece that ends a part (`partLines`): the next value starts the next part. */
export const PART_BREAK = Symbol('part break');

export interface CopyColumnOptions {
  /** Hears the rows read so far as they arrive. */
  onRows?: (rows: number) => void;
  /**
   * Cut the output after every this many values that are not NULL (lines of a file an importer
   * takes only so many of), each cut marked by PART_BREAK. A NULL value writes nothing and counts
   * as no line: a row a format leaves out.
   */
  partLines?: number;
  /**
   * Cut the output before a value that would take the part past this many bytes (a file an
   * importer takes only so large: eBird's 1 MB, one value a whole checklist), each cut marked by
   * PART_BREAK; a value larger than the limit makes a part of its own.
   */
  partBytes?: number;
  /** The session's time zone for the statement (its `to_char(… TZH:TZM)`), reset after it. */
  timeZone?: string;
}

export class CopyBinaryColumn extends Transform {
  /** Rows read so far. */
  rows = 0;
  /** Values that were not NULL. */
  lines = 0;
  private pending: Buffer | null = null;
  private headerDone = false;
  private ended = false;
  private out = Buffer.allocUnsafe(OUT_BYTES);
  private used = 0;

  private readonly onRows: (rows: number) => void;
  private readonly partLines: number;
  private readonly partBytes: number;
  /** Bytes of the part being written. */
  private partUsed = 0;

  constructor(opts: CopyColumnOptions = {}) {
    // Object mode on the reading side: pieces stay the pieces pushed (a part's cut is where one ends), and PART_BREAK can follow one.
    super({ readableObjectMode: true });
    this.onRows = opts.onRows ?? (() => {});
    this.partLines = opts.partLines ?? Infinity;
    this.partBytes = opts.partBytes ?? Infinity;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    let at = 0;
    try {
      if (!this.headerDone) {
        if (buf.length < 19) {
          this.pending = buf;
          return done();
        }
        if (!buf.subarray(0, 11).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
        const extension = buf.readUInt32BE(15);
        if (buf.length < 19 + extension) {
          this.pending = buf;
          return done();
        }
        at = 19 + extension;
        this.headerDone = true;
      }
      const before = this.rows;
      while (!this.ended && at + 2 <= buf.length) {
        const fields = buf.readInt16BE(at);
        if (fields === -1) {
          this.ended = true;
          at += 2;
          break;
        }
        if (fields !== 1) throw new Error(`binary COPY: ${fields} fields in a row, 1 expected`);
        if (at + 6 > buf.length) break;
        const length = buf.readInt32BE(at + 2);
        const size = length < 0 ? 0 : length;
        if (at + 6 + size > buf.length) break;
        if (size > 0 && this.partUsed > 0 && this.partUsed + size > this.partBytes) this.cut();
        this.partUsed += size;
        this.write_(buf, at + 6, size);
        at += 6 + size;
        this.rows++;
        if (length >= 0 && ++this.lines % this.partLines === 0) this.cut();
      }
      if (at < buf.length && !this.ended) this.pending = buf.subarray(at);
      if (this.rows !== before) this.onRows(this.rows);
      done();
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
    }
  }

  override _flush(done: TransformCallback): void {
    if (!this.ended || this.pending) return done(new Error('binary COPY stream ended early'));
    if (this.used > 0) this.push(this.out.subarray(0, this.used));
    done();
  }

  /** Hands on what is gathered and marks the end of a part. */
  private cut(): void {
    if (this.used > 0) this.push(this.out.subarray(0, this.used));
    this.out = Buffer.allocUnsafe(OUT_BYTES);
    this.used = 0;
    this.partUsed = 0;
    this.push(PART_BREAK);
  }

  /** Appends one value's bytes to the output piece, handing full pieces on. */
  private write_(src: Buffer, start: number, size: number): void {
    if (size > OUT_BYTES - this.used) {
      if (this.used > 0) this.push(this.out.subarray(0, this.used));
      this.out = Buffer.allocUnsafe(Math.max(OUT_BYTES, size));
      this.used = 0;
    }
    src.copy(this.out, this.used, start, start + size);
    this.used += size;
  }
}
