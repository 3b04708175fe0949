/** Reading export files back as the tests check them: bytes over HTTP, zip entries, Darwin Core tables. */
import type { Readable } from 'node:stream';
import assert from 'node:assert/strict';
import yauzl from 'yauzl';
import type { Hub } from './hub.ts';
import { factories, type TestTeam, type TestUser } from './factories.ts';
import { client } from './http.ts';
import type { ExportRequest } from '../../src/modules/exports/service.ts';

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

/**
 * A team whose zone is half an hour off UTC (America/St_Johns, −03:30/−02:30), as the tests that
 * hold the database's export files to the rows' writers set it up.
 */
export async function halfHourTeam(hub: Hub): Promise<{ owner: TestUser; team: TestTeam }> {
  const f = factories(hub);
  const owner = await f.user();
  const team = await f.team(owner);
  const res = await client(hub.url).put(`/settings/tenant?tenantId=${team.id}`, { time_zone: 'America/St_Johns' }, owner);
  assert.equal(res.status, 200, res.text);
  return { owner, team };
}

/**
 * A file that leaves the team (a submission format) made both ways: by the database's lines and
 * by the writers over rows (`fromRows`), with the bytes of each.
 */
export async function bothWays(hub: Hub, teamId: string, request: Pick<ExportRequest, 'kind'> & Partial<ExportRequest>) {
  const req: ExportRequest = { filters: {}, options: {}, ...request };
  const sql = await hub.services.exports.render(teamId, req, undefined, 'outside');
  const rows = await hub.services.exports.render(teamId, req, undefined, 'outside', undefined, { fromRows: true });
  return { sql, rows, a: await bytes(sql.body), b: await bytes(rows.body) };
}
