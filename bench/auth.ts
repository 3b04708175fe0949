/**
 * Figures for the foundation issue: requests/s and p50/p99 latency of GET /api/auth/me with a
 * bearer JWT and with an API key, against GET /api/health, in one run. Every authenticated
 * request reads the caller from the store (one indexed round trip).
 */
import autocannon from 'autocannon';
import { startHubProcess } from './hub-process.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function json(url: string, init: RequestInit & { body?: string }) {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

async function measure(url: string, headers: Record<string, string>) {
  // A short warm-up so JIT and connection pools are settled before we count.
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 2 });
  const r = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

export async function run() {
  const hub = await startHubProcess();
  try {
    const login = await json(`${hub.url}/api/auth/login?returnToken=true`, {
      method: 'POST',
      body: JSON.stringify({ email: hub.adminEmail, password: hub.adminPassword }),
    });
    const auth = { authorization: `Bearer ${login.token}` };
    const team = await json(`${hub.url}/api/auth/create-tenant`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Bench team' }),
    });
    const key = await json(`${hub.url}/api/auth/api-keys`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ tenantId: team.id, name: 'bench', role: 'viewer' }),
    });

    const health = await measure(`${hub.url}/api/health`, {});
    const jwt = await measure(`${hub.url}/api/auth/me`, auth);
    const apiKey = await measure(`${hub.url}/api/auth/me`, { authorization: `Bearer ${key.key}` });

    const db = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
    console.log(`\nauth bench — ${db}, ${CONNECTIONS} connections, ${DURATION}s per route`);
    console.log('route                      req/s     p50 ms  p99 ms  share of health');
    const row = (name: string, m: { rps: number; p50: number; p99: number }) =>
      console.log(
        `${name.padEnd(26)} ${m.rps.toFixed(0).padStart(7)}  ${String(m.p50).padStart(7)} ${String(m.p99).padStart(7)}  ${((m.rps / health.rps) * 100).toFixed(0)}%`,
      );
    row('GET /api/health', health);
    row('GET /api/auth/me (JWT)', jwt);
    row('GET /api/auth/me (API key)', apiKey);
  } finally {
    await hub.stop();
  }
}
