/**
 * GET /system/status, GET /health/ready and GET /metrics (spec hub-http-api §4 "Workers and
 * system", §8: service registry entries live 30 s; issue 21).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format';
import { INTERNAL_KEY, startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { waitFor } from './helpers/wait.ts';
import { noRedisServer, ownRedis, type OwnRedis } from './helpers/redis-server.ts';
import { audioBody, RawSatellite } from './helpers/raw-satellite.ts';
import { createServiceRegistration, SERVICE_TTL_SECONDS } from '../src/modules/system/registry.ts';

async function scrape(hub: Hub, headers: Record<string, string> = {}) {
  const res = await fetch(`${hub.url}/metrics`, { headers });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

const family = (families: PromFamily[], name: string) => families.find((f) => f.name === name);

/** http_requests_total of one route pattern and status (0 when the series does not exist yet). */
function requests(families: PromFamily[], route: string, status: string): number {
  const f = family(families, 'http_requests_total');
  const s = f?.metrics.find((m) => m.labels?.route === route && m.labels?.status === status);
  return Number(s?.value ?? 0);
}

describe('system status', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let hubAdmin: TestUser;
  let person: TestUser;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    person = await f.user();
  });
  after(() => hub.close());

  test('lists every registered process; an entry not rewritten for 30 s of the hub clock is gone', async () => {
    // Test hubs run without timers: the hub registers itself when told to.
    await hub.runtime.registration.register();
    const fake = createServiceRegistration({
      kv: hub.infra.kv,
      clock: hub.clock,
      mode: 'worker',
      timers: false,
      identity: { id: 'worker-elsewhere', ip: '10.0.0.9', hostname: 'elsewhere', pid: 4242 },
      details: () => ({ inferenceJobs: { completed: 3, failed: 0 } }),
    });
    await fake.register();

    let res = await api.get('/system/status', hubAdmin);
    assert.equal(res.status, 200);
    const ids = res.body.services.map((s: { id: string }) => s.id);
    assert.ok(ids.includes(hub.runtime.registration.id), 'the hub itself');
    assert.ok(ids.includes('worker-elsewhere'), 'the second process');
    const own = res.body.services.find((s: { id: string }) => s.id === hub.runtime.registration.id);
    assert.equal(own.status, 'up');
    assert.equal(own.mode, 'full');
    assert.match(own.version, /^\d+\.\d+\.\d+/);
    assert.ok(own.memory.rss > 0 && own.memory.heapUsed > 0);
    assert.equal(own.pid, process.pid);
    assert.ok(typeof own.ip === 'string' && own.ip.length > 0);
    assert.ok(own.details.inferenceQueue, 'queue depth in the details');
    assert.equal(typeof own.details.mqttClients, 'number', 'the process holding the embedded broker names its clients');
    const other = res.body.services.find((s: { id: string }) => s.id === 'worker-elsewhere');
    assert.deepEqual(
      { mode: other.mode, ip: other.ip, hostname: other.hostname, pid: other.pid, details: other.details },
      { mode: 'worker', ip: '10.0.0.9', hostname: 'elsewhere', pid: 4242, details: { inferenceJobs: { completed: 3, failed: 0 } } },
    );

    // 20 s on, the hub beats again; the other process does not. 11 s later it has been silent for 31 s.
    hub.clock.advance(20_000);
    await hub.runtime.registration.register();
    hub.clock.advance((SERVICE_TTL_SECONDS - 20 + 1) * 1000);
    res = await api.get('/system/status', hubAdmin);
    const after = res.body.services.map((s: { id: string }) => s.id);
    assert.ok(after.includes(hub.runtime.registration.id), 'the hub beat 11 s ago');
    assert.ok(!after.includes('worker-elsewhere'), 'the silent process left after 30 s');
    const ownLater = res.body.services.find((s: { id: string }) => s.id === hub.runtime.registration.id);
    assert.ok(ownLater.uptimeSeconds >= 20, 'uptime counts on the hub clock');

    // Stopping removes the entry at once.
    await fake.register();
    await fake.stop();
    res = await api.get('/system/status', hubAdmin);
    assert.ok(!res.body.services.some((s: { id: string }) => s.id === 'worker-elsewhere'));
  });

  test('infrastructure: database, key-value store, broker and object storage answer, with their latency', async () => {
    const res = await api.get('/system/status', hubAdmin);
    assert.equal(res.status, 200);
    for (const part of ['database', 'kv', 'broker', 'storage'] as const) {
      const c = res.body.infrastructure[part];
      assert.equal(c.ok, true, `${part}: ${c.error ?? ''}`);
      assert.equal(typeof c.latencyMs, 'number');
      assert.equal(typeof c.kind, 'string');
      assert.equal(c.error, undefined);
    }
    assert.equal(res.body.infrastructure.database.kind, hub.infra.db.kind);
    assert.equal(res.body.infrastructure.kv.kind, hub.infra.kv.kind);
    assert.equal(res.body.infrastructure.broker.kind, hub.infra.broker.kind);
    assert.equal(res.body.infrastructure.storage.kind, hub.infra.storage.kind);
  });

  test('data: counts move by the rows seeded', async () => {
    const before = (await api.get('/system/status', hubAdmin)).body.data;
    const f = factories(hub);
    const w = await f.world();
    const chunk = await makeChunk(hub, { team: w.team });
    await makeDetection(hub, { chunk });
    await makeDetection(hub, { chunk, tentative: true });
    await makeChunk(hub, { satellite: { id: chunk.satelliteId, tenantId: chunk.tenantId } });
    const res = await api.get('/system/status', hubAdmin);
    const data = res.body.data;
    // world(): a team of owner, admin, member, viewer, another team with its owner, a hub admin.
    const users = Number((await hub.sql.one<{ n: string }>('SELECT count(*) AS n FROM users')).n);
    const tenants = Number((await hub.sql.one<{ n: string }>('SELECT count(*) AS n FROM tenants')).n);
    assert.equal(data.users, users);
    assert.equal(data.tenants, tenants);
    assert.ok(data.tenants >= before.tenants + 2);
    assert.equal(data.chunks, before.chunks + 2);
    assert.equal(data.detections.total, before.detections.total + 2);
    assert.equal(data.detections.listed, before.detections.listed + 1);
    assert.equal(data.detections.tentative, before.detections.tentative + 1);
    assert.deepEqual(Object.keys(data.inferenceQueue).sort(), ['active', 'completed', 'delayed', 'failed', 'waiting']);
    assert.deepEqual(data.speciesImages, { total: 0, withImage: 0, supported: true });
  });

  test('hub admins and the internal key only', async () => {
    assertError(await api.get('/system/status', person), 403, 'FORBIDDEN');
    assertError(await api.get('/system/status'), 401, 'UNAUTHENTICATED');
    assert.equal((await api.get('/system/status', { token: INTERNAL_KEY })).status, 200);
  });

  test('readiness: 200 with its checks while the database, the key-value store, the queue on Redis and the broker answer; /health stays as it was', async () => {
    const res = await api.get('/health/ready');
    assert.equal(res.status, 200);
    assert.equal(res.body.ready, true);
    assert.deepEqual(Object.keys(res.body.checks).sort(), ['broker', 'database', 'kv', ...(process.env.REDIS_URL ? ['queue'] : [])]);
    for (const c of Object.values(res.body.checks) as Array<{ ok: boolean }>) assert.equal(c.ok, true);
    assert.equal(res.body.checks.database.ok, true);
    const health = await api.get('/health');
    assert.deepEqual(Object.keys(health.body).sort(), ['status', 'timestamp', 'version']);
  });

  test('metrics: the Prometheus text format, read with the internal key, counting requests by route pattern', async () => {
    assert.equal((await scrape(hub)).status, 401);
    assert.equal((await scrape(hub, { authorization: `Bearer ${person.token}` })).status, 403);
    const first = await scrape(hub, { authorization: `Bearer ${INTERNAL_KEY}` });
    assert.equal(first.status, 200);
    assert.match(first.type, /^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(first.text);
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'chorus_chunks_ingested_total',
      'chorus_chunks_refused_total',
      'chorus_chunk_ack_latency_seconds',
      'chorus_inference_job_duration_seconds',
      'chorus_alert_deliveries_total',
      'chorus_queue_jobs',
      'chorus_mqtt_connections',
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.ok(family(families, name), `${name} is exposed`);
    }
    if (hub.infra.db.kind === 'postgres') {
      const pools = family(families, 'chorus_db_pool_connections')!.metrics.map((m) => `${m.labels?.pool} ${m.labels?.state}`);
      for (const pool of ['api', 'exports'])
        for (const state of ['total', 'idle', 'waiting']) assert.ok(pools.includes(`${pool} ${state}`), `${pool} ${state}`);
    }
    const route = '/api/detections/:id';
    const before = requests(families, route, '404');
    // Three different raw paths, one route pattern.
    for (let i = 0; i < 3; i++) await api.get(`/detections/${crypto.randomUUID()}`, hubAdmin);
    const text = (await scrape(hub, { authorization: `Bearer ${INTERNAL_KEY}` })).text;
    const later = parsePrometheusTextFormat(text);
    assert.equal(requests(later, route, '404'), before + 3);
    // The parser keeps only a histogram's buckets, without labels: its _count line is read as text.
    const count = text.split('\n').find((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes(`route="${route}"`));
    assert.ok(count && Number(count.split(' ').at(-1)) >= 3, 'the latency histogram counts them too');
    assert.equal(Number((family(later, 'chorus_kv_up')!.metrics[0] as { value: string }).value), 1, 'the key-value store answers');
    const queue = family(later, 'chorus_queue_jobs')!.metrics;
    assert.ok(queue.some((m) => m.labels?.queue === 'inference' && m.labels?.state === 'waiting'));
    assert.ok(!family(later, 'http_requests_total')!.metrics.some((m) => /[0-9a-f]{8}-/.test(m.labels?.route ?? '')), 'no raw ids');
  });
});

