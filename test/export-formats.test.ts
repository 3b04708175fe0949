/**
 * The export file writers (issue 18): eBird checklists, iNaturalist CSV, detections CSV/JSON,
 * Darwin Core Archive and the xeno-canto zip, fed from in-memory batches (no hub).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { parse } from 'csv-parse/sync';
import type { ExportContext, ExportRow, RowSource } from '../src/modules/exports/types.ts';
import { LICENSES } from '../src/modules/exports/licenses.ts';
import { EBIRD_COLUMNS, EBIRD_MAX_FILE_BYTES, ebirdChecklist, ebirdValue } from '../src/modules/exports/formats/ebird.ts';
import { INATURALIST_COLUMNS, INATURALIST_MAX_ROWS, inaturalistCsv, latin1Text } from '../src/modules/exports/formats/inaturalist.ts';
import { renderExport } from '../src/modules/exports/render.ts';
import { webhookContent } from '../src/modules/alerts/file-delivery.ts';
import { darwinCoreArchive } from '../src/modules/exports/formats/dwca.ts';
import { XENO_CANTO_COLUMNS, xenoCantoZip } from '../src/modules/exports/formats/xenocanto.ts';
import { SkipTally, localTime } from '../src/modules/exports/formats/shared.ts';
import { waitFor } from './helpers/wait.ts';
import { unzip } from './helpers/export-files.ts';

const ctx: ExportContext = {
  teamName: 'Hedge Watchers',
  timeZone: 'Europe/Berlin',
  generatedAt: new Date('2026-05-03T12:00:00Z'),
  detectionUrl: (id) => `https://chorus.example/detections/${id}`,
  audioUrl: (chunkId) => `https://chorus.example/api/audio/${chunkId}`,
  recordist: 'Hedge Watchers',
  license: 'CC BY-NC-SA 4.0',
  licenseInfo: LICENSES['CC-BY-NC-SA-4.0'],
};

const SPECIES: Record<string, [string, string, string]> = {
  eurbla: ['Eurasian Blackbird', 'Turdus merula', 'bird'],
  comred: ['Common Redpoll', 'Acanthis flammea', 'bird'],
  eurrob1: ['European Robin', 'Erithacus rubecula', 'bird'],
  pecspa1: ['Pectoral Sparrow', 'Arremon taciturnus', 'bird'],
  zzznope: ['Nonexistent Warbler', 'Nullus nullus', 'bird'],
  't-11145339': ['Northern Cricket Frog', 'Acris crepitans', 'amphibian'],
  dogdog: ['Dog', 'Dog', 'other_animal'],
};

let seq = 0;
function row(code: string, at: string, over: Partial<ExportRow> = {}): ExportRow {
  const [commonName, scientificName, category] = SPECIES[code];
  const id = `det-${++seq}`;
  return {
    id,
    tenantId: 'team-1',
    detectedAt: at,
    endAt: new Date(Date.parse(at) + 3000).toISOString(),
    speciesCode: code,
    commonName,
    scientificName,
    category,
    confidence: 0.8,
    calibratedConfidence: 0.7,
    satelliteId: 'sat-a',
    satelliteName: 'North Hedge',
    latitude: 52.52,
    longitude: 13.405,
    verificationStatus: 'unverified',
    chunkId: `chunk-${id}`,
    callChunks: 1,
    modelId: 'birdnet-2.4',
    isRare: false,
    ...over,
  };
}

async function* source(rows: ExportRow[], size = 2): RowSource {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

/** A writer's output as one string (eBird yields each checklist's lines as an array). */
async function text(gen: AsyncIterable<string | string[]>): Promise<string> {
  let out = '';
  for await (const s of gen) out += typeof s === 'string' ? s : s.join('');
  return out;
}

/**
 * An eBird file read as its import help describes it: CRLF lines, split on commas, no quotation
 * marks and no line breaks inside values, so every line is exactly 19 fields.
 */
function ebirdLines(csv: string): string[][] {
  assert.ok(!csv.includes('"'), 'no quotation marks anywhere in the file');
  if (csv === '') return [];
  assert.ok(csv.endsWith('\r\n'));
  const lines = csv.slice(0, -2).split('\r\n');
  return lines.map((l) => {
    assert.ok(!/[\r\n]/.test(l), `a line break inside a value: ${JSON.stringify(l)}`);
    const fields = l.split(',');
    assert.equal(fields.length, EBIRD_COLUMNS.length, l);
    return fields;
  });
}

const noAudio = { audio: async () => null };

async function bytes(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const tempDirs = () => new Set(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('chorus-export-')));

