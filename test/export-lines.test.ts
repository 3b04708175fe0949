/**
 * The detections CSV and JSON as the database writes them (issue 34, src/modules/exports/formats/lines-sql.ts),
 * over HTTP from a running hub: on PostgreSQL the team's file streams under COPY, on PGlite batch
 * by batch. Every cell is held to what the API lists for the same row (GET /detections: names,
 * confidence, calibrated confidence), the file to RFC 4180 and JSON parsers, and the stream to a
 * reader that goes away half-way.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { parse } from 'csv-parse/sync';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { fetchBytes } from './helpers/export-files.ts';
import { DETECTIONS_CSV_COLUMNS } from '../src/modules/exports/formats/csv.ts';

describe('detections CSV and JSON written by the database', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  const ids: Record<string, string> = {};
  const TRICKY = 'Grünfink, "Chloris" \n 金翅雀 \\ 🐦';
  const day = '2026-01-15';
  const window = `start=${day}T00:00:00Z&end=${day}T23:00:00Z`;
  // A curve for one model: two buckets, so a confidence can fall below, inside, between and above them.
  const buckets = [
    { minConfidence: 0.2, maxConfidence: 0.4, calibrated: 0.3, samples: 10 },
    { minConfidence: 0.6, maxConfidence: 0.8, calibrated: 0.7, samples: 10 },
  ];

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { time_zone: 'Europe/Berlin' }, owner)).status, 200);
    const north = await makeSatellite(hub, team, owner, 'North\nHedge');
    const evil = await makeSatellite(hub, team, owner, '=HYPERLINK("http://evil","x")');
    await hub.sql.query('UPDATE satellites SET longitude = -3.5 WHERE id = $1', [north.id]);
    await hub.sql.query('UPDATE satellites SET latitude = 52.52, longitude = -70.25 WHERE id = $1', [evil.id]);
    await hub.sql.query('INSERT INTO calibration_curves (tenant_id, model_id, fitted_at, samples, buckets) VALUES ($1, $2, $3, 20, $4)', [
      team.id,
      'cal-model',
      hub.clock.now(),
      JSON.stringify(buckets),
    ]);
    ids.tricky = await makeDetection(hub, {
      satellite: north,
      at: new Date(`${day}T07:30:05.123Z`),
      commonName: TRICKY,
      confidence: 0.8,
      rare: 'Not seen before at this team',
    });
    ids.formula = await makeDetection(hub, {
      satellite: evil,
      at: new Date(`${day}T08:00:00Z`),
      modelId: '+1',
      code: '@x',
      commonName: '-cmd',
      scientificName: '\tTab',
      confidence: 0.87,
    });
    for (const [i, confidence] of [0.1, 0.3, 0.5, 0.95].entries())
      ids[`cal${i}`] = await makeDetection(hub, {
        satellite: north,
        at: new Date(`${day}T09:0${i}:00Z`),
        modelId: 'cal-model',
        confidence,
      });
  });
  after(() => hub.close());

  /** The API's rows under the same window, by id. */
  async function listed() {
    const res = await api.get(`/detections?tenantId=${team.id}&${window}&limit=100`, owner);
    assert.equal(res.status, 200, res.text);
    return new Map<string, any>(res.body.detections.map((d: any) => [d.id, d]));
  }

  test('CSV: RFC 4180 with CRLF, every cell as the API lists the row, formula cells neutralised, numbers left alone', async () => {
    const res = await fetchBytes(hub, `/export/detections?tenantId=${team.id}&format=csv&${window}`, owner);
    assert.equal(res.status, 200);
    const csv = res.body.toString('utf8');
    assert.ok(csv.startsWith(DETECTIONS_CSV_COLUMNS.join(',') + '\r\n'));
    assert.ok(csv.endsWith('\r\n'));
    // A bare LF inside a value is quoted, quotes doubled.
    assert.ok(csv.includes(',"North\nHedge",'));
    assert.ok(csv.includes(`,"Grünfink, ""Chloris"" \n 金翅雀 \\ 🐦",`));
    const records = parse(csv, { columns: true }) as Record<string, string>[];
    assert.deepEqual(Object.keys(records[0]!), [...DETECTIONS_CSV_COLUMNS]);
    const api = await listed();
    assert.deepEqual(
      records.map((r) => r.id),
      [ids.tricky, ids.formula, ids.cal0, ids.cal1, ids.cal2, ids.cal3],
      'every listed row, oldest first',
    );
    for (const r of records) {
      const d = api.get(r.id!)!;
      assert.equal(r.detected_at_utc, d.detectedAt);
      assert.equal(r.confidence, String(d.confidence), `confidence of ${r.id}`);
      assert.equal(r.calibrated_confidence, String(d.calibrated_confidence), `calibrated confidence of ${r.id}`);
      assert.equal(r.time_zone, 'Europe/Berlin');
      assert.equal(r.verification_status, d.verificationStatus);
      assert.equal(r.detection_url, `http://chorus.test/detections/${r.id}`);
      assert.equal(r.chunk_id, d.audioChunkId);
      assert.equal(r.audio_url, `http://chorus.test/api/audio/${d.audioChunkId}`);
    }
    const [a, b] = records;
    assert.equal(a!.common_name, TRICKY);
    assert.equal(a!.satellite_name, 'North\nHedge');
    assert.equal(a!.detected_at_local, `${day} 08:30:05`);
    assert.equal(a!.detected_at_utc, `${day}T07:30:05.123Z`);
    assert.equal(a!.latitude, '');
    assert.equal(a!.longitude, '-3.5');
    assert.equal(a!.rare, 'true');
    assert.equal(a!.call_chunks, '1');
    assert.equal(b!.satellite_name, `'=HYPERLINK("http://evil","x")`);
    assert.equal(b!.model_id, "'+1");
    assert.equal(b!.species_code, "'@x");
    assert.equal(b!.common_name, "'-cmd");
    assert.equal(b!.scientific_name, "'\tTab");
    assert.equal(b!.latitude, '52.52');
    assert.equal(b!.longitude, '-70.25');
    assert.equal(b!.rare, 'false');
    // The curve read below, inside, between (a straight line) and above its buckets.
    assert.deepEqual(
      records.slice(2).map((r) => Number(r.calibrated_confidence)),
      [0.3, 0.3, 0.5, 0.7],
    );
  });

  test('JSON: one array of the same rows, each value equal to the API’s', async () => {
    const res = await fetchBytes(hub, `/export/detections?tenantId=${team.id}&format=json&${window}`, owner);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const text = res.body.toString('utf8');
    assert.ok(text.startsWith('[\n{"id":'));
    assert.ok(text.endsWith('}\n]\n'));
    const rows = JSON.parse(text) as any[];
    const api = await listed();
    assert.equal(rows.length, 6);
    for (const r of rows) {
      const d = api.get(r.id)!;
      for (const k of ['detectedAt', 'speciesCode', 'commonName', 'scientificName', 'category', 'confidence', 'satelliteId', 'modelId'])
        assert.deepEqual(r[k], d[k], `${k} of ${r.id}`);
      assert.equal(r.calibratedConfidence, d.calibrated_confidence);
      assert.equal(r.satelliteName, d.satelliteName);
      assert.equal(r.chunkId, d.audioChunkId);
      assert.equal(r.timeZone, 'Europe/Berlin');
    }
    assert.equal(rows[0].commonName, TRICKY);
    assert.equal(rows[0].latitude, null);
    assert.equal(rows[0].longitude, -3.5);
    assert.equal(rows[0].rare, true);
    assert.equal(rows[0].callChunks, 1);
    assert.equal(rows[0].detectedAtLocal, `${day} 08:30:05`);
    assert.equal(rows[1].commonName, '-cmd', 'JSON is no spreadsheet: no formula guard');
  });

  test('no rows: the CSV header alone, an empty JSON array', async () => {
    const none = `tenantId=${team.id}&${window}&species=nosuch`;
    const csv = await fetchBytes(hub, `/export/detections?${none}&format=csv`, owner);
    assert.equal(csv.body.toString('utf8'), DETECTIONS_CSV_COLUMNS.join(',') + '\r\n');
    const json = await fetchBytes(hub, `/export/detections?${none}&format=json`, owner);
    assert.equal(json.body.toString('utf8'), '[]\n');
  });

  describe('a larger team', () => {
    const ROWS = 20_000;
    let sat: { id: string };
    before(async () => {
      sat = await makeSatellite(hub, team, owner, 'Bulk');
      // 20,000 rows a second apart on another day: several of the batches PGlite reads, many COPY pieces.
      await hub.sql.query(
        `INSERT INTO detections (id, tenant_id, satellite_id, chunk_id, species_code, scientific_name, common_name, category, confidence,
           detected_at, start_ms, end_ms, model_id, created_at)
         SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'sp' || (g % 7), 'Sci ' || g, 'Name ' || g, 'bird', 0.5 + (g % 50) / 100.0,
           '2026-02-01T00:00:00Z'::timestamptz + g * interval '1 second', 0, 3000, 'builtin', now()
         FROM generate_series(0, ${ROWS - 1}) AS g`,
        [team.id, sat.id],
      );
    });

    test('every row once, in time order, in both formats', async () => {
      const q = `tenantId=${team.id}&satelliteId=${sat.id}`;
      const csv = parse((await fetchBytes(hub, `/export/detections?${q}&format=csv`, owner)).body, { columns: true }) as Record<
        string,
        string
      >[];
      assert.equal(csv.length, ROWS);
      assert.equal(new Set(csv.map((r) => r.id)).size, ROWS);
      for (let i = 0; i < ROWS; i++) assert.equal(csv[i]!.common_name, `Name ${i}`);
      const json = JSON.parse((await fetchBytes(hub, `/export/detections?${q}&format=json`, owner)).body.toString('utf8')) as any[];
      assert.deepEqual(
        json.map((r) => r.id),
        csv.map((r) => r.id),
      );
    });

    test('a reader that goes away half-way: the hub goes on serving and gets its connections back', async () => {
      // More aborted exports than the exports' PostgreSQL connections: one that never came back would leave the last export waiting.
      for (let i = 0; i < 12; i++) {
        const first = await new Promise<number>((resolve, reject) => {
          const req = http.get(`${hub.url}/api/export/detections?tenantId=${team.id}&satelliteId=${sat.id}&format=csv`, {
            headers: { authorization: `Bearer ${owner.token}` },
          });
          req.on('response', (res) => {
            res.once('data', (c: Buffer) => {
              req.destroy();
              resolve(c.length);
            });
          });
          req.on('error', reject);
        });
        assert.ok(first > 0);
      }
      const res = await fetchBytes(hub, `/export/detections?tenantId=${team.id}&satelliteId=${sat.id}&format=json`, owner);
      assert.equal(res.status, 200);
      assert.equal((JSON.parse(res.body.toString('utf8')) as unknown[]).length, ROWS);
      const pool = hub.infra.db.poolStats?.();
      if (pool) assert.equal(pool.waiting, 0, 'nobody waits for a connection');
      assert.equal((await api.get(`/detections?tenantId=${team.id}&limit=1`, owner)).status, 200);
    });
  });
});
