/**
 * The PDF detections report (issue 18): the single-pass accumulator (local days and hours in the
 * team's zone, zero days, top species, confirmed) and the rendered PDF, read back with poppler's
 * pdftotext/pdfinfo (installed by .ci/run).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import PDFDocument from 'pdfkit';
import { createReportAccumulator, type ReportData } from '../src/modules/exports/report/data.ts';
import { renderReport, reportFonts } from '../src/modules/exports/report/pdf.ts';
import type { ExportRow, VerificationStatus } from '../src/modules/exports/types.ts';

const run = promisify(execFile);
const TZ = 'Europe/Berlin';
// 14 to 16 March 2026 in Berlin (CET, UTC+1): local midnights 23:00Z the day before.
const PERIOD = { start: '2026-03-13T23:00:00.000Z', end: '2026-03-16T23:00:00.000Z' };
const NOW = new Date('2026-03-17T09:30:00.000Z');

let seq = 0;
function row(
  at: string,
  sp: [code: string, common: string, scientific: string],
  sat: [id: string, name: string],
  extra: Partial<ExportRow> = {},
): ExportRow {
  seq++;
  return {
    id: `d${seq}`,
    tenantId: 't1',
    detectedAt: at,
    endAt: new Date(Date.parse(at) + 3000).toISOString(),
    speciesCode: sp[0],
    commonName: sp[1],
    scientificName: sp[2],
    category: 'bird',
    confidence: 0.8,
    calibratedConfidence: 0.8,
    satelliteId: sat[0],
    satelliteName: sat[1],
    latitude: 52.5,
    longitude: 13.4,
    verificationStatus: 'unverified' as VerificationStatus,
    chunkId: `c${seq}`,
    callChunks: 1,
    modelId: 'm1',
    isRare: false,
    ...extra,
  };
}

const ROBIN: [string, string, string] = ['eurrob1', 'European Robin', 'Erithacus rubecula'];
const GREENFINCH: [string, string, string] = ['eurgre1', 'Grünfink', 'Chloris chloris'];
const TIT: [string, string, string] = ['gretit1', 'Great Tit', 'Parus major'];
const BLACKBIRD: [string, string, string] = ['eurbla', 'Eurasian Blackbird', 'Turdus merula'];
const GARDEN: [string, string] = ['s1', 'Garden Mic'];
const MEADOW: [string, string] = ['s2', 'Meadow Edge'];

/**
 * Three local days, two satellites, four species. 2026-03-14T22:59:30Z is 23:59:30 on 14 March in
 * Berlin, just before local midnight; 2026-03-15T23:30:00Z is 00:30 on 16 March local but still the
 * 15th in UTC, so a UTC day would put it on the wrong day (and leave the 15th non-empty).
 */
function sampleRows(): ExportRow[] {
  return [
    row('2026-03-14T05:10:00.000Z', ROBIN, GARDEN, { verificationStatus: 'confirmed', calibratedConfidence: 0.91 }),
    row('2026-03-14T05:20:00.000Z', ROBIN, GARDEN),
    row('2026-03-14T06:00:00.000Z', GREENFINCH, MEADOW, { verificationStatus: 'confirmed' }),
    row('2026-03-14T22:59:30.000Z', TIT, GARDEN), // 23:59 local, before midnight
    row('2026-03-15T23:30:00.000Z', ROBIN, MEADOW, { calibratedConfidence: 0.97 }), // 00:30 local on the 16th
    row('2026-03-16T06:15:00.000Z', GREENFINCH, GARDEN, { verificationStatus: 'rejected' }),
    row('2026-03-16T06:45:00.000Z', BLACKBIRD, MEADOW, { verificationStatus: 'pending_review' }),
    row('2026-03-16T07:00:00.000Z', ROBIN, GARDEN),
    // Outside the period: skipped.
    row('2026-03-13T22:59:59.000Z', BLACKBIRD, GARDEN),
    row('2026-03-16T23:00:00.000Z', BLACKBIRD, GARDEN),
  ];
}

function accumulate(rows: ExportRow[], extra: Partial<Parameters<typeof createReportAccumulator>[0]> = {}): ReportData {
  const acc = createReportAccumulator({
    teamName: 'Vogelwarte Nord',
    title: 'Detections report',
    period: PERIOD,
    timeZone: TZ,
    paperSize: 'a4',
    language: 'en',
    now: NOW,
    ...extra,
  });
  // In batches, as the row source delivers them.
  for (let i = 0; i < rows.length; i += 3) acc.add(rows.slice(i, i + 3));
  return acc.finish();
}

async function toBuffer(doc: PDFKit.PDFDocument): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of doc) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

