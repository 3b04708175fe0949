/**
 * The production start and signals (issue 21, "Production start" and split mode item 3): the
 * server compiled to JavaScript runs with plain `node dist/main.js serve`, and SIGTERM sent to
 * whatever process each documented start command leaves in front (npm, the bin launcher, node)
 * stops the hub within 15 s and frees its port. A container's `CMD npm start` signals npm.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '..');
const DIST_MAIN = path.join(root, 'dist', 'main.js');
const STOP_BOUND_MS = 15_000;
const START_WAIT_MS = 90_000;

/** Newest modification time under a folder. */
function newest(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const e of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, e)));
  return max;
}

/** Process ids below pid (Linux /proc), for cleaning up whatever a failed test leaves behind. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-prod-'));
const leftovers = new Set<number>();

interface Started {
  child: ChildProcess;
  url: string;
  port: number;
  output: () => string;
  exited: Promise<void>;
}

/** Starts a documented command on the shared data dir (ports 0) and waits for the banner. */
async function start(command: string, args: string[]): Promise<Started> {
  const child = spawn(command, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      NODE_ENV: 'production',
      CHORUS_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      MQTT_HOST: '127.0.0.1',
      MQTT_PORT: '0',
      MQTT_WS_PORT: '0',
      LOG_LEVEL: 'warn',
      CHORUS_ADMIN_EMAIL: 'ops@example.org',
      CHORUS_ADMIN_PASSWORD: 'production-start-pw',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const m = await waitFor(
    `${command} ${args.join(' ')} to start listening`,
    () => /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(out) ?? (gone() && 'exited'),
    { timeoutMs: START_WAIT_MS, intervalMs: 100 },
  ).catch((err: Error) => assert.fail(`${err.message}:\n${out}`));
  if (m === 'exited') assert.fail(`${command} ${args.join(' ')} exited before listening:\n${out}`);
  for (const pid of descendants(child.pid!)) leftovers.add(pid);
  leftovers.add(child.pid!);
  return { child, url: m[1], port: Number(m[2]), output: () => out, exited };
}

/** SIGTERM to the front process; the hub must stop and free its port within the bound. */
async function stopsOnSigterm(s: Started) {
  const behind = descendants(s.child.pid!);
  s.child.kill('SIGTERM');
  await waitFor(
    `every process gone and the port free within ${STOP_BOUND_MS} ms of SIGTERM`,
    async () => {
      const left = [s.child.pid!, ...behind].filter(alive);
      assert.ok(left.length === 0 && (await portFree(s.port)), `still running: processes ${left.join(', ')}; port ${s.port}`);
      return true;
    },
    { timeoutMs: STOP_BOUND_MS, intervalMs: 100 },
  ).catch((err: Error) => assert.fail(`${err.message}\n${s.output()}`));
  await s.exited;
  assert.equal(fs.existsSync(path.join(dataDir, 'chorus.lock')), false, 'the data dir lock is released');
}

async function healthy(s: Started) {
  const res = await fetch(`${s.url}/api/health`);
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { status: string }).status, 'ok');
}

describe('production start', { concurrency: false, timeout: 300_000 }, () => {
  before(
    () => {
      // Reuse a build newer than every source file; compile otherwise (about 25 s).
      const built = fs.existsSync(DIST_MAIN) ? fs.statSync(DIST_MAIN).mtimeMs : 0;
      if (built < Math.max(newest(path.join(root, 'src')), fs.statSync(path.join(root, 'tsconfig.build.json')).mtimeMs)) {
        const res = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-server.mjs')], { cwd: root, encoding: 'utf8' });
        assert.equal(res.status, 0, `build:server failed\n${res.stdout}\n${res.stderr}`);
      }
      const web = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-web-build.mjs')], { cwd: root, encoding: 'utf8' });
      assert.equal(web.status, 0, `the web build failed\n${web.stdout}\n${web.stderr}`);
    },
    { timeout: 180_000 },
  );

  after(() => {
    for (const pid of leftovers) if (alive(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('the compiled server has no TypeScript left and finds its run-time files', () => {
    const files = fs.readdirSync(path.join(root, 'dist'), { recursive: true }) as string[];
    assert.equal(files.filter((f) => f.endsWith('.ts')).length, 0);
    for (const f of ['infra/db/pglite-worker.mjs', 'infra/storage/files-writer.mjs', 'db/migrations/0001_foundation.sql']) {
      assert.ok(files.includes(f), `dist/${f}`);
    }
    const js = fs.readFileSync(DIST_MAIN, 'utf8');
    assert.doesNotMatch(js, /from '\.[^']*\.ts'|from "\.[^"]*\.ts"|import\("\.[^"]*\.ts"\)/);
  });

  test('node dist/main.js serve: serves without a TypeScript loader and stops on SIGTERM', async () => {
    const s = await start(process.execPath, [DIST_MAIN, 'serve']);
    await healthy(s);
    assert.equal(fs.existsSync(path.join(dataDir, 'chorus.lock')), true, 'the embedded database is locked while the hub runs');
    // A second hub on the same embedded database is refused.
    const second = spawnSync(process.execPath, [DIST_MAIN, 'serve'], {
      cwd: root,
      env: { PATH: process.env.PATH, CHORUS_DATA_DIR: dataDir, PORT: '0', MQTT_PORT: '0', MQTT_WS_PORT: '0' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(second.status, 1);
    // Said in the hub's log: one fatal JSON line on stdout.
    const refusal = JSON.parse(second.stdout.trim().split('\n').pop()!);
    assert.equal(refusal.level, 60);
    assert.match(refusal.msg, /is in use: chorus serve runs as process \d+/);
    await stopsOnSigterm(s);
  });

  test('npm start: SIGTERM to npm stops the hub', async () => {
    const s = await start('npm', ['start']);
    await healthy(s);
    await stopsOnSigterm(s);
  });

  test('npm run start:prod: SIGTERM to npm stops the hub', async () => {
    const s = await start('npm', ['run', 'start:prod']);
    await healthy(s);
    await stopsOnSigterm(s);
  });

  test('bin/chorus.mjs serve: SIGTERM to the launcher stops the hub', async () => {
    const s = await start(process.execPath, [path.join(root, 'bin', 'chorus.mjs'), 'serve']);
    await healthy(s);
    await stopsOnSigterm(s);
  });
});
