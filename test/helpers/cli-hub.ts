/**
 * The command line's test fixture (test/cli.test.ts, test/cli-admin.test.ts): hub installations on
 * a temporary data dir with embedded PGlite, or on a fresh PostgreSQL schema when DATABASE_URL is
 * set, and `serve` started as an operator starts it. Each test file makes its own fixture, so two
 * files sharing a test process keep their installations and servers apart.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';
import { logText } from './log-lines.ts';
import { childEnv, CHORUS_MAIN, CLI_WAIT_MS, runChorus, TSX } from './chorus-cli.ts';

export const root = path.resolve(import.meta.dirname, '..', '..');
// `node --import tsx src/main.ts`, as npm start and bin/chorus.mjs run it (chorus-cli.ts): tsx's
// own CLI would put a second node process (its watcher of the first) in front of every command.
export const MAIN = CHORUS_MAIN;
export const DATABASE_URL = process.env.DATABASE_URL;
export const REDIS_URL = process.env.REDIS_URL;
/** A fresh PGlite starts in seconds, and argon2 hashing adds more: be generous. */
export const WAIT_MS = CLI_WAIT_MS;
export const TEST_TIMEOUT = 240_000;

/** One hub installation: its data dir and, with DATABASE_URL, its own schema. */
export interface Installation {
  env: Record<string, string>;
  dispose(): Promise<void>;
}

export interface Server {
  url: string;
  port: number;
  /** Everything printed on stdout up to and including the start banner. */
  banner: string;
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function cliFixture() {
  const installations: Installation[] = [];

  /**
   * On embedded PGlite, a database `chorus migrate` prepared once: a test that is not about migrating
   * starts from a copy of it (as PostgreSQL test hubs copy a template), not from 28 migrations and
   * the species catalog again.
   */
  let migratedDb: Promise<string> | null = null;
  function migratedTemplate(): Promise<string> {
    migratedDb ??= (async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-cli-template-'));
      await runOk(['migrate'], { CHORUS_DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
      return path.join(dataDir, 'db');
    })();
    return migratedDb;
  }

  /** `migrated`: the schema is there already (PGlite: a copy of the template; PostgreSQL migrates fast). */
  async function install(extra: Record<string, string> = {}, opts: { migrated?: boolean } = {}): Promise<Installation> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-cli-'));
    if (opts.migrated && !DATABASE_URL) fs.cpSync(await migratedTemplate(), path.join(dataDir, 'db'), { recursive: true });
    const env: Record<string, string> = {
      CHORUS_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...extra,
    };
    let schema: string | null = null;
    if (DATABASE_URL) {
      schema = `cli_${crypto.randomBytes(6).toString('hex')}`;
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`CREATE SCHEMA ${schema}`);
      await c.end();
      env.DATABASE_URL = DATABASE_URL;
      env.DATABASE_SCHEMA = schema;
    }
    if (REDIS_URL) {
      env.REDIS_URL = REDIS_URL;
      env.CHORUS_KV_PREFIX = `chorus-cli-test:${crypto.randomBytes(4).toString('hex')}:`;
    }
    const inst: Installation = {
      env,
      async dispose() {
        if (schema) {
          const c = new pg.Client({ connectionString: DATABASE_URL });
          await c.connect();
          await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await c.end();
        }
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
    installations.push(inst);
    return inst;
  }

  /** Runs a command to completion. */
  const run = (args: string[], env: Record<string, string>, opts: { viaBin?: boolean } = {}) => runChorus(args, env, opts);

  async function runOk(args: string[], env: Record<string, string>): Promise<string> {
    const r = await run(args, env);
    assert.equal(r.code, 0, `chorus ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  }

  const running = new Set<ChildProcess>();

  /** Starts `serve` on a free port and waits for the start banner. */
  async function serve(env: Record<string, string>): Promise<Server> {
    const port = await freePort();
    const child = spawn(process.execPath, [...TSX, MAIN, 'serve'], {
      cwd: root,
      // Broker listeners on free ports too, so parallel test files and a running hub never clash.
      env: childEnv({ MQTT_PORT: '0', MQTT_WS_PORT: '0', ...env, PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let stdout = '';
    let stderr = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => {
        running.delete(child);
        resolve({ code, signal });
      }),
    );
    // The start-up lines end with "start-up complete" (JSON log lines; the tests read their msg).
    const bannerDone = /start-up complete[^\n]*\n/;
    const banner = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A hub left running would keep the test process (and the whole run) alive.
        child.kill('SIGKILL');
        reject(new Error(`serve printed no banner in ${WAIT_MS} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, WAIT_MS);
      const check = () => {
        if (bannerDone.test(stdout)) {
          clearTimeout(timer);
          resolve(logText(stdout));
        }
      };
      child.stdout!.on('data', (c) => {
        stdout += c;
        check();
      });
      child.stderr!.on('data', (c) => (stderr += c));
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`serve exited (${code ?? signal}) before listening\nstdout: ${stdout}\nstderr: ${stderr}`));
      });
    });
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      banner,
      child,
      output: () => ({ stdout, stderr }),
      async stop() {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), WAIT_MS);
        const result = await exited;
        clearTimeout(timer);
        return result;
      },
    };
  }

  async function login(url: string, email: string, password: string) {
    const res = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  }

  async function stopCleanly(server: Server) {
    const { code, signal } = await server.stop();
    assert.equal(signal, null, `serve ended by its own exit, not killed (${signal})`);
    assert.equal(code, 0, `serve exits 0 on SIGTERM\n${server.output().stderr}`);
  }

  /** Kills what still runs and removes every installation (the file's `after`). */
  async function cleanup(): Promise<void> {
    for (const child of running) child.kill('SIGKILL');
    for (const inst of installations) await inst.dispose();
    if (migratedDb) fs.rmSync(path.dirname(await migratedDb), { recursive: true, force: true });
  }

  return { install, run, runOk, serve, login, stopCleanly, cleanup };
}