describe('system status: an open metrics address and a dead database', () => {
  let hub: Hub;
  before(async () => {
    hub = await startHub({ env: { METRICS_ALLOW: '127.0.0.1' } });
  });
  after(async () => {
    await hub.close().catch(() => {});
  });

  test('METRICS_ALLOW opens /metrics to its addresses without a key', async () => {
    const res = await scrape(hub);
    assert.equal(res.status, 200);
    assert.ok(family(parsePrometheusTextFormat(res.text), 'http_requests_total'));
  });

  test('readiness answers 503 with the failing check once the database is gone; requests that need it answer 503 DATABASE_UNAVAILABLE with Retry-After', async () => {
    const api = client(hub.url);
    assert.equal((await api.get('/health/ready')).status, 200);
    const owner = await factories(hub).user();
    const team = (await api.post('/auth/create-tenant', { name: 'Outage team' }, owner)).body;
    assert.equal((await api.get(`/detections?tenantId=${team.id}`, owner)).status, 200);
    await hub.infra.db.close();
    const during = await api.get(`/detections?tenantId=${team.id}`, owner);
    const err = assertError(during, 503, 'DATABASE_UNAVAILABLE');
    assert.match(err.message, /database cannot be reached/);
    assert.equal(during.headers.get('retry-after'), '5');
    // A sign-in needs the database too: the same answer, not a 500 or a wrong-password 401.
    assertError(await api.post('/auth/login', { email: owner.email, password: owner.password }), 503, 'DATABASE_UNAVAILABLE');
    const started = performance.now();
    const res = await api.get('/health/ready');
    assert.equal(res.status, 503);
    assert.equal(res.body.ready, false);
    assert.equal(res.body.checks.database.ok, false);
    assert.equal(typeof res.body.checks.database.error, 'string');
    assert.equal(res.body.checks.broker.ok, true);
    assert.ok(performance.now() - started < 5000, 'a dead part answers within its time-out');
    // Liveness is not readiness.
    assert.equal((await api.get('/health')).status, 200);
  });
});

