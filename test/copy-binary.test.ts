/**
 * The PostgreSQL adapter's COPY stream of one text column (src/infra/db/copy-binary.ts, Db.copyColumn):
 * the binary format's framing read across every way the socket can cut it, and on a real
 * PostgreSQL (DATABASE_URL) the statement's parameters written in as literals meaning what bound
 * parameters mean.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { CopyBinaryColumn, PART_BREAK } from '../src/infra/db/copy-binary.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { col, shape } from '../src/infra/db/index.ts';

/** A binary COPY stream of one column, as PostgreSQL writes it (with a header extension, to be skipped). */
function copyStream(values: Array<string | null>, opts: { end?: boolean; fields?: number } = {}): Buffer {
  const parts = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3])];
  for (const v of values) {
    const fields = Buffer.alloc(2);
    fields.writeInt16BE(opts.fields ?? 1);
    const bytes = v === null ? Buffer.alloc(0) : Buffer.from(v, 'utf8');
    const length = Buffer.alloc(4);
    length.writeInt32BE(v === null ? -1 : bytes.length);
    parts.push(fields, length, bytes);
  }
  if (opts.end !== false) parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

async function read(input: Buffer, piece: number) {
  const pieces: Buffer[] = [];
  for (let i = 0; i < input.length; i += piece) pieces.push(input.subarray(i, i + piece));
  const counts: number[] = [];
  const t = new CopyBinaryColumn({ onRows: (n) => counts.push(n) });
  const out: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    Readable.from(pieces)
      .pipe(t)
      .on('data', (c: Buffer) => out.push(c))
      .on('end', resolve)
      .on('error', reject);
  });
  return { text: Buffer.concat(out).toString('utf8'), rows: t.rows, counts };
}

describe('binary COPY of one column', () => {
  const values = ['a,b\r\n', '', null, 'ü\\ \t "q"\n', '🐦'.repeat(20_000), 'last'];
  const whole = values.map((v) => v ?? '').join('');

  for (const piece of [1, 2, 5, 7, 64, 65_536, 1 << 20])
    test(`the values end to end, cut every ${piece} bytes`, async () => {
      const r = await read(copyStream(values), piece);
      assert.equal(r.text, whole);
      assert.equal(r.rows, values.length);
      assert.equal(r.counts.at(-1), values.length);
    });

  test('no rows: nothing', async () => {
    const r = await read(copyStream([]), 3);
    assert.equal(r.text, '');
    assert.equal(r.rows, 0);
  });

  test('a stream cut before its end marker is an error, not a short file', async () => {
    await assert.rejects(read(copyStream(['a', 'b'], { end: false }), 4), /ended early/);
  });

  test('a row of two fields is refused', async () => {
    await assert.rejects(read(copyStream(['a'], { fields: 2 }), 100), /2 fields/);
  });

  test('partBytes: a part ends before a value that would take it past the limit; a larger value is a part alone', async () => {
    const t = new CopyBinaryColumn({ partBytes: 10 });
    const parts: string[] = [''];
    await new Promise<void>((resolve, reject) => {
      Readable.from([copyStream(['aaaa', 'bbbb', 'cc', 'd', 'eeeeeeeeeeeeeeee', null, 'ff'])])
        .pipe(t)
        .on('data', (c: Buffer | typeof PART_BREAK) => (c === PART_BREAK ? parts.push('') : (parts[parts.length - 1] += c.toString())))
        .on('end', resolve)
        .on('error', reject);
    });
    assert.deepEqual(parts, ['aaaabbbbcc', 'd', 'eeeeeeeeeeeeeeee', 'ff']);
  });

  test('not COPY at all is refused', async () => {
    await assert.rejects(read(Buffer.from('hello world, this is not COPY'), 100), /not a binary COPY/);
  });
});

const DATABASE_URL = process.env.DATABASE_URL;

describe('Db.copyColumn on PostgreSQL', { skip: DATABASE_URL ? false : 'DATABASE_URL is not set' }, () => {
  test('parameters written in as literals select what bound parameters select', async () => {
    const db = createPostgresDb({ url: DATABASE_URL!, poolSize: 2 });
    try {
      const params = ["it's \\ a $2 'quote'", ['a"b', 'c\\d', "e'f", 'g,h'], new Date('2026-01-15T07:30:05.123Z'), 0.9, -5, true, null];
      const sql = `SELECT concat_ws('|', $1::text, array_to_string($2::text[], ';'), $3::timestamptz AT TIME ZONE 'UTC', $4::real >= 0.9::real,
        1 - $5, $6::boolean, coalesce($7::text, 'null'))`;
      const bound = await db.one(shape({ v: col.text() }), `${sql} AS v`, params);
      const chunks: Buffer[] = [];
      for await (const c of db.copyColumn!(sql, params)) chunks.push(c as Buffer);
      assert.equal(Buffer.concat(chunks).toString('utf8'), bound.v);
      assert.match(bound.v, /^it's \\ a \$2 'quote'\|a"b;c\\d;e'f;g,h\|2026-01-15 07:30:05.123\|t\|6\|t\|null$/);
    } finally {
      await db.close();
    }
  });
  test(
    'streams that stall hold only the exports’ connections: queries still run, and a stream past them waits for one',
    { timeout: 60_000 },
    async () => {
      const db = createPostgresDb({ url: DATABASE_URL!, poolSize: 2, copyPoolSize: 2 });
      // A gigabyte each: no socket or stream buffer takes it whole, so a reader that stops holds its COPY.
      const huge = `SELECT repeat('x', 1000) || g FROM generate_series(1, 1000000) g`;
      const stalled: Readable[] = [];
      try {
        const firstPiece = (stream: Readable) =>
          new Promise<void>((resolve, reject) => stream.once('data', () => resolve()).once('error', reject));
        for (let i = 0; i < 2; i++) {
          const stream = db.copyColumn!(huge, []);
          stalled.push(stream);
          await firstPiece(stream);
          stream.pause();
        }
        // More than the API's pool has, and each answered while the two streams hold their connections.
        for (let i = 0; i < 3; i++) assert.equal((await db.one(shape({ n: col.int() }), 'SELECT 1 + 1 AS n')).n, 2);
        assert.equal(db.poolStats!().waiting, 0);
        // A third stream waits for one of the exports' connections, and streams once a stalled one is let go.
        const third = db.copyColumn!(`SELECT 'third'`, []);
        let got = '';
        third.on('data', (c: Buffer) => (got += c.toString('utf8')));
        const ended = new Promise((resolve) => third.once('end', resolve));
        stalled.shift()!.destroy();
        await ended;
        assert.equal(got, 'third');
      } finally {
        for (const s of stalled) s.destroy();
        await db.close();
      }
    },
  );
});
