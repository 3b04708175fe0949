/**
 * Starts a hub as its own process (as an operator would), so the load generator and the hub
 * do not share an event loop. Uses DATABASE_URL/REDIS_URL from the environment when set,
 * in a fresh schema and under a fresh key prefix, both dropped afterwards. HTTP and both
 * broker listeners bind to free loopback ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Satellite } from '../src/satellite/client.ts';
import { Outbox } from '../src/satellite/outbox.ts';
import { syntheticSource } from '../src/satellite/sources.ts';
import type { Db } from '../src/infra/db/types.ts';
import { hashPassword } from '../src/modules/users/passwords.ts';

export interface HubProcess {
  url: string;
  adminEmail: string;
  adminPassword: string;
  /** The hub's own node process (for /proc/<pid>/status). */
  pid: number;
  /** Its PostgreSQL schema (DATABASE_URL set), else null. */
  schema: string | null;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** `nodeArgs` (and BENCH_HUB_NODE_ARGS, space-separated) go to the hub's node (e.g. --cpu-prof). */
export async function startHubProcess(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<HubProcess> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-'));
  const adminEmail = 'bench-admin@example.org';
  const adminPassword = crypto.randomBytes(12).toString('hex');
  let schema: string | null = null;
  if (process.env.DATABASE_URL) {
    schema = `bench_${crypto.randomBytes(4).toString('hex')}`;
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
  }
  const kvPrefix = `chorus-bench:${crypto.randomBytes(4).toString('hex')}:`;
  const root = path.resolve(import.meta.dirname, '..');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_HUB_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ...nodeArgs,
      // BENCH_DIST=1: the compiled server (`npm run build:server`), as `npm run start:prod` and the
      // container run it, without the TypeScript loader's per-function wrappers.
      ...(process.env.BENCH_DIST ? [path.join(root, 'dist/main.js')] : ['--import', 'tsx', path.join(root, 'src/main.ts')]),
      'serve',
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        CHORUS_DATA_DIR: dataDir,
        CHORUS_ADMIN_EMAIL: adminEmail,
        CHORUS_ADMIN_PASSWORD: adminPassword,
        LOG_LEVEL: 'warn',
        MQTT_PORT: '0',
        MQTT_WS_PORT: '0',
        MQTT_HOST: '127.0.0.1',
        CHORUS_KV_PREFIX: kvPrefix,
        ...(schema ? { DATABASE_SCHEMA: schema } : {}),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  async function stop() {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(kill);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (schema) {
      const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
    if (process.env.REDIS_URL) {
      const r = new Redis(process.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await r.connect();
      let cursor = '0';
      do {
        const [next, keys] = await r.scan(cursor, 'MATCH', `${kvPrefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await r.unlink(...keys);
      } while (cursor !== '0');
      r.disconnect();
    }
  }
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const onData = (d: Buffer) => {
        out += d;
        if (!out.includes('listening on')) return;
        // Keep draining the pipe (warnings) so the hub never blocks on a full stdout; BENCH_HUB_STDOUT keeps it in a file.
        child.stdout!.off('data', onData);
        if (process.env.BENCH_HUB_STDOUT) child.stdout!.pipe(fs.createWriteStream(process.env.BENCH_HUB_STDOUT));
        else child.stdout!.resume();
        resolve();
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`hub exited with ${code}: ${out}`)));
    });
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, adminEmail, adminPassword, pid: child.pid!, schema, stop };
}

/** A JSON call to a hub: POST when a body is given; throws with the answer on a non-2xx. */
async function sqlOnce(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

/**
 * The schema a seeding bench runs its hub in: a fresh one named `<prefix>_<hex>`, or with
 * BENCH_REUSE=<schema> one an earlier run kept (BENCH_KEEP=1), so one long seed serves several
 * measurements. `adoptAdmin` gives a kept schema's admin this hub's password; `finish` drops a
 * fresh schema unless BENCH_KEEP is set (a reused one is kept).
 */
export async function benchSchema(url: string, prefix: string) {
  const reused = process.env.BENCH_REUSE ?? null;
  const schema = reused ?? `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
  if (!reused) await sqlOnce(url, `CREATE SCHEMA ${schema}`);
  return {
    schema,
    reused: reused !== null,
    async adoptAdmin(db: Db, hub: Pick<HubProcess, 'adminEmail' | 'adminPassword'>) {
      if (reused)
        await db.run('UPDATE users SET password_hash = $2 WHERE lower(email) = lower($1)', [
          hub.adminEmail,
          await hashPassword(hub.adminPassword),
        ]);
    },
    async finish() {
      if (process.env.BENCH_KEEP || reused) console.log(`kept schema ${schema}`);
      else await sqlOnce(url, `DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

export async function api(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** The hub admin's bearer header (the credentials startHubProcess made). */
export async function adminAuth(hub: Pick<HubProcess, 'url' | 'adminEmail' | 'adminPassword'>): Promise<Record<string, string>> {
  const login = await api(`${hub.url}/api/auth/login?returnToken=true`, { body: { email: hub.adminEmail, password: hub.adminPassword } });
  return { authorization: `Bearer ${login.token}` };
}

/**
 * A reference satellite (src/satellite) of a new team on a hub, registered by the hub admin,
 * recording synthetic chunks every `chunkIntervalMs` into an outbox under `dir`. Not started.
 */
export async function benchSatellite(
  hub: Pick<HubProcess, 'url' | 'adminEmail' | 'adminPassword'>,
  o: { name: string; dir: string; seed: number; chunkIntervalMs: number },
): Promise<{ satellite: Satellite; satelliteId: string }> {
  const auth = await adminAuth(hub);
  const team = await api(`${hub.url}/api/auth/create-tenant`, { headers: auth, body: { name: o.name } });
  const reg = await api(`${hub.url}/api/satellites`, { headers: auth, body: { tenantId: team.id, name: `${o.name} satellite` } });
  const satellite = new Satellite({
    credentials: {
      satelliteId: reg.id,
      tenantId: team.id,
      username: reg.mqtt.username,
      password: reg.mqtt.password,
      brokerUrl: reg.mqtt.brokerUrl,
    },
    source: syntheticSource({ seed: o.seed, silenceProbability: 0 }),
    outbox: await Outbox.open(path.join(o.dir, 'outbox')),
    dataDir: o.dir,
    chunkIntervalMs: o.chunkIntervalMs,
  });
  return { satellite, satelliteId: reg.id };
}
