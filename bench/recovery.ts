/**
 * Figures for issue 21 item 5: how long ingest stops when the process holding the broker
 * (a full hub, or the dispatcher in split mode) restarts, and when Mosquitto restarts.
 * Target: ingest flowing again within 5 s of the hub or the broker being back.
 *
 * - Mosquitto 2 with dynamic security and `persistence true`, started here (test/helpers/mosquitto.ts).
 * - The hub in its own process, full mode on that Mosquitto; PostgreSQL and Redis when
 *   DATABASE_URL and REDIS_URL are set (a fresh schema and key prefix), else embedded parts in a
 *   data dir that outlives the restart.
 * - One reference satellite (src/satellite, real time) recording a chunk every BENCH_CHUNK_MS
 *   (500), default knobs otherwise (ack time-out 30 s, reconnects from 1 s doubling).
 *
 * Each outage lasts BENCH_DOWN_MS (3000). "back" is when the restarted hub printed its start-up
 * lines, or when Mosquitto printed that it runs. Printed per outage: back → first ack, and back →
 * every chunk recorded before "back" acked (the backlog). BENCH_ROUNDS (2) outages of each kind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { benchSatellite } from './hub-process.ts';
import { startMosquitto } from '../test/helpers/mosquitto.ts';
import type { Satellite } from '../src/satellite/client.ts';

const CHUNK_MS = Number(process.env.BENCH_CHUNK_MS ?? 500);
const DOWN_MS = Number(process.env.BENCH_DOWN_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const TARGET_MS = 5000;
const root = path.resolve(import.meta.dirname, '..');

interface HubProc {
  url: string;
  stop(): Promise<void>;
}

/** `chorus serve` with the given environment; resolves once it printed its start-up lines. */
async function serve(env: Record<string, string>): Promise<HubProc> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts'), 'serve'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const m = /is listening on (http:\/\/\S+)/.exec(out);
      if (!m || !/\nMQTT: /.test(out)) return;
      child.stdout!.off('data', onData).resume();
      resolve(m[1]);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`hub exited with ${code}: ${out}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(kill);
    },
  };
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function run(): Promise<void> {
  const mosq = await startMosquitto({ persistence: true });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-recovery-'));
  const satDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-recovery-sat-'));
  let schema: string | null = null;
  if (process.env.DATABASE_URL) {
    schema = `bench_${crypto.randomBytes(4).toString('hex')}`;
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
  }
  const admin = { email: 'bench-admin@example.org', password: crypto.randomBytes(12).toString('hex') };
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    CHORUS_DATA_DIR: dataDir,
    CHORUS_SECRET: crypto.randomBytes(32).toString('hex'),
    CHORUS_ADMIN_EMAIL: admin.email,
    CHORUS_ADMIN_PASSWORD: admin.password,
    CHORUS_KV_PREFIX: `chorus-bench:${crypto.randomBytes(4).toString('hex')}:`,
    LOG_LEVEL: 'warn',
    MQTT_URL: mosq.url,
    MQTT_ADMIN_USERNAME: mosq.adminUsername,
    MQTT_ADMIN_PASSWORD: mosq.adminPassword,
    ...(schema ? { DATABASE_SCHEMA: schema } : {}),
  };
  let hub = await serve(env);
  let satellite: Satellite | null = null;
  const results: Array<{ what: string; firstAck: number; backlog: number; chunks: number }> = [];
  try {
    satellite = (
      await benchSatellite(
        { url: hub.url, adminEmail: admin.email, adminPassword: admin.password },
        { name: 'Recovery bench', dir: satDir, seed: 5, chunkIntervalMs: CHUNK_MS },
      )
    ).satellite;
    const acked = new Map<string, number>(); // chunkId → when acked
    const recorded = new Map<string, number>(); // chunkId → when recorded
    satellite.on('recorded', (r: { chunkId: string }) => recorded.set(r.chunkId, performance.now()));
    satellite.on('acked', (r: { chunkId: string }) => acked.set(r.chunkId, performance.now()));
    await satellite.start();

    /** Resolves once `check` holds, polling every 20 ms (the satellite and the hub run on their own). */
    const until = async (check: () => boolean, what: string, timeoutMs = 120_000) => {
      const end = performance.now() + timeoutMs;
      while (!check()) {
        if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const flowing = () => acked.size >= 3;
    await until(flowing, 'ingest to flow');

    async function outage(what: string, restart: () => Promise<void>) {
      const before = new Set(acked.keys());
      const back = await (async () => {
        await restart();
        return performance.now();
      })();
      const backlog = [...recorded].filter(([, at]) => at <= back).map(([id]) => id);
      // Acks of the drain before the outage count for nothing: the first one after "back".
      await until(() => [...acked.values()].some((at) => at >= back), `a first ack after the ${what}`);
      const firstAck = Math.min(...[...acked.values()].filter((at) => at >= back)) - back;
      await until(() => backlog.every((id) => acked.has(id)), `the backlog after the ${what}`);
      const drained = Math.max(...backlog.map((id) => acked.get(id)!)) - back;
      results.push({ what, firstAck, backlog: drained, chunks: backlog.filter((id) => !before.has(id)).length });
      console.log(`${what}: first ack ${fmt(firstAck)} after back, backlog acked ${fmt(drained)} after back`);
    }

    for (let i = 0; i < ROUNDS; i++) {
      await outage('hub (dispatcher) restart', async () => {
        await hub.stop();
        await new Promise((r) => setTimeout(r, DOWN_MS));
        hub = await serve(env);
      });
      await outage('broker restart', () => mosq.restart(DOWN_MS));
    }
  } finally {
    await satellite?.stop();
    await hub.stop();
    await mosq.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(satDir, { recursive: true, force: true });
    if (schema) {
      const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
  }
  console.log(
    `\nrecovery (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, ${process.env.REDIS_URL ? 'Redis' : 'in-memory kv'}, Mosquitto with persistence; ` +
      `outages of ${DOWN_MS} ms, a chunk every ${CHUNK_MS} ms; target: first ack < ${TARGET_MS / 1000} s after back)`,
  );
  console.log('outage                     back → first ack   back → backlog acked   chunks recorded while down');
  for (const r of results)
    console.log(
      `${r.what.padEnd(26)} ${fmt(r.firstAck).padStart(16)} ${fmt(r.backlog).padStart(22)} ${String(r.chunks).padStart(28)}${r.firstAck > TARGET_MS ? '   OVER TARGET' : ''}`,
    );
}
