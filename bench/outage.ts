/**
 * `npm run bench -- outage` (issue 32, "measured, not asserted"): a satellite records one chunk a
 * second while a part the hub needs is down for BENCH_DOWN_MS (default 120 s), then the bench
 * waits for everything recorded to be stored and classified. Printed per run: chunks recorded,
 * stored, stored twice, lost, the time from the part's return until the last chunk recorded
 * before it was acknowledged (the drain), the satellite's longest wait between offers, and chunks
 * left unclassified. Target: 0 lost, 0 twice, drained within 2 minutes.
 *
 * - The hub runs as its own process (full mode) on PostgreSQL and Redis (DATABASE_URL and
 *   REDIS_URL are required: the embedded database lives inside the hub and cannot go down alone),
 *   each reached through a TCP proxy (tcp-proxy.ts) that the bench cuts: open connections are
 *   reset and new ones refused, as a server that died or a network that broke would look.
 * - The object store: S3 (s3rver, a local S3-compatible server started here, behind a third
 *   proxy), so that it can go away too.
 * - The broker: the hub's embedded one, and Mosquitto 2 with dynamic security started here
 *   (BENCH_BROKERS=embedded,mosquitto). The parts: BENCH_PARTS=postgres,redis,s3.
 * - The reference satellite (src/satellite) in this process with its default back-off (2 s
 *   doubling to 5 min, with jitter), recording every BENCH_CHUNK_MS (1000).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import S3rver from 's3rver';
import { benchSatellite, startHubProcess } from './hub-process.ts';
import type { Satellite } from '../src/satellite/client.ts';
import { startTcpProxy } from './tcp-proxy.ts';
import { startMosquitto } from '../test/helpers/mosquitto.ts';

const CHUNK_MS = Number(process.env.BENCH_CHUNK_MS ?? 1000);
const DOWN_MS = Number(process.env.BENCH_DOWN_MS ?? 120_000);
const DRAIN_LIMIT_MS = Number(process.env.BENCH_DRAIN_LIMIT_MS ?? 600_000);
type Part = 'postgres' | 'redis' | 's3';
const PARTS = (process.env.BENCH_PARTS ?? 'postgres,redis,s3').split(',') as Part[];
const BROKERS = (process.env.BENCH_BROKERS ?? 'embedded,mosquitto').split(',') as Array<'embedded' | 'mosquitto'>;
const TARGET_DRAIN_MS = 120_000;

interface Result {
  part: string;
  broker: string;
  recorded: number;
  stored: number;
  twice: number;
  lost: number;
  /** Of the lost, those the hub had acknowledged (the rest were never acknowledged: still in the satellite's outbox). */
  lostAcked: number;
  drainMs: number | null;
  longestWaitMs: number;
  unclassified: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`);

/** Resolves once `check` holds (polled every 100 ms), or false after `timeoutMs`. */
async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > end) return false;
    await sleep(100);
  }
  return true;
}

/** The same URL with its host and port replaced by the proxy's. */
function through(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

async function once(part: Part, broker: 'embedded' | 'mosquitto'): Promise<Result> {
  const databaseUrl = process.env.DATABASE_URL!;
  const redisUrl = process.env.REDIS_URL!;
  const target = (url: string, port: number) => ({ host: new URL(url).hostname, port: Number(new URL(url).port || port) });
  const pgProxy = await startTcpProxy(target(databaseUrl, 5432));
  const redisProxy = await startTcpProxy(target(redisUrl, 6379));
  const mosq = broker === 'mosquitto' ? await startMosquitto() : null;
  const satDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-outage-sat-'));
  const s3Dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-outage-s3-'));
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir });
  const s3Port = ((await s3.run()) as AddressInfo).port;
  const s3Proxy = await startTcpProxy({ host: '127.0.0.1', port: s3Port });
  const hub = await startHubProcess({
    DATABASE_URL: through(databaseUrl, pgProxy.port),
    REDIS_URL: through(redisUrl, redisProxy.port),
    // s3rver takes the key pair S3RVER / S3RVER.
    S3_URL: `http://S3RVER:S3RVER@127.0.0.1:${s3Proxy.port}`,
    S3_BUCKET: 'chorus-outage-bench',
    ...(mosq ? { MQTT_URL: mosq.url, MQTT_ADMIN_USERNAME: mosq.adminUsername, MQTT_ADMIN_PASSWORD: mosq.adminPassword } : {}),
  });
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  let satellite: Satellite | null = null;
  try {
    const made = await benchSatellite(hub, { name: 'Outage bench', dir: satDir, seed: 11, chunkIntervalMs: CHUNK_MS });
    satellite = made.satellite;
    const satelliteId = made.satelliteId;
    const recorded = new Map<string, number>();
    const acked = new Map<string, number>();
    let longestWaitMs = 0;
    satellite.on('recorded', (r: { chunkId: string }) => recorded.set(r.chunkId, performance.now()));
    satellite.on('acked', (r: { chunkId: string }) => acked.set(r.chunkId, performance.now()));
    satellite.on('backoff', (b: { delayMs: number }) => (longestWaitMs = Math.max(longestWaitMs, b.delayMs)));
    await satellite.start();
    if (!(await until(() => acked.size >= 5, 60_000))) throw new Error('ingest did not flow before the outage');

    const proxy = { postgres: pgProxy, redis: redisProxy, s3: s3Proxy }[part];
    console.log(`${part} down for ${secs(DOWN_MS)} (${broker} broker)…`);
    proxy.cut();
    await sleep(DOWN_MS);
    proxy.restore();
    const back = performance.now();
    const backlog = [...recorded].filter(([, at]) => at <= back).map(([id]) => id);
    const drained = await until(() => backlog.every((id) => acked.has(id)), DRAIN_LIMIT_MS);
    const drainMs = drained ? Math.max(0, ...backlog.map((id) => acked.get(id)! - back)) : null;
    // What was recorded until now counts: the satellite keeps sending until each is acked (or a
    // minute passes), then stops; chunks it records meanwhile are left out of the figures.
    const cutoff = performance.now();
    const counted = [...recorded].filter(([, at]) => at <= cutoff).map(([id]) => id);
    await until(() => counted.every((id) => acked.has(id)), 60_000);
    await satellite.stop();
    satellite = null;

    const schema = hub.schema!;
    const rows = async () =>
      (
        await db.query<{ id: string; recorded_at: Date; classified: boolean }>(
          `SELECT id, recorded_at, classified_at IS NOT NULL OR EXISTS (SELECT 1 FROM ${schema}.detections d WHERE d.chunk_id = c.id) AS classified
             FROM ${schema}.chunks c WHERE satellite_id = $1`,
          [satelliteId],
        )
      ).rows;
    // Inference jobs held up by the outage run once it is over.
    await until(async () => (await rows()).every((r) => r.classified), 120_000);
    const all = await rows();
    const ids = new Set(all.map((r) => r.id));
    const mine = new Set(counted);
    const stored = all.filter((r) => mine.has(r.id));
    return {
      part,
      broker,
      recorded: counted.length,
      stored: stored.length,
      // A chunk stored twice would be a second row for the same recording (its id is the key).
      twice: all.length - new Set(all.map((r) => r.recorded_at.getTime())).size,
      lost: counted.filter((id) => !ids.has(id)).length,
      lostAcked: counted.filter((id) => !ids.has(id) && acked.has(id)).length,
      drainMs,
      longestWaitMs,
      unclassified: all.filter((r) => !r.classified).length,
    };
  } finally {
    await satellite?.stop().catch(() => undefined);
    await db.end();
    await hub.stop();
    await mosq?.stop();
    await pgProxy.close();
    await redisProxy.close();
    await s3Proxy.close();
    await s3.close();
    fs.rmSync(satDir, { recursive: true, force: true });
    fs.rmSync(s3Dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    console.error('the outage bench needs DATABASE_URL and REDIS_URL (the parts it takes down; see bench/outage.ts)');
    process.exitCode = 2;
    return;
  }
  const results: Result[] = [];
  for (const broker of BROKERS) for (const part of PARTS) results.push(await once(part, broker));
  console.log(
    `\noutages of ${secs(DOWN_MS)}, one chunk every ${secs(CHUNK_MS)}; target: 0 lost, 0 twice, drained within ${secs(TARGET_DRAIN_MS)}`,
  );
  console.log('part       broker      recorded  stored  twice  lost  drained after  longest wait  unclassified');
  for (const r of results) {
    const over = r.lost > 0 || r.twice > 0 || r.drainMs === null || r.drainMs > TARGET_DRAIN_MS;
    console.log(
      `${r.part.padEnd(10)} ${r.broker.padEnd(10)} ${String(r.recorded).padStart(9)} ${String(r.stored).padStart(7)} ${String(r.twice).padStart(6)} ` +
        `${`${r.lost}${r.lost ? ` (${r.lostAcked} acked)` : ''}`.padStart(5)} ${secs(r.drainMs).padStart(14)} ${secs(r.longestWaitMs).padStart(13)} ${String(r.unclassified).padStart(13)}` +
        (over ? '   OFF TARGET' : ''),
    );
  }
}
