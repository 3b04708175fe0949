/**
 * GET /stats/weather-correlation, /stats/expected-species, /stats/map and /stats/map/detections
 * over HTTP, with local servers playing Open-Meteo and eBird (issue 19).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { client } from './helpers/http.ts';
import { makeChunk, makeDetection, makeSatellite, makeTeam } from './helpers/factories.ts';
import { fakeService, openMeteoBody, weatherAt } from './helpers/fake-sources.ts';
import { pearson, spearman } from '../src/modules/stats/correlation.ts';
import { checkTelemetry } from '../src/protocol/messages.ts';
import { newId } from '../src/core/crypto.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const EBIRD_KEY = 'test-ebird-key-0123';

async function place(hub: Hub, satelliteId: string, latitude: number, longitude: number) {
  await hub.sql.query('UPDATE satellites SET latitude = $2, longitude = $3 WHERE id = $1', [satelliteId, latitude, longitude]);
}

describe('stats that reach outside', () => {
  let hub: Hub;
  let weather: Awaited<ReturnType<typeof fakeService>>;
  let ebird: Awaited<ReturnType<typeof fakeService>>;
  let api: ReturnType<typeof client>;
  /** Three days ago (UTC, the default team zone): the forecast API's range. */
  let day: number;

  before(async () => {
    weather = await fakeService((r) => ({ body: openMeteoBody(r.query) }));
    ebird = await fakeService(() => ({ body: '[]' }));
    hub = await startHub({ env: { WEATHER_API_URL: weather.url, EBIRD_API_URL: ebird.url, EBIRD_API_KEY: EBIRD_KEY } });
    api = client(hub.url);
    day = Math.floor(hub.clock.now().getTime() / DAY) * DAY - 3 * DAY;
  });
  after(async () => {
    await hub.close();
    await weather.close();
    await ebird.close();
  });

  describe('weather correlation', () => {
    let team: Awaited<ReturnType<typeof makeTeam>>;
    let sat: { id: string; tenantId: string };
    const counts: Record<number, number> = { 5: 1, 6: 3, 7: 5, 8: 4, 12: 1, 18: 2, 19: 2 };

    before(async () => {
      team = await makeTeam(hub);
      sat = await makeSatellite(hub, team, null, 'Garden');
      await place(hub, sat.id, 52.5212, 13.4049);
      for (const [h, n] of Object.entries(counts))
        for (let i = 0; i < n; i++) await makeDetection(hub, { satellite: sat, at: new Date(day + Number(h) * HOUR + i * 60_000) });
      // None of these count: tentative, not promoted, a later chunk of a stitched call, a hidden category.
      const at = new Date(day + 6 * HOUR + 30 * 60_000);
      await makeDetection(hub, { satellite: sat, at, tentative: true });
      await makeDetection(hub, { satellite: sat, at, promoted: false });
      await makeDetection(hub, { satellite: sat, at, callId: newId() });
      await makeDetection(hub, {
        satellite: sat,
        at,
        code: 'engine',
        category: 'anthropogenic',
        commonName: 'Engine',
        scientificName: 'Engine',
      });
      // A day with nothing counted adds no hours to the sample.
      await makeDetection(hub, { satellite: sat, at: new Date(day - DAY + 3 * HOUR), tentative: true });
    });

    test('Pearson and Spearman of hourly counts with each variable, n the hours of active days', async () => {
      const before = weather.requests.length;
      const q = `/stats/weather-correlation?tenantId=${team.id}&from=${dateOf(day - DAY)}&to=${dateOf(day + DAY)}`;
      const res = await api.get(q, team.owner);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.available, true);
      assert.equal(res.body.timeZone, 'UTC');
      assert.equal(res.body.from, new Date(day - DAY).toISOString());
      const [s] = res.body.satellites;
      assert.equal(s.satelliteId, sat.id);
      assert.equal(s.available, true);
      assert.equal(s.hours, 24);
      const x = Array.from({ length: 24 }, (_, h) => counts[h] ?? 0);
      const hours = Array.from({ length: 24 }, (_, h) => weatherAt(day + h * HOUR));
      for (const field of ['temperature', 'precipitation', 'windSpeed', 'cloudCover'] as const) {
        const y = hours.map((w) => w[field]);
        const c = s.correlations[field];
        assert.equal(c.n, 24, field);
        assert.ok(Math.abs(c.pearson - pearson(x, y)!) < 1e-9, `${field} pearson ${c.pearson}`);
        assert.ok(Math.abs(c.spearman - spearman(x, y)!) < 1e-9, `${field} spearman ${c.spearman}`);
      }
      assert.deepEqual(res.body.overall.correlations, s.correlations);
      // The weather at the rounded position, asked from the forecast API (the last days).
      const asked = weather.requests.slice(before);
      assert.equal(asked.length, 1);
      assert.equal(asked[0].path, '/v1/forecast');
      assert.equal(asked[0].query.get('latitude'), '52.52');
      assert.equal(asked[0].query.get('start_date'), dateOf(day - DAY));

      // The second time every hour comes from the database.
      const again = await api.get(q, team.owner);
      assert.deepEqual(again.body, res.body);
      assert.equal(weather.requests.length, before + 1);
      // With a species the counts come from the rows, not the hourly aggregate: the same figures here.
      const robin = await api.get(`${q}&species=EURROB1`, team.owner);
      assert.deepEqual(robin.body.satellites[0].correlations, s.correlations);
      const none = await api.get(`${q}&species=gretit1`, team.owner);
      assert.equal(none.body.satellites[0].hours, 0);
    });

    test('older days come from the archive API, recent ones from the forecast API', async () => {
      const before = weather.requests.length;
      const res = await api.get(
        `/stats/weather-correlation?tenantId=${team.id}&from=${dateOf(day - 12 * DAY)}&to=${dateOf(day - DAY)}`,
        team.owner,
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.available, true);
      const asked = weather.requests.slice(before).map((r) => `${r.path} ${r.query.get('start_date')}..${r.query.get('end_date')}`);
      const split = Math.floor(hub.clock.now().getTime() / DAY) * DAY - 6 * DAY;
      assert.deepEqual(asked, [
        `/v1/archive ${dateOf(day - 12 * DAY)}..${dateOf(split - DAY)}`,
        `/v1/forecast ${dateOf(split)}..${dateOf(day - 2 * DAY)}`,
      ]);
      // No counted detection on those days: nothing to correlate, and no figure.
      assert.equal(res.body.satellites[0].hours, 0);
      assert.equal(res.body.satellites[0].correlations.temperature.pearson, null);
    });

    test('a failing weather service is a 200 that says why', async () => {
      weather.state.answer = () => ({ status: 500, body: '{"error":true}' });
      // A second satellite elsewhere: after the first failure the service is not asked again.
      const second = await makeSatellite(hub, team, null, 'Roof');
      await place(hub, second.id, 52.4, 13.1);
      const before = weather.requests.length;
      try {
        const res = await api.get(
          `/stats/weather-correlation?tenantId=${team.id}&from=${dateOf(day - 40 * DAY)}&to=${dateOf(day - 30 * DAY)}`,
          team.owner,
        );
        assert.equal(res.status, 200);
        assert.equal(res.body.available, false);
        assert.equal(res.body.reason, 'upstream_error');
        assert.equal(res.body.satellites[0].available, false);
        assert.equal(res.body.overall, null);
        assert.equal(weather.requests.length, before + 1);
        assert.deepEqual(
          res.body.satellites.map((x: { available: boolean; reason: string }) => [x.available, x.reason]),
          [
            [false, 'upstream_error'],
            [false, 'upstream_error'],
          ],
        );
        weather.state.answer = () => ({ body: 'not json at all' });
        const garbage = await api.get(
          `/stats/weather-correlation?tenantId=${team.id}&from=${dateOf(day - 50 * DAY)}&to=${dateOf(day - 45 * DAY)}`,
          team.owner,
        );
        assert.equal(garbage.status, 200);
        assert.equal(garbage.body.reason, 'invalid_response');
      } finally {
        weather.state.answer = (r) => ({ body: openMeteoBody(r.query) });
      }
    });

    test('without a positioned satellite the answer says so', async () => {
      const other = await makeTeam(hub);
      await makeSatellite(hub, other, null);
      const res = await api.get(`/stats/weather-correlation?tenantId=${other.id}`, other.owner);
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.available, res.body.reason], [false, 'no_position']);
    });

    test('a bad window is a 400', async () => {
      const res = await api.get(`/stats/weather-correlation?tenantId=${team.id}&days=3&from=2026-01-01&to=2026-01-02`, team.owner);
      assert.equal(res.status, 400);
    });
  });

  describe('expected species', () => {
    let team: Awaited<ReturnType<typeof makeTeam>>;
    let sat: { id: string; tenantId: string };

    before(async () => {
      team = await makeTeam(hub);
      sat = await makeSatellite(hub, team, null, 'Meadow');
      await place(hub, sat.id, 48.137, 11.5812);
      const at = (h: number) => new Date(day + h * HOUR);
      for (let i = 0; i < 3; i++) await makeDetection(hub, { satellite: sat, at: at(6 + i) }); // European Robin
      await makeDetection(hub, {
        satellite: sat,
        at: at(7),
        code: 'integr1',
        commonName: 'Intermediate Egret',
        scientificName: 'Ardea intermedia',
      });
      for (let i = 0; i < 2; i++)
        await makeDetection(hub, {
          satellite: sat,
          at: at(9 + i),
          code: 'eurbla',
          commonName: 'Eurasian Blackbird',
          scientificName: 'Turdus merula',
        });
      // Not counted or not birds: never on any list.
      await makeDetection(hub, {
        satellite: sat,
        at: at(9),
        code: 'comcha',
        commonName: 'Common Chaffinch',
        scientificName: 'Fringilla coelebs',
        tentative: true,
      });
      await makeDetection(hub, {
        satellite: sat,
        at: at(9),
        code: 't-1',
        commonName: 'Frog',
        scientificName: 'Rana',
        category: 'amphibian',
      });
      ebird.state.answer = () => ({
        body: JSON.stringify([
          {
            speciesCode: 'eurrob1',
            comName: 'European Robin',
            sciName: 'Erithacus rubecula',
            obsDt: '2026-11-20 08:15',
            howMany: 2,
            lat: 48.1,
            lng: 11.6,
          },
          // eBird's older code for the egret the team heard as integr1.
          {
            speciesCode: 'integr',
            comName: 'Intermediate Egret',
            sciName: 'Ardea intermedia',
            obsDt: '2026-11-18 10:00',
            lat: 48.1,
            lng: 11.6,
          },
          {
            speciesCode: 'gretit1',
            comName: 'Great Tit',
            sciName: 'Parus major',
            obsDt: '2026-11-21 07:00',
            howMany: 1,
            lat: 48.1,
            lng: 11.6,
          },
          { speciesCode: 'comcha', comName: 'Common Chaffinch', sciName: 'Fringilla coelebs', obsDt: '2026-11-19', lat: 48.1, lng: 11.6 },
        ]),
      });
    });

    test('expected and heard, expected and not heard, heard and not expected', async () => {
      const before = ebird.requests.length;
      const q = `/stats/expected-species?tenantId=${team.id}&days=7&distKm=10&backDays=7`;
      const res = await api.get(q, team.owner);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.available, true);
      const codes = (list: Array<{ code: string; detections: number }>) => list.map((e) => `${e.code}:${e.detections}`);
      assert.deepEqual(codes(res.body.expectedAndHeard), ['eurrob1:3', 'integr1:1']);
      assert.deepEqual(codes(res.body.expectedNotHeard), ['gretit1:0', 'comcha:0']);
      assert.deepEqual(codes(res.body.heardNotExpected), ['eurbla:2']);
      assert.equal(res.body.expectedAndHeard[0].lastReportedAt, '2026-11-20 08:15');
      assert.equal(res.body.expectedAndHeard[0].lastDetectedAt, new Date(day + 8 * HOUR).toISOString());
      const asked = ebird.requests.slice(before);
      assert.equal(asked.length, 1);
      assert.equal(asked[0].headers['x-ebirdapitoken'], EBIRD_KEY);
      assert.deepEqual(Object.fromEntries(asked[0].query), { lat: '48.14', lng: '11.58', dist: '10', back: '7' });
      assert.ok(!res.text.includes(EBIRD_KEY));

      // Within a day the same question is answered from the database.
      const again = await api.get(q, team.owner);
      assert.deepEqual(again.body, res.body);
      assert.equal(ebird.requests.length, before + 1);
    });

    test('an eBird failure is a 200 that says why', async () => {
      ebird.state.answer = () => ({ status: 503, body: 'busy' });
      const res = await api.get(`/stats/expected-species?tenantId=${team.id}&distKm=11`, team.owner);
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.available, res.body.reason], [false, 'upstream_error']);
      assert.deepEqual(res.body.expectedNotHeard, []);
    });
  });

  describe('map', () => {
    test('positions from the latest telemetry GPS fix, else the profile, with the window counts', async () => {
      const team = await makeTeam(hub);
      const fixed = await makeSatellite(hub, team, null, 'A fixed');
      const roaming = await makeSatellite(hub, team, null, 'B roaming');
      await makeSatellite(hub, team, null, 'C unplaced');
      await place(hub, fixed.id, 47.0, 8.0);
      await place(hub, roaming.id, 47.5, 8.5);
      const now = hub.clock.now().getTime();
      for (const [t, lat] of [
        [now - 2 * HOUR, 46.1],
        [now - HOUR, 46.2],
      ] as const) {
        const m = checkTelemetry({ latitude: lat, longitude: 7.5, timestamp: new Date(t).toISOString() }, new Date(now));
        assert.ok(m.ok);
        await hub.services.devices.recordTelemetry(team.id, roaming.id, m.value);
      }
      // A later sample without a fix does not move it.
      const noFix = checkTelemetry({ batteryLevel: 50 }, new Date(now));
      assert.ok(noFix.ok);
      await hub.services.devices.recordTelemetry(team.id, roaming.id, noFix.value);
      await makeDetection(hub, { satellite: fixed, at: new Date(now - 2 * DAY) });
      await makeDetection(hub, { satellite: fixed, at: new Date(now - DAY), code: 'eurbla', commonName: 'Eurasian Blackbird' });
      await makeDetection(hub, { satellite: fixed, at: new Date(now - DAY), tentative: true, code: 'gretit1' });
      await makeDetection(hub, { satellite: fixed, at: new Date(now - 60 * DAY) });

      const res = await api.get(`/stats/map?tenantId=${team.id}&days=30`, team.owner);
      assert.equal(res.status, 200, res.text);
      const byName = Object.fromEntries(res.body.satellites.map((s: { name: string }) => [s.name, s]));
      assert.deepEqual(Object.keys(byName), ['A fixed', 'B roaming', 'C unplaced']);
      assert.deepEqual(
        [byName['A fixed'].latitude, byName['A fixed'].positionSource, byName['A fixed'].detectionCount, byName['A fixed'].speciesCount],
        [47.0, 'profile', 2, 2],
      );
      assert.equal(byName['A fixed'].lastDetectionAt, new Date(now - DAY).toISOString());
      assert.deepEqual(
        [byName['B roaming'].latitude, byName['B roaming'].longitude, byName['B roaming'].positionSource, byName['B roaming'].positionAt],
        [46.2, 7.5, 'telemetry', new Date(now - HOUR).toISOString()],
      );
      assert.deepEqual([byName['B roaming'].detectionCount, byName['B roaming'].lastDetectionAt], [0, null]);
      assert.deepEqual([byName['C unplaced'].latitude, byName['C unplaced'].positionSource], [null, null]);

      // Edges inside UTC days: the partial days come from the rows, the whole ones from the aggregate.
      const edges = await api.get(
        `/stats/map?tenantId=${team.id}&from=${new Date(now - 2 * DAY - 60_000).toISOString()}&to=${new Date(now - DAY + 60_000).toISOString()}`,
        team.owner,
      );
      assert.equal(edges.status, 200, edges.text);
      const a = edges.body.satellites.find((s: { name: string }) => s.name === 'A fixed');
      assert.deepEqual([a.detectionCount, a.speciesCount, a.lastDetectionAt], [2, 2, new Date(now - DAY).toISOString()]);
      const one = await api.get(`/stats/map?tenantId=${team.id}&satelliteId=${fixed.id}&days=1`, team.owner);
      assert.deepEqual(
        one.body.satellites.map((s: { satelliteId: string; detectionCount: number }) => [s.satelliteId, s.detectionCount]),
        [[fixed.id, 0]],
      );
    });

    test('a team of many satellites: each one counts only its own detections and species', async () => {
      const team = await makeTeam(hub);
      const sats = [];
      for (let i = 0; i < 10; i++) sats.push(await makeSatellite(hub, team, null, `S${String(i).padStart(2, '0')}`));
      const now = hub.clock.now().getTime();
      const codes = ['eurbla', 'gretit1', 'eurrob1'];
      // Satellite i hears min(i, 3) species, i detections in all, spread over 40 days (day and month pieces).
      for (const [i, sat] of sats.entries())
        for (let k = 0; k < i; k++) await makeDetection(hub, { satellite: sat, at: new Date(now - (1 + 4 * k) * DAY), code: codes[k % 3] });
      // An archived satellite is not on the map; its rows must not leak into the others'.
      assert.equal((await api.post(`/satellites/${sats[9].id}/archive`, {}, team.owner)).status, 200);
      const res = await api.get(`/stats/map?tenantId=${team.id}&days=60`, team.owner);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.satellites.map((s: { name: string; detectionCount: number; speciesCount: number }) => [
          s.name,
          s.detectionCount,
          s.speciesCount,
        ]),
        sats.slice(0, 9).map((s, i) => [s.name, i, Math.min(i, 3)]),
      );
    });

    test('detection points of moving satellites at their chunk positions, by days and bounded', async () => {
      const team = await makeTeam(hub);
      const phone = await makeSatellite(hub, team, null, 'Phone');
      const board = await makeSatellite(hub, team, null, 'Board');
      await hub.sql.query(`UPDATE satellites SET stream = 'mobile' WHERE id = $1`, [phone.id]);
      const now = hub.clock.now().getTime();
      const heard = async (sat: { id: string; tenantId: string }, ago: number, lat: number | undefined, extra = {}) => {
        const chunk = await makeChunk(hub, {
          satellite: sat,
          at: new Date(now - ago),
          latitude: lat,
          longitude: lat === undefined ? undefined : 9.9,
        });
        return makeDetection(hub, { chunk, at: new Date(now - ago), ...extra });
      };
      const recent = await heard(phone, 60_000, 50.1);
      const older = await heard(phone, 4 * DAY, 50.2);
      const oldest = await heard(phone, 20 * DAY, 50.3);
      await heard(phone, 2 * HOUR, undefined); // its chunk carried no position
      await heard(phone, 3 * HOUR, 50.4, { category: 'human_voice', code: 'humvoc' }); // hidden category
      const onBoard = await heard(board, HOUR, 51.0);

      const ids = async (q: string) => {
        const res = await api.get(`/stats/map/detections?tenantId=${team.id}&${q}`, team.owner);
        assert.equal(res.status, 200, res.text);
        return { ids: res.body.points.map((p: { detectionId: string }) => p.detectionId), body: res.body };
      };
      assert.deepEqual((await ids('days=2')).ids, [recent]);
      assert.deepEqual((await ids('days=7')).ids, [recent, older]);
      const all = await ids('days=30');
      assert.deepEqual(all.ids, [recent, older, oldest]);
      assert.deepEqual(all.body.satelliteIds, [phone.id]);
      assert.equal(all.body.truncated, false);
      assert.deepEqual([all.body.points[0].latitude, all.body.points[0].longitude, all.body.points[0].satelliteId], [50.1, 9.9, phone.id]);
      const bounded = await ids('days=30&limit=2');
      assert.deepEqual([bounded.ids, bounded.body.truncated], [[recent, older], true]);
      assert.deepEqual((await ids(`days=30&satelliteId=${board.id}`)).ids, [onBoard]);
      const tooMany = await api.get(`/stats/map/detections?tenantId=${team.id}&limit=50000`, team.owner);
      assert.equal(tooMany.status, 400);
    });
  });
});

describe('stats outside sources without network or key', () => {
  let hub: Hub;
  before(async () => {
    hub = await startHub();
  });
  after(() => hub.close());

  test('no weather server: 200 that says the data is unavailable; no eBird key: 200 not_configured', async () => {
    const team = await makeTeam(hub);
    const sat = await makeSatellite(hub, team, null);
    await place(hub, sat.id, 40.0, -3.7);
    await makeDetection(hub, { satellite: sat, at: new Date(hub.clock.now().getTime() - DAY) });
    const api = client(hub.url);
    const w = await api.get(`/stats/weather-correlation?tenantId=${team.id}&days=7`, team.owner);
    assert.equal(w.status, 200, w.text);
    assert.deepEqual([w.body.available, w.body.reason], [false, 'unreachable']);
    assert.equal(typeof w.body.detail, 'string');
    const e = await api.get(`/stats/expected-species?tenantId=${team.id}`, team.owner);
    assert.equal(e.status, 200, e.text);
    assert.deepEqual([e.body.available, e.body.reason], [false, 'not_configured']);
    assert.deepEqual(e.body.expectedAndHeard, []);
  });
});
