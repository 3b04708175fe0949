/**
 * A minimal streaming tar (POSIX ustar, with pax headers for long names) for the backup archive.
 * No tar library is among the dependencies, and the archive holds only regular files, so the
 * format needed is small: 512-byte headers, contents padded to 512 bytes, two zero blocks at the end.
 * Streams both ways: an object store of audio is far larger than memory.
 */
import fs from 'node:fs';

const BLOCK = 512;
/** ustar's size field: 11 octal digits. */
const MAX_SIZE = 8 ** 11 - 1;

export interface TarSource {
  name: string;
  /** Bytes in memory, or a file read when its turn comes. */
  data?: Buffer;
  file?: string;
  size: number;
  mode?: number;
  mtime?: Date;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, type: '0' | 'x', mode: number, mtime: Date): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/** A pax record `LEN key=value\n`, LEN counting itself. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body);
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return Buffer.from(`${len}${body}`, 'utf8');
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** The archive's bytes, entry by entry (pipe through gzip into a file). */
export async function* tarStream(entries: Iterable<TarSource> | AsyncIterable<TarSource>): AsyncGenerator<Buffer> {
  for await (const e of entries) {
    if (e.size > MAX_SIZE) throw new Error(`${e.name} is too large for the archive (${e.size} bytes)`);
    const mtime = e.mtime ?? new Date(0);
    let name = e.name;
    if (Buffer.byteLength(name) > 99) {
      const pax = paxRecord('path', name);
      yield header('PaxHeader', pax.length, 'x', 0o644, mtime);
      yield Buffer.concat([pax, padding(pax.length)]);
      name = Buffer.from(name)
        .subarray(0, 99)
        .toString('utf8')
        .replace(/\uFFFD+$/, '');
    }
    yield header(name, e.size, '0', e.mode ?? 0o644, mtime);
    if (e.data) {
      if (e.data.length !== e.size) throw new Error(`${e.name}: ${e.data.length} bytes, ${e.size} announced`);
      yield e.data;
    } else if (e.file) {
      let seen = 0;
      for await (const chunk of fs.createReadStream(e.file)) {
        const buf = chunk as Buffer;
        seen += buf.length;
        if (seen > e.size) throw new Error(`${e.file} grew while it was archived`);
        yield buf;
      }
      if (seen !== e.size) throw new Error(`${e.file} shrank while it was archived`);
    }
    yield padding(e.size);
  }
  yield Buffer.alloc(BLOCK * 2);
}

/** Exact-length reads over a stream of chunks. */
class Bytes {
  private rest: Buffer = Buffer.alloc(0);
  private done = false;
  constructor(private readonly it: AsyncIterator<Buffer>) {}

  private async more(): Promise<boolean> {
    if (this.done) return false;
    const next = await this.it.next();
    if (next.done) {
      this.done = true;
      return false;
    }
    this.rest = this.rest.length ? Buffer.concat([this.rest, next.value]) : next.value;
    return true;
  }

  /** Exactly n bytes, or null when the stream ends first. */
  async read(n: number): Promise<Buffer | null> {
    while (this.rest.length < n) if (!(await this.more())) return null;
    const out = this.rest.subarray(0, n);
    this.rest = this.rest.subarray(n);
    return out;
  }

  /** Up to max bytes (at least one) as they arrive. */
  async chunk(max: number): Promise<Buffer> {
    if (this.rest.length === 0 && !(await this.more())) throw new Error('the archive ends in the middle of a file');
    const part = this.rest.subarray(0, Math.min(max, this.rest.length));
    this.rest = this.rest.subarray(part.length);
    return part;
  }
}

export interface TarEntry {
  name: string;
  size: number;
  mode: number;
  /** The contents; read them before asking for the next entry (unread bytes are skipped). */
  content: AsyncIterable<Buffer>;
}

const text = (h: Buffer, start: number, len: number) => {
  const field = h.subarray(start, start + len);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? len : end).toString('utf8');
};
const num = (h: Buffer, start: number, len: number) => parseInt(text(h, start, len).trim() || '0', 8);

/** Regular files of an (uncompressed) tar stream, in order. Other entry types are refused. */
export async function* readTar(chunks: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const bytes = new Bytes(chunks[Symbol.asyncIterator]());
  let paxPath: string | null = null;
  for (;;) {
    const h = await bytes.read(BLOCK);
    if (!h) throw new Error('the archive ends without its end marker');
    if (h.every((b) => b === 0)) return;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
    if (sum !== num(h, 148, 8)) throw new Error('the archive is damaged (header checksum)');
    const size = num(h, 124, 12);
    const type = text(h, 156, 1) || '0';
    if (type === 'x') {
      const body = await bytes.read(size + padding(size).length);
      if (!body) throw new Error('the archive ends in the middle of a header');
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.subarray(0, size).toString('utf8'));
      if (m) paxPath = m[1];
      continue;
    }
    if (type !== '0') throw new Error(`the archive holds an entry of type ${JSON.stringify(type)}; only files are expected`);
    const prefix = text(h, 345, 155);
    const name = paxPath ?? (prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100));
    paxPath = null;
    let left = size;
    const content = (async function* () {
      while (left > 0) {
        const part = await bytes.chunk(left);
        left -= part.length;
        yield part;
      }
    })();
    yield { name, size, mode: num(h, 100, 8), content };
    // Whatever the reader left unread, then the padding.
    while (left > 0) left -= (await bytes.chunk(left)).length;
    if (!(await bytes.read(padding(size).length))) throw new Error('the archive ends in the middle of a file');
  }
}