let tmp: string;
async function pdfText(pdf: Buffer, name: string): Promise<string> {
  const file = path.join(tmp, `${name}.pdf`);
  fs.writeFileSync(file, pdf);
  const { stdout } = await run('pdftotext', ['-layout', file, '-'], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}
async function pdfInfo(pdf: Buffer, name: string): Promise<Record<string, string>> {
  const file = path.join(tmp, `${name}-info.pdf`);
  fs.writeFileSync(file, pdf);
  const { stdout } = await run('pdfinfo', ['-isodates', file]);
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^([^:]+):\s*(.*)$/.exec(line);
    if (m) out[m[1].trim()] = m[2].trim();
  }
  return out;
}

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-report-'));
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('report accumulator', () => {
  test('totals, local days with zeros, local hours, top species, satellites, species list', () => {
    const data = accumulate(sampleRows());
    assert.deepEqual(data.totals, { detections: 8, species: 4, satellites: 2, confirmed: 2 });
    assert.equal(data.generatedAt, NOW.toISOString());
    assert.equal(data.timeZone, TZ);
    assert.equal(data.trendBucket, 'day');
    // The 23:59:30 local call stays on the 14th; the 00:30 local call is on the 16th, the 15th has none.
    assert.deepEqual(data.daily, [
      { day: '2026-03-14', count: 4 },
      { day: '2026-03-15', count: 0 },
      { day: '2026-03-16', count: 4 },
    ]);
    assert.equal(data.hourly.length, 24);
    const expected = new Array(24).fill(0);
    expected[6] = 2; // 05:10Z, 05:20Z
    expected[7] = 3; // 06:00Z, 06:15Z, 06:45Z
    expected[8] = 1; // 07:00Z
    expected[23] = 1; // 22:59:30Z
    expected[0] = 1; // 23:30Z
    assert.deepEqual(data.hourly, expected);
    assert.deepEqual(
      data.topSpecies.map((s) => [s.commonName, s.count]),
      [
        ['European Robin', 4],
        ['Grünfink', 2],
        ['Eurasian Blackbird', 1],
        ['Great Tit', 1],
      ],
    );
    assert.deepEqual(data.satellites, [
      { name: 'Garden Mic', detections: 5, species: 3 },
      { name: 'Meadow Edge', detections: 3, species: 3 },
    ]);
    const robin = data.species.find((s) => s.commonName === 'European Robin')!;
    assert.equal(robin.firstAt, '2026-03-14T05:10:00.000Z');
    assert.equal(robin.lastAt, '2026-03-16T07:00:00.000Z');
    assert.equal(robin.bestConfidence, 0.97);
    assert.deepEqual(
      data.species.map((s) => s.count),
      [4, 2, 1, 1],
    );
  });

  test('topSpecies holds at most 10, most first; species holds all', () => {
    const rows: ExportRow[] = [];
    for (let i = 0; i < 15; i++) {
      for (let n = 0; n <= i; n++)
        rows.push(row(`2026-03-15T10:${String(n).padStart(2, '0')}:00.000Z`, [`sp${i}`, `Species ${i}`, `Genus sp${i}`], GARDEN));
    }
    const data = accumulate(rows);
    assert.equal(data.topSpecies.length, 10);
    assert.deepEqual(
      data.topSpecies.map((s) => s.count),
      [15, 14, 13, 12, 11, 10, 9, 8, 7, 6],
    );
    assert.equal(data.topSpecies[0].commonName, 'Species 14');
    assert.equal(data.species.length, 15);
    assert.equal(data.totals.detections, 120);
  });

  test('an empty period still lists every day at zero', () => {
    const data = accumulate([]);
    assert.deepEqual(data.totals, { detections: 0, species: 0, satellites: 0, confirmed: 0 });
    assert.deepEqual(
      data.daily.map((d) => d.count),
      [0, 0, 0],
    );
    assert.deepEqual(data.hourly, new Array(24).fill(0));
  });

  test('periods over 366 days are bucketed by 7 days from the first day', () => {
    const data = accumulate([row('2025-01-08T12:00:00.000Z', ROBIN, GARDEN), row('2026-03-16T12:00:00.000Z', ROBIN, GARDEN)], {
      period: { start: '2024-12-31T23:00:00.000Z', end: '2026-03-16T23:00:00.000Z' },
    });
    assert.equal(data.trendBucket, 'week');
    assert.equal(data.daily[0].day, '2025-01-01');
    assert.equal(data.daily[1].day, '2025-01-08');
    assert.equal(data.daily[1].count, 1);
    assert.equal(data.daily.length, Math.ceil(440 / 7));
    assert.equal(
      data.daily.reduce((a, d) => a + d.count, 0),
      2,
    );
  });
});

