/**
 * Detections end to end (issue 5): a satellite publishes soundscape chunks over MQTT → the
 * ingester stores them and enqueues inference → the worker runs the built-in model and stores
 * detections → GET /detections lists them, the team's WebSocket gets `detection` events and the
 * satellite gets the MQTT detection message. Then the list's filters, sorting, paging, count and
 * window on rows of known values, and isolation between teams.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client, type Credential } from './helpers/http.ts';
import { RawSatellite } from './helpers/raw-satellite.ts';
import { renderChunk, SPECIES } from '../src/satellite/soundscape.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { newId } from '../src/core/crypto.ts';
import { seasonOf } from '../src/modules/detections/firsts.ts';
import { classifyChunk } from './helpers/inference.ts';
import { ModelError } from '../src/infra/classifier/types.ts';
import { waitFor } from './helpers/wait.ts';

const WAIT_MS = 30_000;

describe('detections', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let owner: TestUser;
  let member: TestUser;
  let viewer: TestUser;
  let team: TestTeam;
  let otherOwner: TestUser;
  let otherTeam: TestTeam;
  const closers: Array<() => Promise<unknown>> = [];
  const catalog = speciesCatalog();
  const code = (label: string) => catalog.byLabel(label)!.code;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    member = await f.member(team, 'member');
    viewer = await f.member(team, 'viewer');
    otherOwner = await f.user();
    otherTeam = await f.team(otherOwner);
  });
  after(async () => {
    for (const c of closers) await c().catch(() => {});
    await hub.close();
  });

  function headersOf(as: Credential): Record<string, string> {
    return as.token ? { authorization: `Bearer ${as.token}` } : { cookie: as.cookie! };
  }

  /** A socket on /ws/events that keeps every frame; resolves after the hub's first frame. */
  function socket(tenantId: string, as: Credential): Promise<{ frames: any[] }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${hub.url.replace(/^http/, 'ws')}/ws/events?tenantId=${tenantId}`, { headers: headersOf(as) });
      const frames: any[] = [];
      ws.on('message', (data) => {
        frames.push(JSON.parse(data.toString()));
        if (frames.length === 1) resolve({ frames });
      });
      ws.on('error', reject);
      ws.on('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
      closers.push(async () => ws.close());
    });
  }

  describe('end to end', () => {
    const labels = [SPECIES[4].label, SPECIES[3].label, SPECIES[1].label]; // robin, great tit, blackbird
    let sat: RawSatellite;
    const chunkIds: string[] = [];
    let ws: { frames: any[] };

    before(async () => {
      sat = await RawSatellite.register(hub, member, team);
      closers.push(() => sat.close());
      ws = await socket(team.id, viewer);
      const base = hub.clock.now().getTime() - 3_600_000;
      for (const [i, label] of labels.entries()) {
        const { chunkId, ack } = await sat.publishChunk({ species: [label], seed: 40 + i, recordedAt: new Date(base + i * 60_000) });
        chunkIds.push(chunkId);
        assert.equal(ack.status, 'stored');
      }
      // A silent chunk: classified, nothing detected.
      const silent = await sat.publishChunk({ species: [], seed: 9, recordedAt: new Date(base + 10 * 60_000) });
      assert.equal(silent.ack.status, 'stored');
      await waitFor(
        'the inference jobs',
        async () => {
          const s = await hub.infra.queue.stats('inference');
          return s.waiting === 0 && s.active === 0 && s.completed + s.failed >= 4;
        },
        { timeoutMs: WAIT_MS },
      );
    });

    test('GET /detections lists the species the satellite recorded, one per chunk', async () => {
      const res = await waitFor(
        'three detections',
        async () => {
          const r = await api.get(`/detections?tenantId=${team.id}`, viewer);
          return r.status === 200 && r.body.detections.length >= 3 ? r : null;
        },
        { timeoutMs: WAIT_MS },
      );
      assert.equal(res.body.total, 3);
      assert.deepEqual(res.body.aggregation, {});
      // Newest first: the chunks were recorded a minute apart in label order.
      assert.deepEqual(
        res.body.detections.map((d: any) => d.speciesCode),
        labels.map(code).reverse(),
      );
      const robin = res.body.detections.find((d: any) => d.speciesCode === code(labels[0]));
      assert.equal(robin.commonName, 'European Robin');
      assert.equal(robin.scientificName, 'Erithacus rubecula');
      assert.equal(robin.category, 'bird');
      assert.equal(robin.satelliteId, sat.id);
      assert.equal(robin.audioChunkId, chunkIds[0]);
      assert.equal(robin.verificationStatus, 'unverified');
      assert.equal(robin.tentative, false);
      assert.equal(robin.promoted, true);
      assert.equal(robin.isFirstOfDay, true);
      assert.equal(robin.isFirstOfSeason, true);
      assert.equal(robin.isRare, false);
      assert.equal(robin.modelId, 'builtin');
      assert.ok(robin.confidence >= 0.25 && robin.confidence <= 1);
      assert.equal(robin.calibrated_confidence, robin.confidence);
      const row = await hub.sql.one<any>('SELECT recorded_at FROM chunks WHERE id = $1', [chunkIds[0]]);
      assert.equal(robin.detectedAt, new Date(row.recorded_at).toISOString(), 'detected_at = recorded_at + offset 0');
      assert.equal(
        robin.createdAt,
        (await hub.sql.one<any>('SELECT created_at FROM detections WHERE id = $1', [robin.id])).created_at.toISOString(),
      );
    });

    test('GET /detections/:id gives the detail with the storage key', async () => {
      const list = await api.get(`/detections?tenantId=${team.id}&species=${code(labels[1])}`, viewer);
      assert.equal(list.body.detections.length, 1);
      const d = list.body.detections[0];
      const res = await api.get(`/detections/${d.id}`, viewer);
      assert.equal(res.status, 200);
      assert.equal(res.body.id, d.id);
      assert.equal(res.body.speciesCode, code(labels[1]));
      const chunk = await hub.sql.one<any>('SELECT storage_key FROM chunks WHERE id = $1', [d.audioChunkId]);
      assert.equal(res.body.storageKey, chunk.storage_key);
      assert.equal(res.body.calibrated_confidence, d.confidence);
    });

    test('the satellite receives one detection message per detection (protocol fields)', async () => {
      const msg = await sat.waitFor('detection', (b) => b.speciesCode === code(labels[0]));
      const d = (await api.get(`/detections?tenantId=${team.id}&species=${code(labels[0])}`, viewer)).body.detections[0];
      assert.deepEqual(Object.keys(msg).sort(), [
        'audioChunkId',
        'commonName',
        'confidence',
        'detectedAt',
        'id',
        'isFirstOfDay',
        'isFirstOfSeason',
        'isRare',
        'rareReason',
        'satelliteId',
        'satelliteName',
        'scientificName',
        'speciesCode',
        'tenantId',
      ]);
      assert.equal(msg.id, d.id);
      assert.equal(msg.tenantId, team.id);
      assert.equal(msg.satelliteId, sat.id);
      assert.equal(msg.satelliteName, d.satelliteName);
      assert.equal(msg.audioChunkId, chunkIds[0]);
      assert.equal(msg.detectedAt, d.detectedAt);
      assert.equal(msg.rareReason, null);
      assert.equal(msg.isFirstOfDay, true);
      for (const l of labels.slice(1)) await sat.waitFor('detection', (b) => b.speciesCode === code(l));
      assert.equal(sat.received.filter((m) => m.channel === 'detection').length, 3);
    });

    test('the team WebSocket receives a detection event per detection', async () => {
      const events = await waitFor(
        'three detection events',
        async () => {
          const e = ws.frames.filter((fr) => fr.type === 'detection');
          return e.length >= 3 ? e : null;
        },
        { timeoutMs: WAIT_MS },
      );
      assert.deepEqual(events.map((e) => e.speciesCode).sort(), labels.map(code).sort());
      for (const e of events) {
        assert.equal(e.tenantId, team.id);
        assert.equal(e.satelliteId, sat.id);
        assert.equal(typeof e.confidence, 'number');
        assert.equal(e.isRare, false);
      }
    });

    test('a job run again stores nothing twice', async () => {
      const again = await classifyChunk(hub, { id: chunkIds[0], tenantId: team.id, satelliteId: sat.id });
      assert.deepEqual(again.stored, []);
      const n = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE chunk_id = $1', [chunkIds[0]]);
      assert.equal(n.n, 1);
    });

    test('a failing model fails the job with the reason', async () => {
      const chunk = await makeChunk(hub, { satellite: sat, audio: makeWav(renderChunk({ species: [labels[0]], seed: 1 })) });
      const chunkId = chunk.id;
      await assert.rejects(
        classifyChunk(hub, chunk, {
          loadClassifier: async () => {
            throw new ModelError('model.onnx: the model file is empty');
          },
        }),
        /inference failed: model.onnx: the model file is empty/,
      );
      const n = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE chunk_id = $1', [chunkId]);
      assert.equal(n.n, 0);
    });

    test('a second detection of a species on the same UTC day is neither first of day nor of season', async () => {
      const first = await hub.sql.one<{ recorded_at: Date }>('SELECT recorded_at FROM chunks WHERE id = $1', [chunkIds[0]]);
      const t = new Date(first.recorded_at).getTime();
      // Half a minute later (too far to stitch into the first call), or earlier when later would be the next UTC day.
      const at = new Date(new Date(t + 30_000).getUTCDate() === new Date(t).getUTCDate() ? t + 30_000 : t - 30_000);
      const chunk = await makeChunk(hub, { satellite: sat, at, audio: makeWav(renderChunk({ species: [labels[0]], seed: 40 })) });
      const chunkId = chunk.id;
      const out = await classifyChunk(hub, chunk);
      const again = out.stored.find((d) => d.speciesCode === code(labels[0]));
      assert.ok(again, 'the robin is detected again');
      assert.equal(again.isFirstOfDay, false);
      assert.equal(again.isFirstOfSeason, false);
      const listed = (await api.get(`/detections?tenantId=${team.id}&species=${code(labels[0])}&sortBy=date&sortDir=asc`, viewer)).body
        .detections;
      assert.deepEqual(
        listed.map((d: any) => [d.audioChunkId, d.isFirstOfDay, d.isFirstOfSeason]).sort(),
        [
          [chunkIds[0], true, true],
          [chunkId, false, false],
        ].sort(),
      );
      // Out of the way of the tests below, which count this satellite's detections.
      await hub.sql.query('DELETE FROM detections WHERE chunk_id = $1', [chunkId]);
    });

    test('another team sees nothing: its list is empty, the detail and the team are 404', async () => {
      const list = await api.get(`/detections?tenantId=${team.id}`, otherOwner);
      assert.equal(list.status, 404);
      const own = await api.get('/detections', otherOwner);
      assert.equal(own.status, 200);
      assert.deepEqual(own.body.detections, []);
      assert.equal(own.body.total, 0);
      const mine = await api.get(`/detections?tenantId=${otherTeam.id}`, otherOwner);
      assert.deepEqual(mine.body.detections, []);
      const d = (await api.get(`/detections?tenantId=${team.id}`, viewer)).body.detections[0];
      const detail = await api.get(`/detections/${d.id}`, otherOwner);
      assert.equal(detail.status, 404);
      assert.equal((await api.get(`/detections/${newId()}`, viewer)).status, 404);
    });
  });

  describe('the list', () => {
    let t: TestTeam;
    let o: TestUser;
    let satA: { id: string };
    let satB: { id: string };
    const day = Date.UTC(2026, 4, 10); // 2026-05-10T00:00Z
    const rows: Array<{
      id: string;
      code: string;
      sci: string;
      common: string;
      conf: number;
      at: Date;
      sat: () => string;
      status?: string;
      tentative?: boolean;
    }> = [];

    before(async () => {
      o = await f.user();
      t = await f.team(o);
      satA = await makeSatellite(hub, t, null, 'A');
      satB = await makeSatellite(hub, t, null, 'B');
      const spec = [
        ['eurrob1', 'Erithacus rubecula', 'European Robin', 0.9, 1, () => satA.id, 'confirmed'],
        ['gretit1', 'Parus major', 'Great Tit', 0.5, 2, () => satA.id, undefined],
        ['eurbla', 'Turdus merula', 'Eurasian Blackbird', 0.7, 3, () => satB.id, undefined],
        ['comcha', 'Fringilla coelebs', 'Common Chaffinch', 0.3, 4, () => satB.id, 'rejected'],
        ['eurrob1', 'Erithacus rubecula', 'European Robin', 0.6, 5, () => satB.id, undefined],
      ] as const;
      for (const [c, sci, common, conf, h, sat, status] of spec) {
        rows.push({ id: newId(), code: c, sci, common, conf, at: new Date(day + h * 3_600_000), sat, status });
      }
      rows.push({
        id: newId(),
        code: 'comcuc',
        sci: 'Cuculus canorus',
        common: 'Common Cuckoo',
        conf: 0.8,
        at: new Date(day + 6 * 3_600_000),
        sat: () => satA.id,
        tentative: true,
      });
      for (const r of rows) {
        await makeDetection(hub, {
          satellite: { id: r.sat(), tenantId: t.id },
          id: r.id,
          code: r.code,
          scientificName: r.sci,
          commonName: r.common,
          confidence: r.conf,
          at: r.at,
          verificationStatus: r.status ?? 'unverified',
          tentative: r.tentative ?? false,
        });
      }
    });

    const list = async (q: string) => {
      const res = await api.get(`/detections?tenantId=${t.id}${q ? '&' + q : ''}`, o);
      assert.equal(res.status, 200, res.text);
      return res.body as { detections: any[]; total: number | null; aggregation: object };
    };
    const codes = (b: { detections: any[] }) => b.detections.map((d) => d.speciesCode);
    const confs = (b: { detections: any[] }) => b.detections.map((d) => Math.round(d.confidence * 100) / 100);

    test('defaults: newest first, tentative left out, total counted', async () => {
      const b = await list('');
      assert.deepEqual(codes(b), ['eurrob1', 'comcha', 'eurbla', 'gretit1', 'eurrob1']);
      assert.equal(b.total, 5);
      assert.equal((await list('includeTentative=true')).total, 6);
    });

    test('filters: satellite, species, speciesSearch, minConfidence, verificationStatus', async () => {
      assert.deepEqual(codes(await list(`satelliteId=${satA.id}`)), ['gretit1', 'eurrob1']);
      assert.deepEqual(confs(await list('species=EURROB1')), [0.6, 0.9]);
      assert.deepEqual(codes(await list('speciesSearch=tit')), ['gretit1']);
      assert.deepEqual(codes(await list('speciesSearch=TURDUS')), ['eurbla']);
      assert.deepEqual(codes(await list('speciesSearch=%25')), [], 'wildcards are literal');
      assert.deepEqual(confs(await list('minConfidence=0.6')), [0.6, 0.7, 0.9]);
      assert.deepEqual(codes(await list('verificationStatus=rejected')), ['comcha']);
      assert.deepEqual(codes(await list('verificationStatus=unverified')), ['eurrob1', 'eurbla', 'gretit1']);
    });

    test('sorting: confidence and species, both directions; date ascending', async () => {
      assert.deepEqual(confs(await list('sortBy=confidence')), [0.9, 0.7, 0.6, 0.5, 0.3]);
      assert.deepEqual(confs(await list('sortBy=confidence&sortDir=asc')), [0.3, 0.5, 0.6, 0.7, 0.9]);
      assert.deepEqual(
        codes(await list('sortBy=species&sortDir=asc')),
        ['comcha', 'eurbla', 'eurrob1', 'eurrob1', 'gretit1'],
        'by common name',
      );
      // Descending by common name; one name's rows stay newest first (the robin of 05:00, then 01:00).
      const desc = await list('sortBy=species&sortDir=desc');
      assert.deepEqual(codes(desc), ['gretit1', 'eurrob1', 'eurrob1', 'eurbla', 'comcha'], 'by common name, descending');
      assert.deepEqual(confs(desc).slice(1, 3), [0.6, 0.9]);
      assert.deepEqual(codes(await list('sortBy=date&sortDir=asc')), ['eurrob1', 'gretit1', 'eurbla', 'comcha', 'eurrob1']);
    });

    test('paging: limit and offset, withCount=false gives total null', async () => {
      const p1 = await list('limit=2');
      const p2 = await list('limit=2&offset=2');
      const p3 = await list('limit=2&offset=4');
      assert.deepEqual([...codes(p1), ...codes(p2), ...codes(p3)], codes(await list('')));
      assert.equal(p1.total, 5);
      const nc = await list('limit=2&withCount=false');
      assert.equal(nc.total, null);
      assert.equal(nc.detections.length, 2);
      assert.equal((await api.get(`/detections?tenantId=${t.id}&limit=201`, o)).status, 400);
      assert.equal((await api.get(`/detections?tenantId=${t.id}&sortBy=name`, o)).status, 400);
    });

    test('window: start inclusive, end exclusive', async () => {
      const iso = (h: number) => new Date(day + h * 3_600_000).toISOString();
      const b = await list(`start=${iso(2)}&end=${iso(4)}`);
      assert.deepEqual(codes(b), ['eurbla', 'gretit1']);
      assert.equal(b.total, 2);
      assert.deepEqual(codes(await list(`end=${iso(1)}`)), []);
      assert.deepEqual(codes(await list(`start=${iso(5)}`)), ['eurrob1']);
    });

    test("without tenantId: the caller's teams only", async () => {
      const b = await api.get('/detections?limit=200', o);
      assert.equal(b.status, 200);
      assert.equal(b.body.total, 5);
      const v = await api.get('/detections?limit=200', viewer);
      assert.ok(v.body.detections.every((d: any) => d.tenantId === team.id));
    });

    test('another team gets 404 for this team', async () => {
      assert.equal((await api.get(`/detections?tenantId=${t.id}`, otherOwner)).status, 404);
      assert.equal((await api.get(`/detections/${rows[0].id}`, otherOwner)).status, 404);
      assert.equal((await api.get(`/detections/${rows[0].id}`, o)).status, 200);
    });

    test('the season is the UTC calendar quarter', () => {
      assert.deepEqual(
        seasonOf(new Date('2026-05-10T12:00:00Z')).map((d) => d.toISOString()),
        ['2026-04-01T00:00:00.000Z', '2026-07-01T00:00:00.000Z'],
      );
      assert.deepEqual(
        seasonOf(new Date('2026-12-31T23:59:59Z')).map((d) => d.toISOString()),
        ['2026-10-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
      );
    });
  });
});
