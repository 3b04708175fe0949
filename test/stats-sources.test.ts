/**
 * The outside sources of the statistics (issue 19) against local servers playing Open-Meteo and
 * eBird with answers of the recorded shape, and the correlation figures against hand computation.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pearson, ranks, spearman } from '../src/modules/stats/correlation.ts';
import { createOpenMeteoClient, parseHourly } from '../src/modules/weather/client.ts';
import { createEbirdClient } from '../src/modules/ebird/client.ts';
import { checkTelemetry } from '../src/protocol/messages.ts';
import { loadConfig } from '../src/config.ts';
import { fakeService, openMeteoBody, weatherAt } from './helpers/fake-sources.ts';

describe('correlation figures', () => {
  // Hand computation: x̄ = 5/3, ȳ = 71.5/6; Sxy = 227/6, Sxx = 52/3, Syy = 2141/24.
  const x = [0, 2, 2, 5, 1, 0];
  const y = [10, 12.5, 11, 20, 10, 8];

  test("Pearson's r", () => {
    const r = pearson(x, y)!;
    assert.ok(Math.abs(r - 227 / 6 / Math.sqrt((52 / 3) * (2141 / 24))) < 1e-9);
    assert.ok(Math.abs(r - 0.9621235599919343) < 1e-9);
  });

  test('mean ranks for ties', () => {
    assert.deepEqual(ranks(x), [1.5, 4.5, 4.5, 6, 3, 1.5]);
    assert.deepEqual(ranks(y), [2.5, 5, 4, 6, 2.5, 1]);
  });

  test("Spearman's ρ with ties in both series", () => {
    // Ranks as above: Σ(dx·dy) = 63/4, Σdx² = 33/2, Σdy² = 17 (means 3.5).
    const rho = spearman(x, y)!;
    assert.ok(Math.abs(rho - 63 / 4 / Math.sqrt((33 / 2) * 17)) < 1e-9);
    assert.ok(Math.abs(rho - 0.9404032585917882) < 1e-9);
  });

  test('no figure below two pairs or for a constant series', () => {
    assert.equal(pearson([1], [2]), null);
    assert.equal(spearman([], []), null);
    assert.equal(pearson([0, 0, 0], [1, 2, 3]), null);
    assert.equal(spearman([1, 2, 3], [4, 4, 4]), null);
    assert.equal(pearson([1, 2, 3], [2, 4, 6]), 1);
    assert.equal(spearman([1, 2, 3], [9, 5, 1]), -1);
  });
});

describe('Open-Meteo adapter', () => {
  let fake: Awaited<ReturnType<typeof fakeService>>;
  before(async () => {
    fake = await fakeService((r) => ({ body: openMeteoBody(r.query) }));
  });
  after(() => fake.close());
  const client = () => createOpenMeteoClient({ forecastUrl: fake.url, archiveUrl: fake.url, timeoutMs: 2000 });

  test('asks the archive and the forecast API for GMT hours and reads the hourly series', async () => {
    fake.state.answer = (r) => ({ body: openMeteoBody(r.query) });
    const a = await client().hourly('archive', 52.52, 13.41, '2026-10-01', '2026-10-02');
    assert.ok(a.ok);
    assert.equal(a.hours.length, 48);
    assert.equal(a.hours[5].hour.toISOString(), '2026-10-01T05:00:00.000Z');
    assert.deepEqual(
      { t: a.hours[5].temperature, p: a.hours[5].precipitation, w: a.hours[5].windSpeed, c: a.hours[5].cloudCover },
      (({ temperature: t, precipitation: p, windSpeed: w, cloudCover: c }) => ({ t, p, w, c }))(
        weatherAt(Date.parse('2026-10-01T05:00:00Z')),
      ),
    );
    const req = fake.requests.at(-1)!;
    assert.equal(req.path, '/v1/archive');
    assert.equal(req.query.get('latitude'), '52.52');
    assert.equal(req.query.get('start_date'), '2026-10-01');
    assert.equal(req.query.get('end_date'), '2026-10-02');
    assert.equal(req.query.get('timezone'), 'GMT');
    assert.equal(req.query.get('hourly'), 'temperature_2m,precipitation,wind_speed_10m,cloud_cover');
    const f = await client().hourly('forecast', 52.52, 13.41, '2026-10-03', '2026-10-03');
    assert.ok(f.ok);
    assert.equal(fake.requests.at(-1)!.path, '/v1/forecast');
  });

  test('nulls in a series stay null; unixtime works too', () => {
    const hours = parseHourly({
      hourly: {
        time: [1_800_000_000, 1_800_003_600],
        temperature_2m: [1.5, null],
        precipitation: [0, 0],
        wind_speed_10m: [3, 4],
        cloud_cover: [50, 60],
      },
    })!;
    assert.equal(hours[1].temperature, null);
    assert.equal(hours[1].hour.getTime(), 1_800_003_600_000);
  });

  test('a 500, garbage and a missing server are answers, not throws', async () => {
    fake.state.answer = () => ({ status: 500, body: '{"error":true,"reason":"boom"}' });
    assert.deepEqual((await client().hourly('archive', 1, 2, '2026-10-01', '2026-10-01')) as unknown, {
      ok: false,
      reason: 'upstream_error',
      detail: 'The weather service answered 500',
    });
    fake.state.answer = () => ({ body: '<html>not json' });
    assert.equal(((await client().hourly('archive', 1, 2, '2026-10-01', '2026-10-01')) as { reason: string }).reason, 'invalid_response');
    fake.state.answer = () => ({ body: '{"hourly":{"time":["2026-10-01T00:00"],"temperature_2m":[1,2]}}' });
    assert.equal(((await client().hourly('archive', 1, 2, '2026-10-01', '2026-10-01')) as { reason: string }).reason, 'invalid_response');
    const gone = createOpenMeteoClient({ forecastUrl: 'http://127.0.0.1:9', archiveUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    assert.equal(((await gone.hourly('forecast', 1, 2, '2026-10-01', '2026-10-01')) as { reason: string }).reason, 'unreachable');
  });
});

describe('eBird adapter', () => {
  let fake: Awaited<ReturnType<typeof fakeService>>;
  before(async () => {
    fake = await fakeService(() => ({ body: '[]' }));
  });
  after(() => fake.close());
  const client = () => createEbirdClient({ baseUrl: fake.url, apiKey: 'ebird-secret-key', timeoutMs: 2000 });

  test('asks recent observations near a position with the key in the header', async () => {
    fake.state.answer = () => ({
      body: JSON.stringify([
        {
          speciesCode: 'eurrob1',
          comName: 'European Robin',
          sciName: 'Erithacus rubecula',
          locId: 'L123',
          locName: 'Park',
          obsDt: '2026-11-20 08:15',
          howMany: 2,
          lat: 52.5,
          lng: 13.4,
          obsValid: true,
          obsReviewed: false,
          locationPrivate: false,
          subId: 'S1',
        },
        { speciesCode: 'grewoo', comName: 'Great Spotted Woodpecker', sciName: 'Dendrocopos major', obsDt: '2026-11-19' },
      ]),
    });
    const a = await client().recent(52.5212, 13.4049, 25, 14);
    assert.ok(a.ok);
    assert.equal(a.observations.length, 2);
    assert.equal(a.observations[0].howMany, 2);
    assert.equal(a.observations[1].howMany, null);
    const req = fake.requests.at(-1)!;
    assert.equal(req.path, '/v2/data/obs/geo/recent');
    assert.deepEqual(Object.fromEntries(req.query), { lat: '52.52', lng: '13.40', dist: '25', back: '14' });
    assert.equal(req.headers['x-ebirdapitoken'], 'ebird-secret-key');
  });

  test('a refused key, a 500 and garbage are answers without the key in them', async () => {
    fake.state.answer = () => ({ status: 403, body: '{"errors":[{"title":"Forbidden"}]}' });
    const refused = await client().recent(1, 2, 10, 7);
    assert.deepEqual(refused as unknown, { ok: false, reason: 'upstream_error', detail: 'eBird refused the API key (403)' });
    fake.state.answer = () => ({ status: 500, body: 'oops' });
    assert.equal(((await client().recent(1, 2, 10, 7)) as { reason: string }).reason, 'upstream_error');
    fake.state.answer = () => ({ body: '{"not":"a list"}' });
    const garbage = await client().recent(1, 2, 10, 7);
    assert.equal((garbage as { reason: string }).reason, 'invalid_response');
    assert.ok(!JSON.stringify([refused, garbage]).includes('ebird-secret-key'));
    const gone = createEbirdClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 2000 });
    assert.equal(((await gone.recent(1, 2, 10, 7)) as { reason: string }).reason, 'unreachable');
  });
});

describe('configuration and telemetry GPS', () => {
  test('WEATHER_API_URL serves both APIs unless WEATHER_ARCHIVE_URL is set; no key, no eBird', () => {
    const base = { CHORUS_SECRET: 'x'.repeat(32), CHORUS_DATA_DIR: '/tmp/chorus-config-test' };
    const c = loadConfig({ ...base, WEATHER_API_URL: 'http://127.0.0.1:7001/' }).statsSources;
    assert.equal(c.weatherForecastUrl, 'http://127.0.0.1:7001');
    assert.equal(c.weatherArchiveUrl, 'http://127.0.0.1:7001');
    assert.equal(c.ebirdApiKey, null);
    const d = loadConfig(base).statsSources;
    assert.equal(d.weatherForecastUrl, 'https://api.open-meteo.com');
    assert.equal(d.weatherArchiveUrl, 'https://archive-api.open-meteo.com');
    assert.equal(d.ebirdApiUrl, 'https://api.ebird.org');
    assert.throws(() => loadConfig({ ...base, EBIRD_API_URL: 'ftp://x' }), /EBIRD_API_URL/);
  });

  test('telemetry carries a GPS fix as a pair within range', () => {
    const now = new Date();
    const ok = checkTelemetry({ latitude: 48.1, longitude: 11.6 }, now);
    assert.ok(ok.ok && ok.value.latitude === 48.1 && ok.value.longitude === 11.6);
    const half = checkTelemetry({ latitude: 48.1 }, now);
    assert.ok(half.ok && half.value.latitude === null && half.value.longitude === null);
    assert.equal(checkTelemetry({ latitude: 91, longitude: 0 }, now).ok, false);
    assert.equal(checkTelemetry({ latitude: 0, longitude: 'east' }, now).ok, false);
  });
});