describe('report PDF', () => {
  test('holds the period, totals, top species, satellites and page numbers; vectors only', async () => {
    const data = accumulate(sampleRows());
    const pdf = await toBuffer(renderReport(data));
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.ok(!pdf.includes('/Subtype /Image'), 'no raster images');

    const text = await pdfText(pdf, 'sample');
    assert.match(text, /Detections report/);
    assert.match(text, /Vogelwarte Nord/);
    assert.match(text, /2026-03-14 – 2026-03-16/);
    assert.match(text, /Europe\/Berlin/);
    assert.match(text, /Generated: 2026-03-17 10:30/);
    // Totals boxes: 8 detections, 4 species, 2 satellites, 2 confirmed.
    assert.match(text, /8\s+4\s+2\s+2/);
    for (const name of ['European Robin', 'Eurasian Blackbird', 'Great Tit', 'Erithacus rubecula', 'Garden Mic', 'Meadow Edge']) {
      assert.ok(text.includes(name), `${name} in the text`);
    }
    if (reportFonts().embedded) assert.ok(text.includes('Grünfink'), 'umlaut survives with the embedded font');
    // First and last heard in local time: the robin's last call is 08:00 on the 16th in Berlin.
    assert.match(text, /2026-03-14 06:10\s+2026-03-16 08:00/);
    assert.match(text, /2026-03-14 23:59/);
    // One page with DejaVu Sans, two with the taller Helvetica layout: the count is not the point here.
    assert.match(text, /Page 1 of [12]\n/);

    const info = await pdfInfo(pdf, 'sample');
    assert.equal(info.Title, 'Detections report — Vogelwarte Nord');
    assert.equal(info.Author, 'Chorus');
    assert.equal(new Date(info.CreationDate).toISOString(), NOW.toISOString());
    assert.match(info['Page size'], /595\.\d* x 841\.\d*/); // A4
  });

  test('300 species run over several pages, repeating the table header and numbering pages', async () => {
    const rows: ExportRow[] = [];
    for (let i = 0; i < 300; i++) {
      const code = `sp${String(i).padStart(3, '0')}`;
      for (let n = 0; n < 1 + (i % 4); n++) {
        rows.push(row(`2026-03-1${4 + (n % 3)}T0${n}:15:00.000Z`, [code, `Bird number ${code}`, `Avis ${code}`], i % 2 ? GARDEN : MEADOW));
      }
    }
    const data = accumulate(rows, { paperSize: 'letter' });
    assert.equal(data.species.length, 300);
    const pdf = await toBuffer(renderReport(data));
    assert.ok(!pdf.includes('/Subtype /Image'));
    const text = await pdfText(pdf, 'many');
    const pages = text.split('\f').filter((p) => p.trim() !== '');
    assert.ok(pages.length >= 4, `several pages, got ${pages.length}`);
    const m = /Page 2 of (\d+)/.exec(text);
    assert.ok(m, 'Page 2 of n');
    assert.equal(Number(m[1]), pages.length);
    assert.match(text, new RegExp(`Page ${pages.length} of ${pages.length}`));
    // Every species is listed, and every continuation page repeats the header.
    for (const code of ['sp000', 'sp150', 'sp299']) assert.ok(text.includes(`Bird number ${code}`), code);
    for (const page of pages.slice(-2))
      assert.match(page, /Common name\s+Scientific name\s+Count\s+First heard\s+Last heard\s+Best conf\./);
    const info = await pdfInfo(pdf, 'many');
    assert.match(info['Page size'], /612 x 792/); // Letter
  });

  test('German labels', async () => {
    const data = accumulate(sampleRows(), { language: 'de' });
    const text = await pdfText(await toBuffer(renderReport(data)), 'de');
    assert.match(text, /Zeitraum: 2026-03-14 – 2026-03-16/);
    assert.match(text, /Häufigste Arten/);
    assert.match(text, /Seite 1 von [12]\n/);
    // Percentages in the German form (issue 36 point 5): a space before the sign.
    assert.match(text, /\d \u00a0?%|\d[\u00a0 ]%/);
    assert.doesNotMatch(text, /\d%/);
  });

  test('an empty period renders with zero totals and a note', async () => {
    const text = await pdfText(await toBuffer(renderReport(accumulate([]))), 'empty');
    assert.match(text, /No detections in this period\./);
    assert.match(text, /Page 1 of 1/);
  });

  test('falls back to the built-in Helvetica, which still carries Latin-1 names', async () => {
    const pdf = await toBuffer(renderReport(accumulate(sampleRows()), { builtinFonts: true }));
    assert.ok(pdf.includes('/BaseFont /Helvetica'));
    assert.ok(!pdf.includes('DejaVu'));
    const text = await pdfText(pdf, 'helvetica');
    assert.ok(text.includes('Grünfink'));
    assert.match(text, /Page 1 of \d+/);
  });

  test('the image check would see a raster image', async () => {
    // A 1×1 PNG: proves that the "no /Subtype /Image" assertion above can fail.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const doc = new PDFDocument();
    doc.image(png, 10, 10, { width: 20 });
    doc.end();
    assert.ok((await toBuffer(doc)).includes('/Subtype /Image'));
  });

  test(
    'non-Latin names survive when DejaVu Sans is installed',
    { skip: !reportFonts().embedded && 'no DejaVu Sans on this machine' },
    async () => {
      const data = accumulate([row('2026-03-15T10:00:00.000Z', ['comcha', 'Зяблик', 'Fringilla coelebs'], GARDEN)]);
      const text = await pdfText(await toBuffer(renderReport(data)), 'cyrillic');
      assert.ok(text.includes('Зяблик'));
    },
  );
});
