/**
 * Starts a hub as its own process (as an operator would), so the load generator and the hub
 * do not share an event loop. Uses DATABASE_URL/REDIS_URL from the environment when set,
 * in a fresh schema that is dropped afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';

export interface HubProcess {
  url: string;
  adminEmail: string;
  adminPassword: string;
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

export async function startHubProcess(env: Record<string, string> = {}): Promise<HubProcess> {
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
  const root = path.resolve(import.meta.dirname, '..');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts'), 'serve'], {
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
      ...(schema ? { DATABASE_SCHEMA: schema } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`hub exited with ${code}: ${out}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    adminEmail,
    adminPassword,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (schema) {
        const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await c.connect();
        await c.query(`DROP SCHEMA ${schema} CASCADE`);
        await c.end();
      }
    },
  };
}