describe('readiness with Redis gone', { skip: noRedisServer }, () => {
  let redis: OwnRedis | null = null;
  let hub: Hub | null = null;
  before(async () => {
    redis = await ownRedis();
    hub = await startHub({ env: { REDIS_URL: redis.url } });
  });
  after(async () => {
    await hub?.close().catch(() => {});
    await redis?.kill();
  });

  test('Redis killed: readiness answers 503 with the key-value and queue checks failing, the database and broker fine; ready again once Redis is back', async () => {
    const api = client(hub!.url);
    const before = await api.get('/health/ready');
    assert.equal(before.status, 200, before.text);
    assert.equal(before.body.checks.queue.ok, true);
    await redis!.kill();
    const res = await api.get('/health/ready');
    assert.equal(res.status, 503);
    assert.equal(res.body.ready, false);
    assert.equal(res.body.checks.database.ok, true);
    assert.equal(res.body.checks.broker.ok, true);
    assert.equal(res.body.checks.kv.ok, false);
    assert.equal(res.body.checks.queue.ok, false);
    assert.equal(typeof res.body.checks.kv.error, 'string');
    const metrics = parsePrometheusTextFormat((await scrape(hub!, { authorization: `Bearer ${INTERNAL_KEY}` })).text);
    assert.equal(Number((family(metrics, 'chorus_kv_up')!.metrics[0] as { value: string }).value), 0, 'the gauge says Redis is away');
    // Redis back on its port: the hub's connections find it again, and readiness says so.
    await redis!.start();
    await waitFor('ready again', async () => (await api.get('/health/ready')).status === 200, { timeoutMs: 30_000 });
  });

  /** A satellite of a team of its own, so each test's chunks are its own. */
  async function satelliteOfNewTeam(): Promise<RawSatellite> {
    const f = factories(hub!);
    const owner = await f.user();
    return RawSatellite.register(hub!, owner, await f.team(owner));
  }
  /** Redis started again, and the hub ready on it. */
  async function redisBack(): Promise<void> {
    await redis!.start();
    await waitFor('the queue back', async () => (await client(hub!.url).get('/health/ready')).status === 200, { timeoutMs: 30_000 });
  }

  test('Redis killed: a copy of an acknowledged chunk is answered "send again later", and the stored chunk stays', async () => {
    const sat = await satelliteOfNewTeam();
    try {
      const body = audioBody(sat);
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
      await redis!.kill();
      // The satellite sent it again before our ack reached it: the queue is away for the copy.
      const again = await sat.sendAudio(body, body.chunkId);
      assert.equal(again.status, 'error', JSON.stringify(again));
      assert.equal(again.retryable, true);
      // The chunk the satellite was told is stored (and so forgot) is still stored.
      const rows = await hub!.sql.query<{ storage_key: string }>('SELECT storage_key FROM chunks WHERE id = $1', [body.chunkId]);
      assert.equal(rows.length, 1, 'the acknowledged row stays');
      assert.ok(await hub!.infra.storage.get(rows[0].storage_key), 'and its audio');
      await redisBack();
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
    } finally {
      await sat.close();
    }
  });

  test('Redis killed: a new chunk is answered "send again later" and its row stays (another dispatcher may have acked it); the retry makes its job', async () => {
    const sat = await satelliteOfNewTeam();
    try {
      const body = audioBody(sat);
      await redis!.kill();
      const refused = await sat.sendAudio(body, body.chunkId);
      assert.equal(refused.error, 'queue unavailable, send again later', JSON.stringify(refused));
      assert.equal(refused.retryable, true);
      const rows = await hub!.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks WHERE id = $1', [body.chunkId]);
      assert.equal(rows[0].n, 1, 'the row is not taken back');
      await redisBack();
      assert.deepEqual(await sat.sendAudio(body, body.chunkId), { chunkId: body.chunkId, status: 'stored' });
      // Its inference job ran: the chunk is classified.
      await waitFor('the chunk classified', async () => {
        const r = await hub!.sql.query<{ at: Date | null }>('SELECT classified_at AS at FROM chunks WHERE id = $1', [body.chunkId]);
        return r[0]?.at != null;
      });
    } finally {
      await sat.close();
    }
  });
});