describe('eBird checklist', () => {
  // Berlin is UTC+2 in May: 21:59Z is 23:59 on the 1st, 22:01Z is 00:01 on the 2nd.
  const rows = [
    row('comred', '2026-05-01T04:00:00Z', { confidence: 0.91 }),
    row('t-11145339', '2026-05-01T04:30:00Z'),
    row('eurrob1', '2026-05-01T05:00:00Z', { satelliteId: 'sat-b', satelliteName: 'Pond', latitude: -33.5, longitude: -70.25 }),
    row('pecspa1', '2026-05-01T06:00:00Z'),
    row('eurbla', '2026-05-01T10:00:00Z', { confidence: 0.95, modelId: 'birdnet-2.4-ft' }),
    row('zzznope', '2026-05-01T11:00:00Z'),
    row('eurbla', '2026-05-01T12:00:00Z', { verificationStatus: 'rejected' }),
    row('eurbla', '2026-05-01T21:59:00Z', { confidence: 0.6 }),
    row('eurbla', '2026-05-01T22:01:00Z'),
  ];

  test('19 fields, no header, one checklist per satellite and local day, eBird names', async () => {
    const out = ebirdChecklist(source(rows), ctx);
    const csv = await text(out.chunks);
    const lines = ebirdLines(csv);
    assert.equal(lines.length, 4);
    for (const l of lines) {
      assert.equal(l.length, 19, l.join('|'));
      assert.notEqual(l[0], 'Common Name');
      assert.match(l[8], /^\d\d\/\d\d\/\d{4}$/);
      assert.match(l[9], /^\d\d:\d\d$/);
      assert.equal(l[12], 'Stationary');
      assert.equal(l[13], '1');
      assert.equal(l[15], 'N');
      assert.deepEqual([l[16], l[17]], ['', '']);
      // State and Country from the position, offline (test/export-places.test.ts): Berlin, and Santiago de Chile.
      assert.deepEqual([l[10], l[11]], l[5] === 'Pond' ? ['RM', 'CL'] : ['BE', 'DE']);
      assert.equal(l[3], 'X');
    }
    const byChecklist = new Map<string, string[][]>();
    for (const l of lines) {
      const key = `${l[5]}|${l[8]}|${l[9]}`;
      byChecklist.set(key, [...(byChecklist.get(key) ?? []), l]);
    }
    assert.deepEqual([...byChecklist.keys()], ['North Hedge|05/01/2026|06:00', 'Pond|05/01/2026|07:00', 'North Hedge|05/02/2026|00:01']);
    const first = byChecklist.get('North Hedge|05/01/2026|06:00')!;
    // Taxonomic order: thrushes (Turdus) before finches (Acanthis); redpoll under eBird's own name and taxon.
    assert.deepEqual(
      first.map((l) => l.slice(0, 3)),
      [
        ['Eurasian Blackbird', 'Turdus', 'merula'],
        ['Redpoll (Common)', 'Acanthis', 'flammea flammea/rostrata/islandica'],
      ],
    );
    // 04:00:00Z to the last call's end at 21:59:03Z.
    assert.equal(first[0][14], String(Math.ceil((17 * 3600 + 59 * 60 + 3) / 60)));
    assert.deepEqual([first[0][6], first[0][7]], ['52.520000', '13.405000']);
    assert.match(first[0][4], /^Detected acoustically by Chorus \(model birdnet-2\.4-ft; best confidence 0\.95\); 2 calls; /);
    assert.equal(first[0][4].match(/https:\/\/chorus\.example\/detections\//g)?.length, 2);
    assert.match(first[0][18], /Chorus satellite 'North Hedge'/);
    const pond = byChecklist.get('Pond|05/01/2026|07:00')!;
    assert.deepEqual([pond[0][0], pond[0][6], pond[0][7], pond[0][14]], ['European Robin', '-33.500000', '-70.250000', '1']);
    assert.equal(byChecklist.get('North Hedge|05/02/2026|00:01')![0][0], 'Eurasian Blackbird');
    assert.equal(out.checklists(), 3);

    const skipped = out.skipped().map((s) => `${s.speciesCode}:${s.reason}:${s.count}`);
    assert.deepEqual(skipped.sort(), [
      'eurbla:rejected:1',
      'pecspa1:not_in_ebird_taxonomy:1',
      't-11145339:not_a_bird:1',
      'zzznope:not_in_ebird_taxonomy:1',
    ]);
  });

  test('counts: X by default, the number of calls on request', async () => {
    const lines = ebirdLines(await text(ebirdChecklist(source(rows), ctx, { counts: 'calls' }).chunks));
    assert.deepEqual(
      lines.map((l) => `${l[8]} ${l[0]} ${l[3]}`),
      [
        '05/01/2026 Eurasian Blackbird 2',
        '05/01/2026 Redpoll (Common) 1',
        '05/01/2026 European Robin 1',
        '05/02/2026 Eurasian Blackbird 1',
      ],
    );
  });

  test('a finished day is written while later rows are still being read', async () => {
    let read = 0;
    async function* days(): RowSource {
      for (let d = 1; d <= 5; d++) {
        read++;
        yield [row('eurbla', `2026-05-0${d}T08:00:00Z`)];
      }
    }
    const seen: [number, string][] = [];
    for await (const chunk of ebirdChecklist(days(), ctx).chunks) seen.push([read, ebirdLines(chunk.join(''))[0][8]]);
    assert.equal(seen.length, 5);
    // Day 1 closes when day 3 arrives (one day stays open behind the current one).
    assert.deepEqual(seen[0], [3, '05/01/2026']);
    assert.deepEqual(seen[2], [5, '05/03/2026']);
  });

  test('no rows, no lines', async () => {
    const out = ebirdChecklist(source([]), ctx);
    assert.equal(await text(out.chunks), '');
    assert.deepEqual(out.skipped(), []);
  });

  test('the file as eBird reads it: nothing quoted, 19 comma-split fields a line, the formula guard kept, Duration filled', async () => {
    const nasty = 'Kottenforst, "Weiher"\r\nSüd';
    const rows = [
      row('eurbla', '2026-05-01T04:00:00Z', { satelliteName: nasty, modelId: 'birdnet,"2.4"' }),
      // The call runs on for 150 s: the checklist ends with it.
      row('comred', '2026-05-01T04:10:00Z', { satelliteName: nasty, endAt: '2026-05-01T04:12:30.000Z' }),
      row('eurbla', '2026-05-01T05:00:00Z', {
        satelliteId: 'sat-b',
        satelliteName: '\t=HYPERLINK("x")',
        latitude: -33.5,
        longitude: -70.25,
      }),
    ];
    const out = await renderExport('checklist', source(rows), { ...ctx, teamName: 'Hedge, "Watchers"' }, noAudio);
    assert.equal(out.contentType, 'text/csv; charset=utf-8');
    assert.match(out.filename, /-ebird\.csv$/);
    const lines = ebirdLines((await bytes(out.body)).toString('utf8'));
    assert.equal(lines.length, 3);
    const garden = lines.filter((l) => l[5] === "Kottenforst; 'Weiher' Süd");
    assert.equal(garden.length, 2, 'commas become semicolons, double quotes single quotes, line breaks one space');
    // 04:00:00 to the redpoll call's end at 04:12:30: 12.5 minutes, rounded up.
    for (const l of garden) assert.equal(l[14], '13');
    assert.match(garden[0][4], /\(model birdnet;'2\.4'; best confidence 0\.80\)/);
    assert.match(garden[0][18], /Chorus satellite 'Kottenforst; 'Weiher' Süd' \(team Hedge; 'Watchers'\)/);
    const pond = lines.find((l) => l[7] === '-70.250000')!;
    assert.equal(pond[5], `'=HYPERLINK('x')`, 'a formula still gets its apostrophe, found after the tab is gone');
    assert.equal(pond[6], '-33.500000', 'coordinates are numbers, not neutralised');
    assert.equal(pond[14], '1', 'one 3-second call: a minute');
    for (const l of lines) assert.match(l[14], /^[1-9]\d*$/);
  });

  test('ebirdValue: what eBird cannot take inside a value', () => {
    assert.equal(ebirdValue('a,b "c"\n\td\u2028e'), "a;b 'c' d e");
    assert.equal(ebirdValue('\u00a0=1+2\u00a0'), "'=1+2", 'any white space around a value is trimmed before the formula guard');
    assert.equal(ebirdValue(' @sum(1)'), "'@sum(1)");
    assert.equal(ebirdValue('Süd – Łódź'), 'Süd – Łódź', 'eBird reads UTF-8: names are left as they are');
  });

  /** 60 satellites, 20 days, 3 species: 1,200 checklists of 3 lines, about 1.5 MB. */
  function manyChecklists(): ExportRow[] {
    const out: ExportRow[] = [];
    for (let d = 0; d < 20; d++)
      for (let sat = 0; sat < 60; sat++)
        ['eurbla', 'comred', 'eurrob1'].forEach((code, k) =>
          out.push(
            row(code, new Date(Date.UTC(2026, 4, 1 + d, 6, sat, k * 20)).toISOString(), {
              satelliteId: `sat-${sat}`,
              satelliteName: `Hedge, "no. ${sat}"`,
            }),
          ),
        );
    return out;
  }

  test('more than 1 MB: a zip of parts of at most 1 MB each, every checklist whole in one part, nothing lost', async () => {
    const rows = manyChecklists();
    const whole = await text(ebirdChecklist(source(rows, 5000), ctx).chunks);
    assert.ok(Buffer.byteLength(whole) > EBIRD_MAX_FILE_BYTES, `${Buffer.byteLength(whole)} bytes`);
    const out = await renderExport('checklist', source(rows, 5000), ctx, noAudio);
    assert.equal(out.contentType, 'application/zip');
    assert.match(out.filename, /-ebird\.zip$/);
    const files = await unzip(await bytes(out.body));
    const names = [...files.keys()];
    assert.deepEqual(
      names,
      names.map((_, i) => `ebird-part-${i + 1}.csv`),
    );
    assert.equal(names.length, 2);
    const partOf = new Map<string, string>();
    let joined = '';
    for (const [name, buf] of files) {
      assert.ok(buf.length <= EBIRD_MAX_FILE_BYTES, `${name}: ${buf.length} bytes`);
      const csv = buf.toString('utf8');
      joined += csv;
      for (const l of ebirdLines(csv)) {
        const checklist = `${l[5]}|${l[8]}|${l[9]}`;
        assert.equal(partOf.get(checklist) ?? name, name, `checklist ${checklist} split across parts`);
        partOf.set(checklist, name);
        assert.equal(l[14], '1');
      }
    }
    assert.equal(partOf.size, 1200);
    assert.equal(joined, whole, 'the parts in order are the file');
  });

  test('a checklist larger than a whole part is split between its lines', async () => {
    const rows = manyChecklists().slice(0, 6);
    const out = await renderExport('checklist', source(rows), ctx, { ...noAudio, partLimit: { bytes: 1000 } });
    assert.equal(out.contentType, 'application/zip');
    const files = await unzip(await bytes(out.body));
    let lines = 0;
    for (const [name, buf] of files) {
      assert.ok(buf.length <= 1000, `${name}: ${buf.length} bytes`);
      lines += ebirdLines(buf.toString('utf8')).length;
    }
    assert.equal(lines, 6);
    assert.ok(files.size >= 3);
  });

  test('up to 1 MB: one plain CSV', async () => {
    const rows = manyChecklists().slice(0, 3 * 600);
    const out = await renderExport('checklist', source(rows), ctx, noAudio);
    assert.equal(out.contentType, 'text/csv; charset=utf-8');
    const buf = await bytes(out.body);
    assert.ok(buf.length <= EBIRD_MAX_FILE_BYTES && buf.length > EBIRD_MAX_FILE_BYTES / 3, `${buf.length} bytes`);
    assert.equal(ebirdLines(buf.toString('utf8')).length, 1800);
  });
});

describe('iNaturalist CSV', () => {
  test('the documented columns in order, one observation per organism', async () => {
    const rows = [row('eurbla', '2026-05-01T04:00:00Z', { satelliteName: '=cmd' }), row('dogdog', '2026-05-01T05:00:00Z')];
    const skipped = new SkipTally();
    const lines = parse(await text(inaturalistCsv(source(rows), ctx, { geoprivacy: 'obscured', skipped }))) as string[][];
    assert.deepEqual(lines[0], [...INATURALIST_COLUMNS]);
    assert.deepEqual(lines[0], [
      'Taxon name',
      'Date observed',
      'Description',
      'Place name',
      'Latitude / y coord / northing',
      'Longitude / x coord / easting',
      'Tags',
      'Geoprivacy',
    ]);
    assert.equal(lines.length, 2);
    const [taxon, date, description, place, lat, lon, tags, geoprivacy] = lines[1];
    assert.equal(taxon, 'Turdus merula');
    assert.equal(date, '2026-05-01 06:00:00 +02:00');
    assert.match(
      description,
      /^Eurasian Blackbird, .*confidence 0\.80 .*model birdnet-2\.4\. Detection: https:\/\/chorus\.example\/detections\/det-\d+ Audio: /,
    );
    assert.deepEqual([place, lat, lon, tags, geoprivacy], ["'=cmd", '52.520000', '13.405000', 'Chorus,acoustic', 'obscured']);
    assert.deepEqual(
      skipped.list().map((s) => s.speciesCode),
      ['dogdog'],
    );
  });
});

describe('iNaturalist file as its importer reads it (ISO-8859-1, fewer than 10,000 rows)', () => {
  test('Latin-1 bytes: Latin-1 letters as they are, everything else transliterated, the formula guard after it', async () => {
    const rows = [
      row('eurbla', '2026-05-01T04:00:00Z', { satelliteName: 'Kottenforst – Łódź’s “Süd”', commonName: 'Grünfink 金翅雀 Зяблик' }),
      row('eurbla', '2026-05-01T05:00:00Z', { satelliteName: '–=cmd' }),
      // u + combining diaeresis: composed to ü, which Latin-1 has.
      row('eurbla', '2026-05-01T06:00:00Z', { satelliteName: 'Su\u0308d\u0085' }),
    ];
    const out = await renderExport('inaturalist', source(rows), ctx, noAudio);
    assert.equal(out.contentType, 'text/csv; charset=iso-8859-1');
    assert.match(out.filename, /-inaturalist\.csv$/);
    const buf = await bytes(out.body);
    // What iNaturalist does: read the bytes as ISO-8859-1.
    const read = buf.toString('latin1');
    assert.ok(Buffer.from(read, 'latin1').equals(buf));
    assert.ok(!buf.includes(Buffer.from('ü', 'utf8')), 'no UTF-8 sequence that would read as Ã¼');
    assert.ok(buf.includes(Buffer.from([0x53, 0xfc, 0x64])), '"Süd" is S, 0xFC, d');
    const lines = parse(read) as string[][];
    assert.deepEqual(lines[0], [...INATURALIST_COLUMNS]);
    assert.equal(lines[1][3], `Kottenforst - Lodz's "Süd"`);
    assert.match(lines[1][2], /^Grünfink JinChiQue Zyablik, detected acoustically by Chorus/);
    assert.equal(lines[2][3], "'-=cmd", 'transliterated first, then neutralised');
    assert.equal(lines[3][3], 'Süd');
  });

  test('a scheduled webhook carries the file as text read in its own charset, a zip of parts as base64', async () => {
    const out = await renderExport('inaturalist', source([row('eurbla', '2026-05-01T04:00:00Z', { satelliteName: 'Süd' })]), ctx, noAudio);
    const sent = webhookContent(out.contentType, await bytes(out.body));
    assert.equal(sent.contentEncoding, 'text');
    assert.equal((parse(sent.content) as string[][])[1][3], 'Süd');
    const zip = Buffer.from('PK\u0003\u0004 not text', 'latin1');
    assert.deepEqual(webhookContent('application/zip', zip), { content: zip.toString('base64'), contentEncoding: 'base64' });
  });

  test('latin1Text', () => {
    assert.equal(latin1Text('Łódź – „Weiher“ … 5€'), 'Lodz - "Weiher" ... 5EUR');
    assert.equal(
      latin1Text('Kraków’s “Žabí” potok'),
      `Kraków's "Zabi" potok`,
      'a word with a letter outside Latin-1 is spelled in ASCII whole',
    );
    assert.equal(latin1Text('Straße, Genève, Søndre'), 'Straße, Genève, Søndre');
    assert.equal(latin1Text('plain'), 'plain');
  });

  for (const [n, parts] of [
    [INATURALIST_MAX_ROWS, null],
    [2 * INATURALIST_MAX_ROWS + 3, [INATURALIST_MAX_ROWS, INATURALIST_MAX_ROWS, 3]],
  ] as const) {
    test(`${n} observations: ${parts ? `a zip of ${parts.length} parts` : 'one CSV'}, fewer than 10,000 rows a file`, async () => {
      const rows: ExportRow[] = [];
      for (let i = 0; i < n; i++) {
        rows.push(row('eurbla', new Date(Date.UTC(2026, 4, 1) + i * 1000).toISOString()));
        // Rows left out are not counted against the limit.
        if (i % 1000 === 0) rows.push(row('dogdog', new Date(Date.UTC(2026, 4, 1) + i * 1000 + 1).toISOString()));
      }
      const out = await renderExport('inaturalist', source(rows, 5000), ctx, noAudio);
      const buf = await bytes(out.body);
      const read = (b: Buffer) => parse(b.toString('latin1')) as string[][];
      if (!parts) {
        assert.equal(out.contentType, 'text/csv; charset=iso-8859-1');
        const lines = read(buf);
        assert.deepEqual(lines[0], [...INATURALIST_COLUMNS]);
        assert.equal(lines.length - 1, n);
        return;
      }
      assert.equal(out.contentType, 'application/zip');
      assert.match(out.filename, /-inaturalist\.zip$/);
      const files = await unzip(buf);
      assert.deepEqual(
        [...files.keys()],
        parts.map((_, i) => `inaturalist-part-${i + 1}.csv`),
      );
      const ids: string[] = [];
      [...files.values()].forEach((b, i) => {
        const lines = read(b);
        assert.deepEqual(lines[0], [...INATURALIST_COLUMNS], 'each part has the header');
        assert.equal(lines.length - 1, parts[i]);
        assert.ok(lines.length - 1 < 10_000);
        for (const l of lines.slice(1)) ids.push(/detections\/(det-\d+)/.exec(l[2])![1]);
      });
      assert.deepEqual(
        ids,
        rows.filter((r) => r.speciesCode === 'eurbla').map((r) => r.id),
        'every observation once, in order',
      );
    });
  }

  /** The first chunk of a body, or a failure once `ms` pass without one (it waited for a part to fill). */
  async function firstChunk(body: NodeJS.ReadableStream, ms = 3000): Promise<{ chunk: Buffer; rest: () => Promise<Buffer> }> {
    const it = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let timer: NodeJS.Timeout | undefined;
    const first = await Promise.race([
      it.next(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no byte while the rows were still coming')), ms))),
    ]).finally(() => clearTimeout(timer));
    assert.ok(!first.done);
    return {
      chunk: first.value,
      rest: async () => {
        const chunks = [first.value];
        for (let n = await it.next(); !n.done; n = await it.next()) chunks.push(n.value);
        return Buffer.concat(chunks);
      },
    };
  }

  /** Two rows, then a wait until `release()`, then the rest: the first bytes must not wait for the rest. */
  function gated(rows: ExportRow[]) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* rowsOf(): RowSource {
      yield rows.slice(0, 2);
      await gate;
      yield rows.slice(2);
    }
    return { source: rowsOf(), release };
  }

  test('with the rows counted up front (listed), a file within the limit is one CSV streamed from its first line', async () => {
    const rows = [0, 1, 2].map((i) => row('eurbla', new Date(Date.UTC(2026, 4, 1, 5, i)).toISOString()));
    const g = gated(rows);
    const out = await renderExport('inaturalist', g.source, ctx, { ...noAudio, partLimit: { rows: 3 }, listed: 3 });
    assert.equal(out.contentType, 'text/csv; charset=iso-8859-1');
    const first = await firstChunk(out.body);
    g.release();
    const lines = parse((await first.rest()).toString('latin1')) as string[][];
    assert.deepEqual(lines[0], [...INATURALIST_COLUMNS]);
    assert.equal(lines.length - 1, 3);
  });

  test('with more rows listed than a file takes, a zip of parts streams at once; rows left out still count, so a zip may hold one part', async () => {
    const rows = [0, 1, 2].map((i) => row('eurbla', new Date(Date.UTC(2026, 4, 1, 5, i)).toISOString()));
    const g = gated(rows);
    const out = await renderExport('inaturalist', g.source, ctx, { ...noAudio, partLimit: { rows: 2 }, listed: 3 });
    assert.equal(out.contentType, 'application/zip');
    const first = await firstChunk(out.body);
    g.release();
    const files = await unzip(await first.rest());
    assert.deepEqual([...files.keys()], ['inaturalist-part-1.csv', 'inaturalist-part-2.csv']);
    assert.deepEqual(
      [...files.values()].map((b) => (parse(b.toString('latin1')) as string[][]).length - 1),
      [2, 1],
    );

    // Three rows listed, one a dog (no species): two lines fit one file, but the count decided a zip.
    const mixed = [
      row('eurbla', '2026-05-01T05:00:00.000Z'),
      row('dogdog', '2026-05-01T05:01:00.000Z'),
      row('eurbla', '2026-05-01T05:02:00.000Z'),
    ];
    const zipped = await renderExport('inaturalist', source(mixed), ctx, { ...noAudio, partLimit: { rows: 2 }, listed: 3 });
    assert.equal(zipped.contentType, 'application/zip');
    assert.deepEqual([...(await unzip(await bytes(zipped.body))).keys()], ['inaturalist-part-1.csv']);
  });
});

describe('Darwin Core Archive', () => {
  test('meta.xml maps every column, MachineObservation, multimedia refers to occurrences, no tabs', async () => {
    const before = tempDirs();
    const rows = [
      row('eurbla', '2026-05-01T04:00:00Z', { satelliteName: 'North\tHedge\nEast' }),
      row('t-11145339', '2026-05-01T05:00:00Z', { latitude: null, longitude: null }),
      row('dogdog', '2026-05-01T06:00:00Z'),
      row('eurrob1', '2026-05-01T07:00:00Z', { verificationStatus: 'confirmed' }),
    ];
    const skipped = new SkipTally();
    const files = await unzip(await bytes(darwinCoreArchive(source(rows), ctx, { skipped })));
    assert.deepEqual([...files.keys()].sort(), ['eml.xml', 'meta.xml', 'multimedia.txt', 'occurrence.txt']);

    const meta = files.get('meta.xml')!.toString('utf8');
    const core = meta.match(/<core ([^>]*)>([\s\S]*?)<\/core>/)!;
    assert.match(core[1], /rowType="http:\/\/rs\.tdwg\.org\/dwc\/terms\/Occurrence"/);
    assert.match(core[1], /fieldsTerminatedBy="\\t"/);
    assert.match(core[1], /linesTerminatedBy="\\n"/);
    assert.match(core[1], /ignoreHeaderLines="1"/);
    assert.match(core[1], /encoding="UTF-8"/);
    assert.match(core[2], /<id index="0"\/>/);
    assert.match(core[2], /<location>occurrence\.txt<\/location>/);
    const coreFields = [...core[2].matchAll(/<field index="(\d+)" term="([^"]+)"\/>/g)].map((m) => [Number(m[1]), m[2]] as const);

    const occ = files.get('occurrence.txt')!.toString('utf8');
    assert.ok(occ.endsWith('\n') && !occ.includes('\r'));
    const [header, ...lines] = occ
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.equal(coreFields.length, header.length);
    header.forEach((name, i) => {
      assert.equal(coreFields[i][0], i);
      assert.match(coreFields[i][1], /^http:\/\/(rs\.tdwg\.org\/dwc\/terms|purl\.org\/dc\/terms)\//);
      assert.ok(coreFields[i][1].endsWith(`/${name}`), `${name} ↔ ${coreFields[i][1]}`);
    });
    assert.equal(lines.length, 3);
    const col = (name: string) => header.indexOf(name);
    for (const l of lines) {
      assert.equal(l.length, header.length);
      assert.equal(l[col('basisOfRecord')], 'MachineObservation');
      assert.equal(l[col('occurrenceStatus')], 'present');
      // The call's start and end, an ISO 8601 interval.
      assert.match(l[col('eventDate')], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d\/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    }
    assert.equal(lines[0][col('eventDate')], '2026-05-01T06:00:00+02:00/2026-05-01T06:00:03+02:00');
    assert.equal(lines[0][col('locality')], 'North Hedge East');
    assert.equal(lines[0][col('identificationRemarks')], 'confidence 0.80 (calibrated 0.70), model birdnet-2.4');
    assert.equal(lines[0][col('associatedMedia')], `https://chorus.example/api/audio/${rows[0].chunkId}`);
    assert.equal(lines[1][col('decimalLatitude')], '');
    assert.equal(lines[1][col('geodeticDatum')], '');
    assert.equal(lines[2][col('identificationVerificationStatus')], 'verified');

    const ext = meta.match(/<extension ([^>]*)>([\s\S]*?)<\/extension>/)!;
    assert.match(ext[1], /rowType="http:\/\/rs\.gbif\.org\/terms\/1\.0\/Multimedia"/);
    assert.match(ext[2], /<coreid index="0"\/>/);
    const media = files
      .get('multimedia.txt')!
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    const extFields = [...ext[2].matchAll(/<field index="(\d+)" term="([^"]+)"\/>/g)].map((m) => m[2]);
    assert.equal(extFields.length, media[0].length - 1);
    media[0].slice(1).forEach((name, i) => assert.ok(extFields[i].endsWith(`/${name}`)));
    const ids = new Set(lines.map((l) => l[0]));
    assert.equal(media.length - 1, 3);
    for (const m of media.slice(1)) {
      assert.ok(ids.has(m[0]), `coreid ${m[0]}`);
      assert.equal(m[media[0].indexOf('type')], 'Sound');
      assert.equal(m[media[0].indexOf('format')], 'audio/wav');
      assert.equal(m[media[0].indexOf('license')], 'http://creativecommons.org/licenses/by-nc-sa/4.0/legalcode');
    }

    const eml = files.get('eml.xml')!.toString('utf8');
    assert.match(eml, /https:\/\/eml\.ecoinformatics\.org\/eml-2\.2\.0/);
    for (const tag of ['title', 'creator', 'pubDate', 'abstract', 'intellectualRights', 'contact'])
      assert.match(eml, new RegExp(`<${tag}>`));
    assert.match(eml, /<pubDate>2026-05-03<\/pubDate>/);
    assert.deepEqual(
      skipped.list().map((s) => `${s.speciesCode}:${s.reason}`),
      ['dogdog:not_a_species'],
    );
    await waitFor('the temp files removed', () => {
      assert.deepEqual(
        [...tempDirs()].filter((d) => !before.has(d)),
        [],
        'temp files removed',
      );
      return true;
    });
  });

  test('a failing row source ends the stream with its error and removes the temp files', async () => {
    const before = tempDirs();
    async function* broken(): RowSource {
      yield [row('eurbla', '2026-05-01T04:00:00Z')];
      throw new Error('database went away');
    }
    await assert.rejects(bytes(darwinCoreArchive(broken(), ctx)), /database went away/);
    await waitFor('the temp files removed', () => {
      assert.deepEqual(
        [...tempDirs()].filter((d) => !before.has(d)),
        [],
      );
      return true;
    });
  });

  test('a formula in locality, recordedBy and the other typed values is neutralised as in the CSV writers; coordinates stay numbers', async () => {
    const hostile: ExportContext = { ...ctx, recordist: '+cmd|" /C calc"!A0', teamName: '@SUM(1+1)' };
    const rows = [
      row('eurbla', '2026-05-01T04:00:00Z', {
        satelliteName: '=HYPERLINK("http://evil.example","x")',
        latitude: -33.8688,
        longitude: 151.2093,
      }),
      row('eurrob1', '2026-05-01T05:00:00Z', { satelliteName: '\t-2+3', commonName: '=1+1' }),
    ];
    const files = await unzip(await bytes(darwinCoreArchive(source(rows), hostile)));
    const [header, ...lines] = files
      .get('occurrence.txt')!
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    const col = (n: string) => header.indexOf(n);
    assert.equal(lines[0][col('locality')], `'=HYPERLINK("http://evil.example","x")`);
    assert.equal(lines[0][col('recordedBy')], `'+cmd|" /C calc"!A0`);
    assert.equal(lines[0][col('decimalLatitude')], '-33.868800', 'a negative coordinate is a number, not a formula');
    // The leading tab is neutralised before tabs become spaces, so no formula hides behind it.
    assert.equal(lines[1][col('locality')], "' -2+3");
    assert.equal(lines[1][col('vernacularName')], "'=1+1");
    const [mHeader, ...media] = files
      .get('multimedia.txt')!
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.equal(media[0][mHeader.indexOf('creator')], `'+cmd|" /C calc"!A0`);
    assert.equal(media[0][mHeader.indexOf('rightsHolder')], `'+cmd|" /C calc"!A0`);
    for (const l of [...lines, ...media])
      for (const cell of l)
        if (!/^-?\d+(\.\d+)?$/.test(cell)) assert.doesNotMatch(cell, /^[=+\-@\t\r]/, `no text cell starts a formula: ${cell}`);
  });
});

describe('xeno-canto zip', () => {
  test('audio byte for byte, metadata.csv header, missing audio listed', async () => {
    const rows = [
      row('eurbla', '2026-05-01T04:00:00Z'),
      row('eurrob1', '2026-05-01T04:10:00Z'),
      row('comred', '2026-05-01T04:20:00Z'),
      row('dogdog', '2026-05-01T04:30:00Z'),
    ];
    const wavs = new Map<string, Buffer>([
      [rows[0].chunkId, crypto.randomBytes(200_000)],
      [rows[2].chunkId, Buffer.concat([Buffer.from('RIFF'), crypto.randomBytes(5000)])],
    ]);
    const skipped = new SkipTally();
    const files = await unzip(await bytes(xenoCantoZip(source(rows), ctx, async (id) => wavs.get(id) ?? null, { skipped })));
    assert.deepEqual(
      [...files.keys()].sort(),
      [`audio/${rows[0].id}.wav`, `audio/${rows[2].id}.wav`, 'metadata.csv', 'missing.txt'].sort(),
    );
    assert.ok(files.get(`audio/${rows[0].id}.wav`)!.equals(wavs.get(rows[0].chunkId)!));
    assert.ok(files.get(`audio/${rows[2].id}.wav`)!.equals(wavs.get(rows[2].chunkId)!));

    const meta = parse(files.get('metadata.csv')!) as string[][];
    assert.deepEqual(meta[0], [...XENO_CANTO_COLUMNS]);
    assert.deepEqual(meta[0].slice(0, 4), ['file', 'recordist', 'date', 'time']);
    assert.equal(meta.length, 3);
    const rec = Object.fromEntries(meta[0].map((k, i) => [k, meta[1][i]]));
    assert.deepEqual(
      [rec.file, rec.recordist, rec.date, rec.time, rec.species, rec.sound_type, rec.equipment, rec.license],
      [
        `audio/${rows[0].id}.wav`,
        'Hedge Watchers',
        '2026-05-01',
        '06:00',
        'Turdus merula',
        '',
        'Chorus satellite North Hedge, 48 kHz mono',
        'CC BY-NC-SA 4.0',
      ],
    );
    assert.deepEqual(
      [rec.recording_method, rec.animal_seen, rec.playback_used, rec.latitude],
      ['field recording', 'unknown', 'no', '52.520000'],
    );
    assert.match(rec.remarks, /^Eurasian Blackbird, .*confidence 0\.80.*model birdnet-2\.4\. https:\/\/chorus\.example\/detections\//);

    const missing = parse(files.get('missing.txt')!, { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      missing.map((m) => [m.detection_id, m.reason]),
      [
        [rows[1].id, 'audio_missing'],
        [rows[3].id, 'not_a_species'],
      ],
    );
    assert.equal(skipped.total, 2);
  });

  test('no missing.txt when every recording is there', async () => {
    const rows = [row('eurbla', '2026-05-01T04:00:00Z')];
    const files = await unzip(await bytes(xenoCantoZip(source(rows), ctx, async () => Buffer.from('RIFFxxxx'))));
    assert.deepEqual([...files.keys()].sort(), [`audio/${rows[0].id}.wav`, 'metadata.csv']);
  });

  test('a reader that goes away stops the rows and the temp files go', async () => {
    const before = tempDirs();
    let batches = 0;
    let sourceClosed = false;
    async function* many(): RowSource {
      try {
        for (let i = 0; i < 1000; i++) {
          batches++;
          yield [row('eurbla', new Date(Date.UTC(2026, 4, 1) + i * 1000).toISOString())];
        }
      } finally {
        sourceClosed = true;
      }
    }
    const stream = xenoCantoZip(many(), ctx, async () => crypto.randomBytes(100_000));
    await new Promise<void>((resolve) => stream.once('data', () => resolve()));
    stream.destroy();
    // Once the row source is closed no batch can be read any more: then count them.
    await waitFor('the row source closed', () => sourceClosed);
    assert.ok(batches < 20, `read ${batches} batches after the reader left`);
    assert.ok(sourceClosed, 'the row source was closed');
    await waitFor('the temp files removed', () => {
      assert.deepEqual(
        [...tempDirs()].filter((d) => !before.has(d)),
        [],
      );
      return true;
    });
  });
});

describe('local time', () => {
  test('offsets across DST in the team zone', () => {
    assert.deepEqual(localTime('2026-01-15T07:30:05.123Z', 'Europe/Berlin'), {
      date: '2026-01-15',
      time: '08:30:05',
      offset: '+01:00',
      day: 20468,
    });
    assert.equal(localTime('2026-07-01T00:00:00Z', 'America/St_Johns').offset, '-02:30');
    assert.equal(localTime('2026-07-01T00:00:00Z', 'UTC').offset, '+00:00');
  });
});
