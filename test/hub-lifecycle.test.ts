/**
 * A hub process's life as an operator sees it (issue 21 items 8 and "SIGTERM drains"): every line
 * it writes is a JSON log line with level, time and msg, and the start-up, the start-up re-queue
 * and each shutdown step are there; SIGTERM with chunks in flight and an inference job running
 * (held mid-job by the `inference.before-record:sleep` failpoint) stores every chunk it acked,
 * finishes the job within SHUTDOWN_TIMEOUT_MS, and after a restart nothing is stored twice and
 * the chunks are classified once. Embedded parts by default; PostgreSQL + Redis with their URLs.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { makeWav } from '../src/protocol/wav.ts';
import { renderChunk, SPECIES_LABELS } from '../src/satellite/soundscape.ts';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/infra/db/index.ts';
import { audioBody } from './helpers/raw-satellite.ts';
import { logLines } from './helpers/log-lines.ts';
import { call, freePort, hubInstallation, startHubProcess, type HubProcess } from './helpers/hub-process.ts';
import { sqlOf } from './helpers/sql.ts';
import { waitFor } from './helpers/wait.ts';
import { noRedisServer, ownRedis } from './helpers/redis-server.ts';

const SHUTDOWN_TIMEOUT_MS = 20_000;
const ADMIN = { email: 'drain@example.org', password: 'drain-test-password-1' };

describe('hub process: structured log and SIGTERM drain', { timeout: 900_000 }, () => {
  const started: HubProcess[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const h of started) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGKILL');
    for (const c of cleanups) await c();
  });

  test('SIGTERM with chunks in flight and a job running: acked chunks stored once, the job classified once, JSON lines only', async () => {
    const inst = await hubInstallation('chorus-drain');
    cleanups.push(inst.dispose);
    const mqttPort = await freePort();
    const env: Record<string, string> = {
      ...inst.env,
      PORT: String(await freePort()),
      MQTT_PORT: String(mqttPort),
      MQTT_WS_PORT: '0',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      CHORUS_ADMIN_EMAIL: ADMIN.email,
      CHORUS_ADMIN_PASSWORD: ADMIN.password,
    };
    // The first hub holds every inference job for 3 s before recording it: one is running at SIGTERM.
    const first = startHubProcess({ ...env, CHORUS_FAILPOINT: 'inference.before-record:sleep=3000' });
    started.push(first);
    await first.waitFor(/^start-up complete/);
    const token = (await call(first.url, '/auth/login?returnToken=true', null, ADMIN)).body.token as string;
    const team = (await call(first.url, '/auth/create-tenant', token, { name: 'Drain team' })).body;
    const reg = await call(first.url, '/satellites', token, { tenantId: team.id, name: 'Drainer' });
    assert.equal(reg.status, 201, reg.text);
    const sat = { ...reg.body, tenantId: team.id };
    const bodies = Array.from({ length: 12 }, (_, i) =>
      // An hour apart: no two chunks stitch into one call, so each chunk has its own listed detection.
      audioBody(
        sat,
        { recordedAt: new Date(Date.now() - (i + 1) * 3600_000).toISOString() },
        makeWav(renderChunk({ species: [SPECIES_LABELS[i % 5]], seed: 100 + i })),
      ),
    );

    /** A satellite session: publishes, and keeps the acks it receives. */
    const connect = async () => {
      const c = await mqtt.connectAsync(
        `mqtt://127.0.0.1:${mqttPort}`,
        { clientId: `satellite-${sat.id}`, username: sat.mqtt.username, password: sat.mqtt.password, reconnectPeriod: 0 },
        false,
      );
      const acks = new Map<string, string>();
      const waiters = new Set<() => void>();
      c.on('message', (_t, m) => {
        const a = JSON.parse(m.toString('utf8')) as { chunkId: string; status: string };
        acks.set(a.chunkId, a.status);
        for (const w of waiters) w();
      });
      c.on('error', () => {});
      await c.subscribeAsync(`chorus/${team.id}/${sat.id}/ack`, { qos: 1 });
      const publish = (b: (typeof bodies)[number]) => c.publish(`chorus/${team.id}/${sat.id}/audio`, JSON.stringify(b), { qos: 1 });
      const acked = (ids: string[], ms = 120_000) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`acks missing: ${ids.filter((id) => !acks.has(id)).join(', ')}`)), ms);
          const check = () => {
            if (ids.every((id) => acks.has(id))) {
              clearTimeout(timer);
              waiters.delete(check);
              resolve();
            }
          };
          waiters.add(check);
          check();
        });
      return { c, acks, publish, acked };
    };

    const s1 = await connect();
    // The first chunk is stored and its job starts (and holds); then eleven more arrive and SIGTERM follows at once.
    s1.publish(bodies[0]);
    await s1.acked([bodies[0].chunkId]);
    await first.waitFor(new RegExp(`^failpoint inference.before-record: holding the job`));
    for (const b of bodies.slice(1)) s1.publish(b);
    const sent = performance.now();
    first.child.kill('SIGTERM');
    // An impatient second signal (Ctrl-C twice) while the held job keeps the drain going: noted, not obeyed.
    await first.waitFor(/^shutdown: SIGTERM received/);
    first.child.kill('SIGINT');
    const exit = await first.exited;
    const took = performance.now() - sent;
    s1.c.end(true);
    assert.deepEqual(exit, { code: 0, signal: null }, `exit 0 after draining\n${first.stdout()}\n${first.stderr()}`);
    assert.ok(took < SHUTDOWN_TIMEOUT_MS, `gone within SHUTDOWN_TIMEOUT_MS: ${Math.round(took)} ms`);

    // Every line is a JSON log line (level, time, msg); nothing on stderr.
    const lines = logLines(first.stdout());
    assert.equal(first.stderr(), '', 'nothing written outside the log');
    for (const l of lines) {
      assert.equal(l.mode, 'full', `every line names the hub's mode: ${JSON.stringify(l)}`);
      assert.equal(typeof l.host, 'string', 'and its host');
    }
    const msgs = lines.map((l) => l.msg);
    const has = (re: RegExp) =>
      assert.ok(
        msgs.some((m) => re.test(m)),
        `a line matching ${re}:\n${msgs.join('\n')}`,
      );
    has(/^Chorus is listening on http:\/\/127\.0\.0\.1:\d+ /);
    has(/^Hub admin drain@example\.org created from CHORUS_ADMIN_EMAIL\.$/);
    has(/^start-up re-queue: 0 unclassified chunks/);
    has(/^start-up complete in \d+ ms$/);
    has(/^shutdown: SIGTERM received; draining within 20000 ms$/);
    has(/^shutdown: ingest stopped taking chunks and finished its acks$/);
    has(/^shutdown: queue workers finished their running jobs$/);
    has(/^shutdown: HTTP and WebSockets closed$/);
    has(/^shutdown: SIGINT received again; still draining/);
    has(/^shutdown: database closed$/);
    has(/^shutdown: complete in \d+ ms; exiting$/);
    for (const l of lines) assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const queueStep = lines.find((l) => l.step === 'queue')!;
    assert.equal(queueStep.inferenceRunning, 1, 'one inference job was running at SIGTERM');
    assert.ok((queueStep.ms as number) >= 0);
    assert.ok(!first.stdout().includes(ADMIN.password), 'no password in the log');
    const ackedBefore = [...s1.acks].filter(([, st]) => st === 'stored').map(([id]) => id);
    assert.ok(ackedBefore.includes(bodies[0].chunkId));

    // Restart without the failpoint: the satellite sends again what it has no ack for (and, as one
    // whose acks were lost would, everything else once more).
    const second = startHubProcess(env);
    started.push(second);
    const requeue = await second.waitFor(/^start-up re-queue: /);
    const s2 = await connect();
    for (const b of bodies) s2.publish(b);
    await s2.acked(bodies.map((b) => b.chunkId));
    assert.ok(
      [...s2.acks.values()].every((st) => st === 'stored'),
      JSON.stringify([...s2.acks]),
    );
    // Every chunk classified (each carries one species the model hears).
    await waitFor(
      'every chunk classified',
      async () => {
        const d = await call(second.url, `/detections?tenantId=${team.id}&limit=200&includeTentative=true`, token);
        const chunks = new Set((d.body?.detections ?? []).map((x: { audioChunkId: string }) => x.audioChunkId));
        assert.ok(
          bodies.every((b) => chunks.has(b.chunkId)),
          `not every chunk classified: ${chunks.size} of ${bodies.length}`,
        );
        return true;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    s2.c.end(true);
    second.child.kill('SIGTERM');
    assert.deepEqual(await second.exited, { code: 0, signal: null });
    assert.doesNotThrow(() => logLines(second.stdout()));

    const db = await createDb({ ...loadConfig({ ...env, CHORUS_SECRET: 'x'.repeat(32) }), databaseSchema: env.DATABASE_SCHEMA ?? null });
    try {
      const rows = await sqlOf(db).query<{ id: string }>('SELECT id FROM chunks WHERE tenant_id = $1', [team.id]);
      assert.equal(rows.length, bodies.length, 'one row per chunk');
      for (const id of ackedBefore)
        assert.ok(
          rows.some((r) => r.id === id),
          `chunk ${id} acked before SIGTERM is stored`,
        );
      const dupes = await sqlOf(db).query<{ chunk_id: string; species_code: string; n: number }>(
        `SELECT chunk_id, species_code, count(*)::int AS n FROM detections WHERE tenant_id = $1
         GROUP BY chunk_id, species_code HAVING count(*) > 1`,
        [team.id],
      );
      assert.deepEqual(dupes, [], 'no chunk classified twice');
      const ofRunning = await sqlOf(db).query<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE chunk_id = $1', [
        bodies[0].chunkId,
      ]);
      assert.ok(ofRunning[0].n >= 1, 'the job running at SIGTERM is classified');
    } finally {
      await db.close();
    }
    assert.match(requeue, /^start-up re-queue: \d+ unclassified chunks?/);
  });

  test('Redis gone at SIGTERM: the drain is bounded, and the log names the step it was stuck in', { skip: noRedisServer }, async () => {
    const redis = await ownRedis();
    cleanups.push(() => redis.kill());
    const inst = await hubInstallation('chorus-stuck');
    cleanups.push(inst.dispose);
    const hub = startHubProcess({
      ...inst.env,
      // This hub's Redis is its own, so it can go away for real.
      REDIS_URL: redis.url,
      PORT: String(await freePort()),
      MQTT_PORT: String(await freePort()),
      MQTT_WS_PORT: '0',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '2000',
    });
    started.push(hub);
    await hub.waitFor(/^start-up complete/);
    await redis.kill();
    hub.child.kill('SIGTERM');
    const exit = await hub.exited;
    assert.deepEqual(exit, { code: 1, signal: null }, `exit 1 once the bound ran out\n${hub.stdout()}`);
    const stuck = logLines(hub.stdout()).find((l) => /^shutdown took longer than 2000 ms/.test(l.msg));
    assert.ok(stuck, `the bound is logged:\n${hub.stdout()}`);
    assert.equal(typeof stuck.step, 'string');
    assert.match(stuck.msg, new RegExp(`, stuck closing the ${stuck.step}; exiting anyway$`));
  });
});
