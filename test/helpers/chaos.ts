/**
 * Issue 37 "Faults survived, measured": the chaos scenario, shared by `npm run bench -- chaos` (200
 * satellites) and test/chaos.test.ts (the reduced form CI runs).
 *
 * Two api, two dispatcher and two worker processes of one hub run against PostgreSQL (through a TCP
 * proxy the scenario can cut: every connection reset, new ones refused — to the hub that is a
 * database restart, and it leaves the PostgreSQL other tests share alone), a Redis of its own (an
 * append-only file written through, as an operator keeps a Redis holding a queue), Mosquitto with
 * dynamic security (persistence on) and an S3 store (s3rver). Reference satellites (src/satellite:
 * its outbox, acks, back-off; one injected clock the scenario moves on) record in rounds; between
 * rounds one fault at a time: SIGKILL of a dispatcher, a worker, an api process (each started
 * again), and restarts of Redis, Mosquitto and PostgreSQL. One WebSocket client per api process
 * watches the team's detection events, reconnecting when its process goes.
 *
 * The result is read from the database and the object store once every outbox is empty and every
 * stored chunk classified.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import S3rver from 's3rver';
import WebSocket from 'ws';
import { ManualClock } from '../../src/core/clock.ts';
import { Satellite } from '../../src/satellite/client.ts';
import { Outbox } from '../../src/satellite/outbox.ts';
import { syntheticSource } from '../../src/satellite/sources.ts';
import { startTcpProxy } from '../../bench/tcp-proxy.ts';
import { call, freePort, hubInstallation, startHubProcess, type HubProcess } from './hub-process.ts';
import { startMosquitto } from './mosquitto.ts';
import { ownRedis } from './redis-server.ts';

export interface ChaosOptions {
  satellites: number;
  /** Rounds of one chunk per satellite recorded before the first fault and after the last. */
  quietRounds?: number;
  /** How long each part stays down (a killed process, a stopped server). */
  downMs?: number;
  /** How long the scenario waits for outboxes to drain and chunks to be classified. */
  settleMs?: number;
  log?: (line: string) => void;
}

export interface ApiWatch {
  name: string;
  killed: boolean;
  received: number;
  /** Detection events some client or satellite heard of that this client did not. */
  missed: number;
}

export interface ChaosResult {
  satellites: number;
  sent: number;
  acked: number;
  stored: number;
  lost: number;
  storedTwice: number;
  /** Objects in the store for which no chunk row exists, and rows whose object is missing. */
  objectsWithoutRow: number;
  rowsWithoutObject: number;
  unclassified: number;
  detections: number;
  detectionsDuplicated: number;
  /** Satellites whose outbox still held chunks at the end. */
  undrained: number;
  watches: ApiWatch[];
  faults: Array<{ fault: string; ms: number }>;
  totalMs: number;
}

const ADMIN = { email: 'chaos@example.org', password: 'chaos-admin-password-1' };
const ACK_TIMEOUT_MS = 30_000;

