/** Local servers playing the statistics' outside sources (Open-Meteo, eBird) for tests. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
}

/** A local server whose answer a test sets; it records each request. */
export async function fakeService(answer: (req: FakeRequest) => { status?: number; body: string }) {
  const requests: FakeRequest[] = [];
  const state = { answer };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const r = { path: url.pathname, query: url.searchParams, headers: req.headers };
    requests.push(r);
    const a = state.answer(r);
    res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
    res.end(a.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const HOUR = 3_600_000;

/** Open-Meteo's hourly answer for start_date..end_date (GMT), values a function of the hour. */
export function openMeteoBody(q: URLSearchParams, value = (ms: number) => weatherAt(ms)): string {
  const from = Date.parse(`${q.get('start_date')}T00:00:00Z`);
  const to = Date.parse(`${q.get('end_date')}T00:00:00Z`) + 24 * HOUR;
  const time: string[] = [];
  const cols = {
    temperature_2m: [] as number[],
    precipitation: [] as number[],
    wind_speed_10m: [] as number[],
    cloud_cover: [] as number[],
  };
  for (let t = from; t < to; t += HOUR) {
    time.push(new Date(t).toISOString().slice(0, 16));
    const v = value(t);
    cols.temperature_2m.push(v.temperature);
    cols.precipitation.push(v.precipitation);
    cols.wind_speed_10m.push(v.windSpeed);
    cols.cloud_cover.push(v.cloudCover);
  }
  return JSON.stringify({
    latitude: Number(q.get('latitude')),
    longitude: Number(q.get('longitude')),
    generationtime_ms: 0.1,
    utc_offset_seconds: 0,
    timezone: 'GMT',
    timezone_abbreviation: 'GMT',
    elevation: 38,
    hourly_units: { time: 'iso8601', temperature_2m: '°C', precipitation: 'mm', wind_speed_10m: 'km/h', cloud_cover: '%' },
    hourly: { time, ...cols },
  });
}

/** Made-up weather: warm afternoons, rain every fifth hour (many ties at 0), wind and cloud by formula. */
export function weatherAt(ms: number) {
  const h = Math.floor(ms / HOUR);
  const hourOfDay = h % 24;
  return {
    temperature: 5 + 10 * Math.sin(((hourOfDay - 8) / 24) * 2 * Math.PI),
    precipitation: h % 5 === 0 ? 1.2 : 0,
    windSpeed: (h * 7) % 13,
    cloudCover: (h * 37) % 101,
  };
}
