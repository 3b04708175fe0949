/**
 * A hub as an operator runs it, for the tests that signal or kill it: `node --import tsx src/main.ts
 * serve` (no tsx wrapper process between the test and the hub, so a signal reaches the hub itself),
 * its stdout and stderr kept whole, started-up when it logged "start-up complete".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { logText } from './log-lines.ts';

const root = path.resolve(import.meta.dirname, '..', '..');

export interface HubProcess {
  child: ChildProcess;
  url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once a log line's msg matches (rejects when the process exits first or after `ms`). */
  waitFor(re: RegExp, ms?: number): Promise<string>;
}

export { freePort } from './ports.ts';

export function startHubProcess(env: Record<string, string>, args: string[] = ['serve']): HubProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    for (const w of waiters) w();
  });
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const w of waiters) w();
      resolve({ code, signal });
    }),
  );
  const hub: HubProcess = {
    child,
    url: `http://127.0.0.1:${env.PORT}`,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(re, ms = 180_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no log line matching ${re} in ${ms} ms\n${out}\n${err}`)), ms);
        const check = () => {
          const m = logText(out)
            .split('\n')
            .find((l) => re.test(l));
          if (m !== undefined) return done(null, m);
          if (child.exitCode !== null || child.signalCode !== null) done(new Error(`the hub exited before ${re}\n${out}\n${err}`));
        };
        const done = (e: Error | null, line?: string) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (e) reject(e);
          else resolve(line!);
        };
        waiters.add(check);
        check();
      });
    },
  };
  return hub;
}

/** A data dir and, with DATABASE_URL, a schema of its own; REDIS_URL with a prefix of its own. */
export async function hubInstallation(prefix: string): Promise<{ env: Record<string, string>; dispose(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const env: Record<string, string> = { CHORUS_DATA_DIR: dataDir, HOST: '127.0.0.1', MQTT_HOST: '127.0.0.1' };
  let schema: string | null = null;
  if (process.env.DATABASE_URL) {
    schema = `${prefix.replace(/\W/g, '_')}_${crypto.randomBytes(6).toString('hex')}`;
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
    Object.assign(env, { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema });
  }
  if (process.env.REDIS_URL)
    Object.assign(env, { REDIS_URL: process.env.REDIS_URL, CHORUS_KV_PREFIX: `${prefix}:${crypto.randomBytes(4).toString('hex')}:` });
  return {
    env,
    async dispose() {
      if (schema) {
        const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** JSON over HTTP with an optional bearer token. */
export async function call(url: string, p: string, token: string | null, body?: unknown, method?: string) {
  const res = await fetch(`${url}/api${p}`, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, body: json, text };
}
