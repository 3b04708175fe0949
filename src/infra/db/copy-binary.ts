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

export class CopyBinaryColumn extends Transform {
  /** Rows read so far. */
  rows = 0;
  private pending: Buffer | null = null;
  private headerDone = false;
  private ended = false;
  private out = Buffer.allocUnsafe(OUT_BYTES);
  private used = 0;

  constructor(private readonly onRows: (rows: number) => void = () => {}) {
    super();
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
        this.write_(buf, at + 6, size);
        at += 6 + size;
        this.rows++;
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
