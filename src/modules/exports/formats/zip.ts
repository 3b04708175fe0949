/**
 * Zip archives that stream with flat memory. yazl writes entries in the order they are added
 * and needs each entry's content when its turn comes, so:
 * - text files built row by row go to temp files (one temp folder per archive, removed once the
 *   archive's stream has closed, whether it finished, failed or was abandoned);
 * - large buffers (audio) are added one at a time, and the next is fetched only after the
 *   consumer has read the previous one (yazl itself ignores the reader's backpressure).
 */
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { ZipFile } from 'yazl';

/**
 * yazl checksums every byte of every entry with buffer-crc32, a JavaScript loop over a table: an
 * eighth of an eBird export's time and more than its deflate (docs/exports.md "Performance").
 * Its `unsigned` (the one function yazl calls, with a previous value or none) is pointed at
 * Node's own zlib.crc32, the same CRC-32 in native code.
 */
const yazlRequire = createRequire(createRequire(import.meta.url).resolve('yazl'));
const bufferCrc32 = yazlRequire('buffer-crc32') as { unsigned: (buf: Buffer | string, previous?: number | Buffer) => number };
bufferCrc32.unsigned = (buf, previous) =>
  zlib.crc32(buf, previous === undefined ? 0 : Buffer.isBuffer(previous) ? previous.readUInt32BE(0) : previous >>> 0);

/** A text file written with the disk's backpressure respected. */
export class TempText {
  private readonly ws: fs.WriteStream;
  private error: Error | null = null;

  constructor(readonly file: string) {
    this.ws = fs.createWriteStream(file);
    // Kept, not thrown: the next write or close reports it (an unheard 'error' would crash the process).
    this.ws.on('error', (err) => (this.error = err));
  }

  async write(text: string | Buffer): Promise<void> {
    if (this.error) throw this.error;
    if (!this.ws.write(text)) await once(this.ws, 'drain');
  }

  async close(): Promise<void> {
    if (this.error) throw this.error;
    this.ws.end();
    await finished(this.ws);
  }

  destroy(): void {
    this.ws.destroy();
  }
}

/**
 * An entry written as it is made: deflated on the fly (zlib works on libuv's threads, beside the
 * rows being written) and read out in order, so its first bytes reach the reader while later
 * rows are still being read, and nothing of it waits in memory or on disk. Writes wait for
 * the reader (backpressure); one entry streams at a time, so close it before starting the next.
 */
export interface ZipEntry {
  write(chunk: Buffer): Promise<void>;
  close(): void;
}

/**
 * Deflate level of the entries made as they stream (text: CSV, tab-separated): level 1 deflates
 * export text about three times as fast as zlib's default 6 for a file about a fifth larger,
 * and at a million rows the default was slower than reading the rows (docs/exports.md "Performance").
 */
export const STREAMED_ENTRY_LEVEL = 1;

export interface ZipJob {
  zip: ZipFile;
  /** A new temp text file inside the archive's temp folder. */
  temp(name: string): TempText;
  /** A new entry written as it streams (ZipEntry). */
  entry(name: string): ZipEntry;
  /** Adds a stored (uncompressed) entry and resolves once the reader has taken its bytes. */
  addAndWait(buffer: Buffer, name: string): Promise<void>;
  /** Throws once the reader has gone away: stop reading rows. */
  check(): void;
}

export class ExportAborted extends Error {
  constructor() {
    super('export stream closed before it finished');
  }
}

/** Runs `build` to fill the archive, then ends it; its errors end the returned stream with that error. */
export function zipStream(build: (job: ZipJob) => Promise<void>): Readable {
  const zip = new ZipFile();
  const output = zip.outputStream as PassThrough;
  const gone = new AbortController();
  let complete = false;
  const closed = new Promise<void>((resolve) => output.once('close', resolve));
  output.once('end', () => (complete = true));
  void closed.then(() => {
    if (!complete) gone.abort();
  });
  zip.on('error', (err: Error) => output.destroy(err));

  const temps: TempText[] = [];
  let dir = '';
  const job: ZipJob = {
    zip,
    temp(name) {
      const t = new TempText(path.join(dir, name));
      temps.push(t);
      return t;
    },
    entry(name) {
      job.check();
      const src = new PassThrough();
      zip.addReadStream(src, name, { compressionLevel: STREAMED_ENTRY_LEVEL });
      return {
        async write(chunk) {
          job.check();
          // Rejects once the reader has gone away instead of waiting for a drain that never comes.
          if (!src.write(chunk)) await once(src, 'drain', { signal: gone.signal }).catch(() => job.check());
        },
        close: () => void src.end(),
      };
    },
    addAndWait(buffer, name) {
      job.check();
      const src = new PassThrough();
      src.end(buffer);
      const taken = new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new ExportAborted());
        gone.signal.addEventListener('abort', onAbort, { once: true });
        src.once('end', () => {
          gone.signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
      zip.addReadStream(src, name, { compress: false, size: buffer.length });
      return taken;
    },
    check() {
      if (gone.signal.aborted) throw new ExportAborted();
    },
  };

  void (async () => {
    try {
      dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'chorus-export-'));
      await build(job);
      zip.end();
    } catch (err) {
      for (const t of temps) t.destroy();
      if (!output.destroyed) output.destroy(err as Error);
    }
    // yazl reads the temp files lazily, so they stay until the archive's stream has closed.
    await closed;
    if (dir) await fsp.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  })();
  return output;
}
