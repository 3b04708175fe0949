/** Reading export files back as the tests check them: bytes over HTTP, zip entries, Darwin Core tables. */
import type { Readable } from 'node:stream';
import assert from 'node:assert/strict';
import yauzl from 'yauzl';
import type { Hub } from './hub.ts';
import type { TestUser } from './factories.ts';

/** GET as bytes with the caller's token. */
export async function fetchBytes(hub: Hub, url: string, as: TestUser) {
  const res = await fetch(`${hub.url}/api${url}`, { headers: { authorization: `Bearer ${as.token}` } });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** The entries of a zip, by name. */
export function unzip(buf: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

/** A tab-separated Darwin Core file as records by column name; every line has every column. */
export function tsv(buf: Buffer): Record<string, string>[] {
  const [header, ...lines] = buf
    .toString('utf8')
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => l.split('\t'));
  return lines.map((cells) => {
    assert.equal(cells.length, header!.length, 'every line has every column');
    return Object.fromEntries(header!.map((h, i) => [h, cells[i]!]));
  });
}

/** A rendered file's body, whole (the services' Readable, not an HTTP response). */
export async function bytes(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}
