/**
 * Exports over HTTP (issue 18): what they cover (the Detections page's rows under its filters),
 * each format read back as the receiving service would (a CSV parser, the eBird column list,
 * the iNaturalist template, the Darwin Core archive's meta.xml, the xeno-canto zip against
 * GET /audio, the PDF through pdftotext), background jobs, and access.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { waitFor } from './helpers/wait.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { fetchBytes, unzip } from './helpers/export-files.ts';

describe('exports', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let member: TestUser;
  let viewer: TestUser;
  let team: TestTeam;
  let otherOwner: TestUser;
  let sat: { id: string; tenantId: string; name: string };
  let other: { id: string; tenantId: string; name: string };
  const ids: Record<string, string> = {};
  const base = new Date('2026-06-10T05:00:00Z');
  const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);
  const NASTY = 'Grünfink, "Chloris"\n金翅雀';
  /** When each call ends: the last window of a stitched call, else the detection's own 3 s window. */
  const callEnd = {
    robin: new Date(at(1).getTime() + 3000),
    nasty: new Date(at(5).getTime() + 3000),
    pond: new Date(at(10).getTime() + 150_000),
  };

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    member = await f.member(team, 'member');
    viewer = await f.member(team, 'viewer');
    otherOwner = await f.user();
    await f.team(otherOwner);
    sat = await makeSatellite(hub, team, owner, 'Garden, "north"');
    other = await makeSatellite(hub, team, owner, 'Pond');
    await hub.sql.query('UPDATE satellites SET latitude = 52.52, longitude = 13.405 WHERE id = $1', [sat.id]);
    const wav = makeWav(new Int16Array(4800).map((_, i) => Math.round(Math.sin(i / 5) * 8000)));
    const chunk = await makeChunk(hub, { satellite: sat, audio: wav, at: at(0) });
    ids.robin = await makeDetection(hub, { chunk, at: at(0), confidence: 0.91, verificationStatus: 'confirmed' });
    ids.nasty = await makeDetection(hub, {
      satellite: sat,
      at: at(5),
      code: 'eurgre1',
      commonName: NASTY,
      scientificName: 'Chloris chloris',
      confidence: 0.8,
    });
    ids.formula = await makeDetection(hub, {
      satellite: sat,
      at: at(6),
      code: 'x-formula',
      commonName: '=HYPERLINK("http://evil")',
      scientificName: 'Evil evil',
    });
    ids.pond = await makeDetection(hub, {
      satellite: other,
      at: at(10),
      code: 'comchi1',
      commonName: 'Common Chiffchaff',
      scientificName: 'Phylloscopus collybita',
      confidence: 0.55,
    });
    ids.frog = await makeDetection(hub, {
      satellite: other,
      at: at(12),
      code: 'frog1',
      commonName: 'Edible Frog',
      scientificName: 'Pelophylax esculentus',
      category: 'amphibian',
    });
    // Left out of every export: a tentative row, a stitched call's continuation, a hidden category.
    ids.tentative = await makeDetection(hub, { satellite: sat, at: at(20), tentative: true, promoted: false });
    ids.continuation = await makeDetection(hub, { satellite: sat, at: at(1), callId: ids.robin });
    ids.engine = await makeDetection(hub, {
      satellite: sat,
      at: at(30),
      code: 'engine',
      commonName: 'Engine',
      scientificName: 'Engine',
      category: 'anthropogenic',
    });
    ids.outside = await makeDetection(hub, { satellite: sat, at: new Date('2026-05-01T10:00:00Z') });
    // Stitched calls end after their first window: the robin's runs into its continuation's
    // window, the chiffchaff's sings on for 2.5 minutes. The greenfinch keeps its one window.
    await hub.infra.db.run('UPDATE detections SET call_chunks = $2, call_end_at = $3 WHERE id = $1', [ids.robin, 2, callEnd.robin]);
    await hub.infra.db.run('UPDATE detections SET call_chunks = $2, call_end_at = $3 WHERE id = $1', [ids.pond, 50, callEnd.pond]);
  });
  after(() => hub.close());

  const window = `start=${encodeURIComponent(at(-60).toISOString())}&end=${encodeURIComponent(at(120).toISOString())}`;

  describe('detections as CSV and JSON', () => {
    test('CSV: the listed rows only, a header, RFC 4180 quoting that survives a parser, formulas neutralised', async () => {
      const res = await fetchBytes(hub, `/export/detections?tenantId=${team.id}&format=csv&${window}`, member);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename=".*\.csv"$/);
      const records: Record<string, string>[] = parse(res.body, { columns: true });
      assert.deepEqual(records.map((r) => r.id).sort(), [ids.robin, ids.nasty, ids.formula, ids.pond, ids.frog].sort());
      const nasty = records.find((r) => r.id === ids.nasty)!;
      assert.equal(nasty.common_name, NASTY);
      assert.equal(records.find((r) => r.id === ids.robin)!.satellite_name, 'Garden, "north"');
      assert.ok(records.find((r) => r.id === ids.formula)!.common_name.startsWith("'="), 'a formula cell is neutralised');
      assert.equal(Number(records.find((r) => r.id === ids.robin)!.confidence), 0.91);
      assert.equal(records.find((r) => r.id === ids.robin)!.latitude.startsWith('52.52'), true);
      // Each row ends where its call ends, as the detection itself says.
      for (const r of records) {
        assert.notEqual(r.end_at_utc, '', `end_at_utc of ${r.id}`);
        const detail = await api.get(`/detections/${r.id}`, member);
        assert.equal(detail.status, 200, detail.text);
        assert.equal(r.end_at_utc, detail.body.callEndAt, `end_at_utc of ${r.id}`);
      }
      assert.equal(records.find((r) => r.id === ids.robin)!.end_at_utc, callEnd.robin.toISOString());
      assert.equal(records.find((r) => r.id === ids.nasty)!.end_at_utc, callEnd.nasty.toISOString());
      assert.equal(records.find((r) => r.id === ids.pond)!.end_at_utc, callEnd.pond.toISOString());
      assert.equal(records.find((r) => r.id === ids.robin)!.call_chunks, '2');
    });

    test('filters: satellite, species, minimum confidence, verification, category', async () => {
      const idsOf = async (q: string) =>
        (parse((await fetchBytes(hub, `/export/detections?tenantId=${team.id}&${window}&${q}`, member)).body, { columns: true }) as any[])
          .map((r) => r.id)
          .sort();
      assert.deepEqual(await idsOf(`satelliteId=${other.id}`), [ids.pond, ids.frog].sort());
      assert.deepEqual(await idsOf('species=comchi1'), [ids.pond]);
      assert.deepEqual(await idsOf('minConfidence=0.905'), [ids.robin]);
      assert.deepEqual(await idsOf('verificationStatus=confirmed'), [ids.robin]);
      assert.deepEqual(await idsOf('category=amphibian'), [ids.frog]);
    });

    test('JSON: one array of the same rows', async () => {
      const res = await fetchBytes(hub, `/export/detections?tenantId=${team.id}&format=json&${window}`, member);
      const rows = JSON.parse(res.body.toString());
      assert.ok(Array.isArray(rows));
      assert.equal(rows.length, 5);
      assert.ok(rows.some((r: any) => r.commonName === NASTY));
      for (const r of rows) assert.equal(typeof r.endAt, 'string', `endAt of ${r.id}`);
      const endOf = (id: string) => rows.find((r: any) => r.id === id).endAt;
      assert.equal(endOf(ids.robin), callEnd.robin.toISOString());
      assert.equal(endOf(ids.nasty), callEnd.nasty.toISOString());
      assert.equal(endOf(ids.pond), callEnd.pond.toISOString());
    });

    test('members export; viewers and other teams do not', async () => {
      assert.equal((await fetchBytes(hub, `/export/detections?tenantId=${team.id}`, viewer)).status, 403);
      assert.equal((await fetchBytes(hub, `/export/detections?tenantId=${team.id}`, otherOwner)).status, 404);
      assert.equal(
        (await fetchBytes(hub, `/export/detections?tenantId=${team.id}&start=2026-06-10T00:00:00Z&end=2026-06-01T00:00:00Z`, member))
          .status,
        400,
      );
    });
  });

  test('eBird checklist: 19 columns, no header, MM/DD/YYYY, Stationary, one checklist per satellite and day; the preview names what eBird cannot take', async () => {
    const res = await fetchBytes(hub, `/export/checklist?tenantId=${team.id}&${window}`, member);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    // As eBird's import reads it: comma-delimited, no quotation marks, no line breaks inside values.
    const text = res.body.toString('utf8');
    assert.ok(!text.includes('"'), 'no quotation marks in the data');
    assert.ok(text.endsWith('\r\n'));
    const lines = text
      .slice(0, -2)
      .split('\r\n')
      .map((l) => l.split(','));
    assert.ok(lines.length >= 2);
    for (const l of lines) {
      assert.equal(l.length, 19, l.join(','));
      assert.ok(!l.some((v) => /[\r\n]/.test(v)));
      assert.match(l[8]!, /^\d\d\/\d\d\/\d{4}$/);
      assert.equal(l[12], 'Stationary');
    }
    assert.ok(!lines.some((l) => l[0] === 'Common Name'), 'no header');
    // The satellite 'Garden, "north"' as eBird can take it.
    assert.deepEqual([...new Set(lines.map((l) => l[5]))].sort(), ["Garden; 'north'", 'Pond']);
    assert.ok(!lines.some((l) => l[0] === 'Edible Frog'), 'a frog is no bird on an eBird checklist');
    // Duration runs from the first call's start to the last call's end, in whole minutes, rounded up:
    // Garden from the robin (0:00) to the greenfinch's end (5:03), Pond over the chiffchaff's call (0:00 to 2:30).
    for (const l of lines) assert.match(l[14]!, /^[1-9]\d*$/, `Duration of ${l[5]}`);
    const duration = (satellite: string) => [...new Set(lines.filter((l) => l[5] === satellite).map((l) => l[14]))];
    assert.deepEqual(duration("Garden; 'north'"), [String(Math.ceil((callEnd.nasty.getTime() - at(0).getTime()) / 60_000))]);
    assert.deepEqual(duration('Pond'), [String(Math.ceil((callEnd.pond.getTime() - at(10).getTime()) / 60_000))]);
    assert.deepEqual(duration('Pond'), ['3']);
    const preview = await api.get(`/export/preview?tenantId=${team.id}&kind=checklist&${window}`, member);
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.total, 5);
    const skipped = preview.body.skipped.map((s: any) => `${s.speciesCode}:${s.reason}`).sort();
    assert.ok(skipped.includes('frog1:not_a_bird'));
    assert.ok(skipped.includes('x-formula:not_in_ebird_taxonomy'));
  });

  test('iNaturalist CSV: its import columns in order, ISO-8859-1 as its importer reads it', async () => {
    const res = await fetchBytes(hub, `/export/observation?tenantId=${team.id}&${window}`, member);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=iso-8859-1');
    // iNaturalist reads the bytes as ISO-8859-1: ü is one byte, the Chinese name spelled in ASCII.
    const lines = parse(res.body.toString('latin1')) as string[][];
    const greenfinch = lines.find((l) => l[0] === 'Chloris chloris')!;
    assert.ok(greenfinch[2].startsWith('Grünfink, "Chloris"\nJinChiQue, detected acoustically'), greenfinch[2]);
    assert.ok(res.body.includes(Buffer.from([0x47, 0x72, 0xfc, 0x6e])), '"Grün" in Latin-1 bytes');
    const [header] = lines;
    assert.deepEqual(header, [
      'Taxon name',
      'Date observed',
      'Description',
      'Place name',
      'Latitude / y coord / northing',
      'Longitude / x coord / easting',
      'Tags',
      'Geoprivacy',
    ]);
  });

  test('Darwin Core Archive: meta.xml names every column of occurrence.txt; MachineObservation', async () => {
    const res = await fetchBytes(hub, `/export/observation?tenantId=${team.id}&format=dwca&${window}`, member);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/zip');
    const files = await unzip(res.body);
    for (const name of ['meta.xml', 'occurrence.txt', 'multimedia.txt', 'eml.xml']) assert.ok(files.has(name), name);
    const meta = files.get('meta.xml')!.toString();
    const occ = files.get('occurrence.txt')!.toString().trim().split('\n');
    const header = occ[0]!.split('\t');
    const core = meta.slice(meta.indexOf('<core'), meta.indexOf('</core>'));
    const terms = [...core.matchAll(/<field index="(\d+)" term="([^"]+)"/g)].map((m) => [Number(m[1]), m[2]!] as const);
    assert.equal(terms.length, header.length, 'every column has a term');
    for (const [i, term] of terms) assert.ok(term.endsWith(`/${header[i]}`), `${header[i]} ↔ ${term}`);
    const col = header.indexOf('basisOfRecord');
    assert.ok(occ.slice(1).every((l) => l.split('\t')[col] === 'MachineObservation'));
    assert.equal(occ.length - 1, 5, 'one occurrence per listed row');
  });

  test('xeno-canto: confirmed recordings by default, audio byte for byte as GET /audio serves it', async () => {
    const res = await fetchBytes(hub, `/export/recording?tenantId=${team.id}&${window}`, member);
    assert.equal(res.status, 200, res.body.toString());
    const files = await unzip(res.body);
    const audio = [...files.keys()].filter((k) => k.startsWith('audio/'));
    assert.deepEqual(audio, [`audio/${ids.robin}.wav`]);
    const served = await fetchBytes(
      hub,
      `/audio/${(await hub.sql.one<{ chunk_id: string }>('SELECT chunk_id FROM detections WHERE id = $1', [ids.robin])).chunk_id}`,
      member,
    );
    assert.equal(served.status, 200);
    assert.ok(files.get(audio[0]!)!.equals(served.body), 'same bytes');
    const meta: Record<string, string>[] = parse(files.get('metadata.csv')!, { columns: true });
    assert.equal(meta.length, 1);
    assert.equal(meta[0]!.species, 'Erithacus rubecula');
  });

  test('the PDF report: period, totals and top species read back with pdftotext', async () => {
    const res = await fetchBytes(hub, `/export/report?tenantId=${team.id}&${window}`, member);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    const file = path.join(os.tmpdir(), `chorus-report-${process.pid}.pdf`);
    fs.writeFileSync(file, res.body);
    try {
      const text = execFileSync('pdftotext', ['-layout', file, '-']).toString();
      assert.match(text, /2026-06-10/);
      assert.match(text, /Common Chiffchaff/);
      assert.match(text, /European Robin/);
      assert.match(text, /\b5\b/);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  test('background: 202 with a job, progress, then the file equals the streamed export', async () => {
    const streamed = await fetchBytes(hub, `/export/detections?tenantId=${team.id}&${window}`, member);
    const res = await api.get(`/export/detections?tenantId=${team.id}&${window}&background=1`, member);
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'queued');
    const job = await waitFor('the job', async () => {
      const j = await api.get(`/export/jobs/${res.body.id}`, member);
      return j.body.status === 'done' && j.body;
    });
    assert.equal(job.rowsDone, 5);
    const file = await fetchBytes(hub, job.downloadUrl.replace(/^\/api/, ''), member);
    assert.equal(file.status, 200);
    // Same rows; generated-at timestamps may differ by the second.
    assert.deepEqual(
      parse(file.body, { columns: true }).map((r: any) => r.id),
      parse(streamed.body, { columns: true }).map((r: any) => r.id),
    );
    const list = await api.get(`/export/jobs?tenantId=${team.id}`, member);
    assert.ok(list.body.jobs.some((j: any) => j.id === res.body.id));
    assert.equal((await api.get(`/export/jobs/${res.body.id}`, otherOwner)).status, 404);
  });
});
