/**
 * Issue 37 "More than one dispatcher": two dispatcher processes of one hub on Mosquitto (dynamic
 * security), each with its own CHORUS_DISPATCHER_ID, share the satellite-to-hub channels through
 * one MQTT shared subscription group. Each chunk reaches one of them (each stores and acks, so a
 * chunk both received would be acked twice and counted by both); one is killed with SIGKILL in the
 * middle of a run and comes back under its id: every chunk ends stored once and acked. The
 * satellite is the reference satellite (its outbox sends again what was not acked, on its own
 * injected clock). Needs DATABASE_URL, REDIS_URL (split mode) and the mosquitto binary.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { call, freePort, hubInstallation, startHubProcess, type HubProcess } from './helpers/hub-process.ts';
import { MOSQUITTO, startMosquitto, type RunningMosquitto } from './helpers/mosquitto.ts';
import { waitFor } from './helpers/wait.ts';
import { ManualClock } from '../src/core/clock.ts';
import { Satellite } from '../src/satellite/client.ts';
import { Outbox } from '../src/satellite/outbox.ts';
import { syntheticSource } from '../src/satellite/sources.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const skip =
  !DATABASE_URL || !process.env.REDIS_URL
    ? 'split mode needs DATABASE_URL and REDIS_URL'
    : !MOSQUITTO
      ? 'the mosquitto binary is not installed'
      : false;
const ADMIN = { email: 'share@example.org', password: 'shared-dispatchers-password-1' };
const ACK_TIMEOUT_MS = 30_000;

/** chorus_chunks_ingested_total of one dispatcher: the chunks it stored and acked. */
async function ingested(p: HubProcess): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text();
  const m = /^chorus_chunks_ingested_total(?:\{[^}]*\})? (\d+)/m.exec(text);
  assert.ok(m, `the dispatcher exposes chorus_chunks_ingested_total:\n${text.slice(0, 400)}`);
  return Number(m[1]);
}

describe('two dispatchers share the ingest (MQTT shared subscriptions on Mosquitto)', { skip, timeout: 600_000 }, () => {
  const procs: HubProcess[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  let mosq: RunningMosquitto | null = null;
  after(async () => {
    for (const p of procs) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGTERM');
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
      await p.exited;
      clearTimeout(timer);
    }
    for (const c of cleanups) await c();
    await mosq?.stop();
  });

  test('each chunk reaches one dispatcher; one killed mid-run and restarted: every chunk stored once and acked', async () => {
    mosq = await startMosquitto({ persistence: true });
    const inst = await hubInstallation('chorus-share');
    cleanups.push(inst.dispose);
    const common = {
      ...inst.env,
      CHORUS_SECRET: 'share-secret-0123456789abcdef0123456789abcdef',
      LOG_LEVEL: 'warn',
      METRICS_ALLOW: '127.0.0.1',
      MQTT_URL: mosq.url,
      MQTT_ADMIN_USERNAME: mosq.adminUsername,
      MQTT_ADMIN_PASSWORD: mosq.adminPassword,
    };
    const start = async (env: Record<string, string>) => {
      const p = startHubProcess({ ...common, PORT: String(await freePort()), ...env });
      procs.push(p);
      await p.waitFor(/^start-up complete/);
      return p;
    };
    // The first dispatcher migrates; the others open the migrated database.
    let d1 = await start({ CHORUS_MODE: 'dispatcher', CHORUS_DISPATCHER_ID: 'd1' });
    const d2 = await start({ CHORUS_MODE: 'dispatcher', CHORUS_DISPATCHER_ID: 'd2' });
    const api = await start({ CHORUS_MODE: 'api', CHORUS_ADMIN_EMAIL: ADMIN.email, CHORUS_ADMIN_PASSWORD: ADMIN.password });

    const token = (await call(api.url, '/auth/login?returnToken=true', null, ADMIN)).body.token as string;
    const team = (await call(api.url, '/auth/create-tenant', token, { name: 'Share team' })).body;
    const reg = await call(api.url, '/satellites', token, { tenantId: team.id, name: 'Busy' });
    assert.equal(reg.status, 201, reg.text);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-share-sat-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const satellite = new Satellite({
      credentials: {
        satelliteId: reg.body.id,
        tenantId: team.id,
        username: reg.body.mqtt.username,
        password: reg.body.mqtt.password,
        brokerUrl: mosq.url,
      },
      source: syntheticSource({ seed: 11, silenceProbability: 0 }),
      outbox: await Outbox.open(path.join(dir, 'outbox')),
      dataDir: dir,
      clock,
      chunkIntervalMs: 0,
      heartbeatIntervalMs: 600_000,
      telemetryIntervalMs: 600_000,
      ackTimeoutMs: ACK_TIMEOUT_MS,
      reconnectAckTimeoutMs: ACK_TIMEOUT_MS,
    });
    cleanups.unshift(() => satellite.stop());
    const acks = new Map<string, number>();
    // Every ack as it arrives (a chunk two dispatchers handled would be acked twice).
    satellite.on('ack', (a: { chunkId: string; status: string }) => {
      if (a.status === 'stored') acks.set(a.chunkId, (acks.get(a.chunkId) ?? 0) + 1);
    });
    const connected = once(satellite, 'connected', { signal: AbortSignal.timeout(60_000) });
    await satellite.start();
    await connected;

    // Both dispatchers up: ten chunks, each stored by exactly one of them.
    for (let i = 0; i < 10; i++) assert.equal(await satellite.record(), 'recorded');
    await waitFor('ten acks', () => satellite.ackedCount >= 10, { timeoutMs: 120_000 });
    const counts = await waitFor(
      'both dispatchers counted their share',
      async () => {
        const c = [await ingested(d1), await ingested(d2)];
        return c[0] + c[1] >= 10 && c;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(counts[0] + counts[1], 10, `each chunk handled by one dispatcher (d1 ${counts[0]}, d2 ${counts[1]})`);
    assert.ok(counts[0] > 0 && counts[1] > 0, `both dispatchers took chunks (d1 ${counts[0]}, d2 ${counts[1]})`);
    assert.ok(
      [...acks.values()].every((n) => n === 1),
      'one ack per chunk',
    );

    // d1 is killed in the middle of a run; the satellite goes on recording.
    for (let i = 0; i < 3; i++) assert.equal(await satellite.record(), 'recorded');
    d1.child.kill('SIGKILL');
    assert.equal((await d1.exited).signal, 'SIGKILL');
    for (let i = 0; i < 7; i++) assert.equal(await satellite.record(), 'recorded');
    // Restarted under its id, it resumes its broker session (what the broker queued for it); the
    // satellite sends again what no one acked once its ack time-out passes.
    d1 = await start({ CHORUS_MODE: 'dispatcher', CHORUS_DISPATCHER_ID: 'd1' });
    await waitFor(
      'twenty chunks acked',
      () => {
        if (satellite.ackedCount >= 20) return true;
        clock.advance(ACK_TIMEOUT_MS + 1000);
        return false;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    assert.equal(satellite.ackedCount, 20);
    assert.equal(acks.size, 20, 'every chunk acked');

    const db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    cleanups.unshift(() => db.end());
    const rows = await db.query(`SELECT id FROM ${inst.env.DATABASE_SCHEMA}.chunks WHERE satellite_id = $1`, [reg.body.id]);
    const ids = rows.rows.map((r) => r.id as string);
    assert.equal(ids.length, 20, 'twenty chunk rows');
    assert.deepEqual([...ids].sort(), [...acks.keys()].sort(), 'the rows are the acked chunks, none lost, none twice');
  });
});