type Role = 'api' | 'dispatcher' | 'worker';
interface Part {
  name: string;
  role: Role;
  port: number;
  env: Record<string, string>;
  proc: HubProcess;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const log = o.log ?? (() => {});
  const downMs = o.downMs ?? 3000;
  const quietRounds = o.quietRounds ?? 2;
  const started = Date.now();
  const dbUrl = process.env.DATABASE_URL;
  if (!dbUrl) throw new Error('the chaos scenario needs DATABASE_URL (PostgreSQL)');
  const cleanups: Array<() => Promise<void>> = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-chaos-'));
  cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  const parts: Part[] = [];
  const satellites: Satellite[] = [];
  const watchers: Watcher[] = [];
  let ticker: NodeJS.Timeout | null = null;
  try {
    // The engines.
    const mosq = await startMosquitto({ persistence: true });
    cleanups.unshift(() => mosq.stop());
    fs.mkdirSync(path.join(tmp, 'redis'));
    const redis = await ownRedis({ persistDir: path.join(tmp, 'redis') });
    cleanups.unshift(() => redis.kill());
    const pgTarget = new URL(dbUrl);
    const pgProxy = await startTcpProxy({ host: pgTarget.hostname, port: Number(pgTarget.port || 5432) });
    cleanups.unshift(() => pgProxy.close());
    const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(tmp, 's3') });
    const s3Port = ((await s3.run()) as AddressInfo).port;
    cleanups.unshift(() => s3.close());

    const inst = await hubInstallation('chorus-chaos');
    cleanups.push(inst.dispose);
    const proxiedDb = new URL(dbUrl);
    proxiedDb.hostname = '127.0.0.1';
    proxiedDb.port = String(pgProxy.port);
    const common: Record<string, string> = {
      ...inst.env,
      DATABASE_URL: proxiedDb.toString(),
      REDIS_URL: redis.url,
      CHORUS_KV_PREFIX: 'chaos:',
      S3_URL: `http://S3RVER:S3RVER@127.0.0.1:${s3Port}`,
      S3_BUCKET: 'chorus-chaos',
      CHORUS_SECRET: 'chaos-secret-0123456789abcdef0123456789abcdef',
      LOG_LEVEL: 'warn',
      MQTT_URL: mosq.url,
      MQTT_ADMIN_USERNAME: mosq.adminUsername,
      MQTT_ADMIN_PASSWORD: mosq.adminPassword,
      CHORUS_ADMIN_EMAIL: ADMIN.email,
      CHORUS_ADMIN_PASSWORD: ADMIN.password,
    };
    const start = async (part: Omit<Part, 'proc'> & { proc?: HubProcess }) => {
      const proc = startHubProcess({ ...common, ...part.env, PORT: String(part.port) });
      await proc.waitFor(/^start-up complete/);
      const p = part as Part;
      p.proc = proc;
      return p;
    };
    const spec: Array<[string, Role, Record<string, string>]> = [
      ['dispatcher-1', 'dispatcher', { CHORUS_DISPATCHER_ID: 'd1' }],
      ['dispatcher-2', 'dispatcher', { CHORUS_DISPATCHER_ID: 'd2' }],
      ['worker-1', 'worker', {}],
      ['worker-2', 'worker', {}],
      ['api-1', 'api', {}],
      ['api-2', 'api', {}],
    ];
    const make = async ([name, role, env]: (typeof spec)[number]) =>
      start({ name, role, port: await freePort(), env: { CHORUS_MODE: role, ...env } });
    // The first dispatcher migrates; the rest open the migrated database, side by side.
    parts.push(await make(spec[0]));
    cleanups.unshift(async () => {
      for (const p of parts) await stopPart(p.proc);
    });
    const rest = await Promise.allSettled(spec.slice(1).map(make));
    for (const r of rest) if (r.status === 'fulfilled') parts.push(r.value);
    const failed = rest.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const part = (name: string) => parts.find((p) => p.name === name)!;
    log(`six processes up in ${Date.now() - started} ms`);

    // One team, its satellites, a watcher on each api process.
    const apiUrl = part('api-1').proc.url;
    const token = (await call(apiUrl, '/auth/login?returnToken=true', null, ADMIN)).body.token as string;
    const team = (await call(apiUrl, '/auth/create-tenant', token, { name: 'Chaos team' })).body;
    const clock = new ManualClock();
    const recorded = new Set<string>();
    const acked = new Set<string>();
    const heardBySatellites = new Set<string>();
    for (let i = 0; i < o.satellites; i++) {
      const reg = await call(apiUrl, '/satellites', token, { tenantId: team.id, name: `Chaos ${i + 1}` });
      if (reg.status !== 201) throw new Error(`registering satellite ${i + 1}: ${reg.status} ${reg.text}`);
      const dir = path.join(tmp, `sat-${i}`);
      fs.mkdirSync(dir);
      const satellite = new Satellite({
        credentials: {
          satelliteId: reg.body.id,
          tenantId: team.id,
          username: reg.body.mqtt.username,
          password: reg.body.mqtt.password,
          brokerUrl: mosq.url,
        },
        source: syntheticSource({ seed: 100 + i, silenceProbability: 0 }),
        outbox: await Outbox.open(path.join(dir, 'outbox')),
        dataDir: dir,
        clock,
        chunkIntervalMs: 0,
        heartbeatIntervalMs: 600_000,
        telemetryIntervalMs: 600_000,
        ackTimeoutMs: ACK_TIMEOUT_MS,
        retryMaxMs: 30_000,
      });
      satellite.on('recorded', (row: { chunkId: string }) => recorded.add(row.chunkId));
      satellite.on('acked', (row: { chunkId: string }) => acked.add(row.chunkId));
      satellite.on('detection', (d: { id?: string }) => d.id && heardBySatellites.add(d.id));
      satellites.push(satellite);
    }
    cleanups.unshift(async () => {
      for (const s of satellites) await s.stop().catch(() => {});
    });
    await Promise.all(satellites.map((s) => s.start()));
    for (const name of ['api-1', 'api-2']) watchers.push(watch(name, () => part(name).proc.url, token, team.id));
    cleanups.unshift(async () => watchers.forEach((w) => w.close()));
    // The satellites' time runs at twice real time: ack time-outs and back-off pass without sleeping them out.
    ticker = setInterval(() => clock.advance(1000), 500);

    const round = async () => {
      await Promise.all(satellites.map((s) => s.record()));
    };
    for (let i = 0; i < quietRounds; i++) await round();

    const faults: ChaosResult['faults'] = [];
    const kill = (name: string) => async () => {
      const p = part(name);
      p.proc.child.kill('SIGKILL');
      await p.proc.exited;
      if (p.role === 'api') watchers.find((w) => w.name === name)!.killed = true;
      await round();
      await sleep(downMs);
      await start(p);
    };
    const steps: Array<[string, () => Promise<void>]> = [
      ['SIGKILL dispatcher-1', kill('dispatcher-1')],
      ['SIGKILL worker-1', kill('worker-1')],
      ['SIGKILL api-2', kill('api-2')],
      [
        'restart Redis',
        async () => {
          await redis.kill();
          await round();
          await sleep(downMs);
          await redis.start();
        },
      ],
      [
        'restart Mosquitto',
        async () => {
          const back = mosq.restart(downMs);
          await round();
          await back;
        },
      ],
      [
        'restart PostgreSQL',
        async () => {
          pgProxy.cut();
          await round();
          await sleep(downMs);
          pgProxy.restore();
        },
      ],
    ];
    for (const [fault, act] of steps) {
      await round();
      const t0 = Date.now();
      await act();
      faults.push({ fault, ms: Date.now() - t0 });
      log(`${fault}: back after ${Date.now() - t0} ms`);
    }
    for (let i = 0; i < quietRounds; i++) await round();

    // Settle: every outbox empty, every stored chunk classified.
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    cleanups.unshift(() => db.end());
    const schema = inst.env.DATABASE_SCHEMA;
    const deadline = Date.now() + (o.settleMs ?? 300_000);
    const unsent = () => satellites.reduce((n, s) => n + s.outbox.pending().length, 0);
    const unclassifiedNow = async () =>
      Number((await db.query(`SELECT count(*) AS n FROM ${schema}.chunks WHERE classified_at IS NULL`)).rows[0].n);
    while (Date.now() < deadline && (unsent() > 0 || (await unclassifiedNow()) > 0)) await sleep(1000);
    log(`settled ${unsent() === 0 ? '' : `(not: ${unsent()} unsent) `}after ${Date.now() - started} ms`);
    clearInterval(ticker);
    ticker = null;

    // What the database and the object store hold.
    const rows = (await db.query(`SELECT id, storage_key FROM ${schema}.chunks`)).rows.map((r) => ({
      id: String(r.id),
      storage_key: r.storage_key === null ? null : String(r.storage_key),
    }));
    const storedIds = new Set(rows.map((r) => r.id));
    const keys = listKeys(path.join(tmp, 's3'), 'chorus-chaos');
    const keySet = new Set(keys);
    const rowKeys = new Set(rows.map((r) => r.storage_key).filter((k): k is string => !!k));
    const dets = (await db.query(`SELECT id FROM ${schema}.detections`)).rows.map((r) => String(r.id));
    const dup = await db.query(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${schema}.detections GROUP BY chunk_id, species_code, start_ms, model_id HAVING count(*) > 1) d`,
    );
    const announced = new Set<string>(heardBySatellites);
    for (const w of watchers) for (const id of w.ids) announced.add(id);
    return {
      satellites: o.satellites,
      sent: recorded.size,
      acked: [...recorded].filter((id) => acked.has(id)).length,
      stored: [...recorded].filter((id) => storedIds.has(id)).length,
      lost: [...recorded].filter((id) => !storedIds.has(id)).length,
      storedTwice: rows.length - storedIds.size,
      objectsWithoutRow: keys.filter((k) => !rowKeys.has(k)).length,
      rowsWithoutObject: [...rowKeys].filter((k) => !keySet.has(k)).length,
      unclassified: await unclassifiedNow(),
      detections: dets.length,
      detectionsDuplicated: Number(dup.rows[0].n),
      undrained: satellites.filter((s) => s.outbox.pending().length > 0).length,
      watches: watchers.map((w) => ({
        name: w.name,
        killed: w.killed,
        received: w.ids.size,
        missed: [...announced].filter((id) => !w.ids.has(id)).length,
      })),
      faults,
      totalMs: Date.now() - started,
    };
  } finally {
    if (ticker) clearInterval(ticker);
    for (const c of cleanups) await c().catch((err) => log(`clean-up: ${(err as Error).message}`));
  }
}

interface Watcher {
  name: string;
  killed: boolean;
  ids: Set<string>;
  close(): void;
}

/** A team socket on one api process that opens again (every 500 ms) whenever it closes. */
function watch(name: string, url: () => string, token: string, tenantId: string): Watcher {
  let closed = false;
  let ws: WebSocket | null = null;
  const w: Watcher = {
    name,
    killed: false,
    ids: new Set(),
    close() {
      closed = true;
      ws?.terminate();
    },
  };
  const open = () => {
    if (closed) return;
    ws = new WebSocket(`${url().replace(/^http/, 'ws')}/ws/events?tenantId=${tenantId}`, { headers: { authorization: `Bearer ${token}` } });
    ws.on('message', (m) => {
      try {
        const frame = JSON.parse(m.toString());
        if (frame.type === 'detection' && typeof frame.id === 'string') w.ids.add(frame.id);
      } catch {
        // not ours to judge here
      }
    });
    ws.on('error', () => {});
    ws.on('close', () => setTimeout(open, 500));
  };
  open();
  return w;
}

async function stopPart(proc: HubProcess): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 20_000);
  await proc.exited;
  clearTimeout(timer);
}

/**
 * The keys s3rver holds, read from its folder (its ListObjects answered 500 under a few thousand
 * objects): each object is a file `<key>._S3rver_object` under `<dir>/<bucket>/`.
 */
function listKeys(dir: string, bucket: string): string[] {
  const root = path.join(dir, bucket);
  if (!fs.existsSync(root)) return [];
  const suffix = '._S3rver_object';
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((f) => f.endsWith(suffix))
    .map((f) => f.slice(0, -suffix.length).split(path.sep).join('/'));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
