/**
 * Split mode (issue 21, "a worker killed in the middle of a job ... classified once after
 * recovery"): a dispatcher, an api and a worker on PostgreSQL and Redis; the worker is held in the
 * middle of an inference job (failpoint `inference.before-record:hold`, after the model ran and
 * before the detections are written) and killed with SIGKILL. A new worker takes the stalled job
 * over (BullMQ's stall check, logged), and the chunk ends classified exactly once: one chunk row,
 * one detection per species, none written twice. Needs DATABASE_URL and REDIS_URL (CI sets both).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import pg from 'pg';
import { makeWav } from '../src/protocol/wav.ts';
import { renderChunk, SPECIES_LABELS } from '../src/satellite/soundscape.ts';
import { audioBody } from './helpers/raw-satellite.ts';
import { logLines } from './helpers/log-lines.ts';
import { call, freePort, hubInstallation, startHubProcess, type HubProcess } from './helpers/hub-process.ts';
import { waitFor } from './helpers/wait.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const skip = !DATABASE_URL || !process.env.REDIS_URL ? 'split mode needs DATABASE_URL and REDIS_URL' : false;
const ADMIN = { email: 'killer@example.org', password: 'worker-kill-password-1' };

describe('split mode: a worker killed mid-job', { skip, timeout: 900_000 }, () => {
  const procs: HubProcess[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const p of procs) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGTERM');
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
      await p.exited;
      clearTimeout(timer);
    }
    for (const c of cleanups) await c();
  });

  test('SIGKILL while a job runs; a new worker classifies the chunk exactly once', async () => {
    const inst = await hubInstallation('chorus-wkill');
    cleanups.push(inst.dispose);
    // A 3 s lock: the stalled job is handed over within seconds, not the default 30–60 s.
    const common = {
      ...inst.env,
      CHORUS_SECRET: 'wkill-secret-0123456789abcdef0123456789abcdef',
      LOG_LEVEL: 'warn',
      QUEUE_LOCK_MS: '3000',
    };
    const mqttPort = await freePort();
    const start = async (env: Record<string, string>) => {
      const p = startHubProcess({ ...common, PORT: String(await freePort()), ...env });
      procs.push(p);
      await p.waitFor(/^start-up complete/);
      return p;
    };
    // The dispatcher first (it migrates); every process shares the data dir, so the workers read the
    // audio objects the dispatcher writes.
    await start({ CHORUS_MODE: 'dispatcher', MQTT_PORT: String(mqttPort), MQTT_WS_PORT: '0' });
    const api = await start({
      CHORUS_MODE: 'api',
      MQTT_PORT: String(mqttPort),
      CHORUS_ADMIN_EMAIL: ADMIN.email,
      CHORUS_ADMIN_PASSWORD: ADMIN.password,
    });
    const doomed = await start({ CHORUS_MODE: 'worker', CHORUS_FAILPOINT: 'inference.before-record:hold' });

    const token = (await call(api.url, '/auth/login?returnToken=true', null, ADMIN)).body.token as string;
    const team = (await call(api.url, '/auth/create-tenant', token, { name: 'Kill team' })).body;
    const reg = await call(api.url, '/satellites', token, { tenantId: team.id, name: 'Victim' });
    assert.equal(reg.status, 201, reg.text);
    const sat = { ...reg.body, tenantId: team.id };
    const body = audioBody(sat, {}, makeWav(renderChunk({ species: [SPECIES_LABELS[1]], seed: 7 })));
    const c = await mqtt.connectAsync(
      `mqtt://127.0.0.1:${mqttPort}`,
      { clientId: `satellite-${sat.id}`, username: sat.mqtt.username, password: sat.mqtt.password, reconnectPeriod: 0 },
      false,
    );
    try {
      await c.subscribeAsync(`chorus/${team.id}/${sat.id}/ack`, { qos: 1 });
      const ack = new Promise<any>((resolve) => c.once('message', (_t, m) => resolve(JSON.parse(m.toString()))));
      c.publish(`chorus/${team.id}/${sat.id}/audio`, JSON.stringify(body), { qos: 1 });
      assert.deepEqual(await ack, { chunkId: body.chunkId, status: 'stored' });
    } finally {
      c.end(true);
    }

    // The worker is in the middle of the job: the model ran, nothing is written yet.
    await doomed.waitFor(/^failpoint inference\.before-record: holding the job/);
    doomed.child.kill('SIGKILL');
    const died = await doomed.exited;
    assert.equal(died.signal, 'SIGKILL');

    const db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    cleanups.unshift(() => db.end());
    const detections = async () => {
      const res = await db.query(`SELECT species_code FROM ${inst.env.DATABASE_SCHEMA}.detections WHERE chunk_id = $1`, [body.chunkId]);
      return res.rows.map((r) => r.species_code as string);
    };
    assert.deepEqual(await detections(), [], 'the killed worker wrote nothing');

    const fresh = await start({ CHORUS_MODE: 'worker' });
    // BullMQ hands the stalled job over once its lock (QUEUE_LOCK_MS) lapses.
    const found = await waitFor(
      'the chunk classified after the kill',
      async () => {
        const d = await detections();
        return d.length > 0 && d;
      },
      { timeoutMs: 240_000, intervalMs: 500 },
    ).catch((err: Error) => assert.fail(`${err.message}\n${fresh.stdout()}`));
    // Nothing more arrives: the inference queue holds no job waiting, delayed or running, and the
    // chunk's job is finished (GET /workers shows the queue's counts), so no job can write again.
    const queue = await waitFor(
      'the inference queue to settle',
      async () => {
        const q = (await call(api.url, '/workers', token)).body?.queue;
        return q && q.waiting + q.delayed + q.active === 0 && q.completed + q.failed >= 1 && q;
      },
      { timeoutMs: 60_000 },
    );
    const final = await detections();
    assert.deepEqual(final, found);
    assert.equal(new Set(final).size, final.length, `no species written twice: ${final.join(', ')}`);
    const rows = await db.query(`SELECT count(*)::int AS n FROM ${inst.env.DATABASE_SCHEMA}.chunks WHERE id = $1`, [body.chunkId]);
    assert.equal(rows.rows[0].n, 1, 'one chunk row');
    const all = await db.query(`SELECT count(*)::int AS n FROM ${inst.env.DATABASE_SCHEMA}.detections WHERE tenant_id = $1`, [team.id]);
    assert.equal(all.rows[0].n, final.length, 'no other detections');
    assert.equal(queue.completed, 1, `the job completed once: ${JSON.stringify(queue)}`);
    const stalled = logLines(fresh.stdout()).find((l) => /^queue: job stalled/.test(l.msg));
    assert.ok(stalled, `the take-over is logged:\n${fresh.stdout()}`);
    assert.equal(stalled.jobId, body.chunkId);
  });
});
