/**
 * partedLines (formats/parts.ts): a file of lines the database wrote, one plain file or a zip of
 * parts where the stream breaks. Whether it is a zip is known from a count (iNaturalist) or, with
 * none, once the first break or the end arrives (eBird: the first part is held). A reader that
 * goes away stops the stream, so a database statement behind it gives its connection back.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PART_BREAK } from '../src/infra/db/index.ts';
import { partedLines } from '../src/modules/exports/formats/parts.ts';
import { bytes, unzip } from './helpers/export-files.ts';
import { waitFor } from './helpers/wait.ts';

type Piece = Buffer | typeof PART_BREAK;

/** The pieces, and whether the stream was stopped or ran to its end. */
function source(pieces: Piece[], more = 0) {
  const state = { finished: false, stopped: false };
  const gen = (async function* () {
    try {
      yield* pieces;
      for (let i = 0; i < more; i++) yield Buffer.from(`more ${i}\n`);
      state.finished = true;
    } finally {
      if (!state.finished) state.stopped = true;
    }
  })();
  return { gen, state };
}

const names = {
  single: { filename: 'f.csv', contentType: 'text/csv' },
  zip: { filename: 'f.zip', part: (n: number) => `part-${n}.csv` },
};

describe('partedLines', () => {
  test('no count, no break: one plain file, its held part first', async () => {
    const { gen } = source([Buffer.from('a\n'), Buffer.from('b\n')]);
    const f = await partedLines({ pieces: gen, header: '', encoding: 'utf8', ...names });
    assert.equal(f.contentType, 'text/csv');
    assert.equal((await bytes(f.body)).toString(), 'a\nb\n');
  });

  test('no count, a break: a zip whose parts end at each break, none empty', async () => {
    const { gen } = source([Buffer.from('a\n'), PART_BREAK, Buffer.from('b\n'), Buffer.from('c\n'), PART_BREAK, Buffer.from('d\n')]);
    const f = await partedLines({ pieces: gen, header: 'h\n', encoding: 'utf8', ...names });
    assert.equal(f.contentType, 'application/zip');
    const parts = await unzip(await bytes(f.body));
    assert.deepEqual(
      [...parts].map(([n, b]) => [n, b.toString()]),
      [
        ['part-1.csv', 'h\na\n'],
        ['part-2.csv', 'h\nb\nc\n'],
        ['part-3.csv', 'h\nd\n'],
      ],
    );
  });

  test('a count within the limit: one plain file streamed at once; a reader gone away stops the stream', async () => {
    const { gen, state } = source([Buffer.from('a\n')], 100_000);
    const f = await partedLines({ pieces: gen, header: 'h\n', maxRows: 10, listed: 5, encoding: 'utf8', ...names });
    assert.equal(f.contentType, 'text/csv');
    for await (const first of f.body) {
      assert.equal((first as Buffer).toString(), 'h\n');
      break;
    }
    await waitFor('the stream stopped', () => state.stopped);
  });

  test('no count: a reader gone away from the zip stops the stream', async () => {
    const { gen, state } = source([Buffer.from('a\n'), PART_BREAK], 200_000);
    const f = await partedLines({ pieces: gen, header: '', encoding: 'utf8', ...names });
    assert.equal(f.contentType, 'application/zip');
    for await (const first of f.body) {
      assert.ok((first as Buffer).length > 0);
      break;
    }
    await waitFor('the stream stopped', () => state.stopped);
  });
});
