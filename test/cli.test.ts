/**
 * The command line, run as an operator runs it: real child processes of `tsx src/main.ts`
 * (what `npm start` and bin/chorus.mjs run) on a temporary data dir with embedded PGlite, or
 * on a fresh PostgreSQL schema when DATABASE_URL is set. Servers are stopped with SIGTERM.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import mqtt from 'mqtt';
import { listMigrations } from '../src/infra/db/migrate.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { audioBody } from './helpers/raw-satellite.ts';
import { freePort } from './helpers/ports.ts';
import { logLines, logText } from './helpers/log-lines.ts';
import { childEnv, CHORUS_MAIN, CLI_WAIT_MS, runChorus, TSX } from './helpers/chorus-cli.ts';

const root = path.resolve(import.meta.dirname, '..');
// `node --import tsx src/main.ts`, as npm start and bin/chorus.mjs run it (helpers/chorus-cli.ts):
// tsx's own CLI would put a second node process (its watcher of the first) in front of every command.
const MAIN = CHORUS_MAIN;
const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;

/** A fresh PGlite starts in seconds, and argon2 hashing adds more: be generous. */
const WAIT_MS = CLI_WAIT_MS;
const TEST_TIMEOUT = 240_000;

/** One hub installation: its data dir and, with DATABASE_URL, its own schema. */
interface Installation {
  env: Record<string, string>;
  dispose(): Promise<void>;
}

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

interface Server {
  url: string;
  port: number;
  /** Everything printed on stdout up to and including the start banner. */
  banner: string;
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
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

describe('cli', { timeout: TEST_TIMEOUT * 6 }, () => {
  before(() => {
    assert.ok(fs.existsSync(path.join(root, 'node_modules', 'tsx')), 'tsx is installed');
  });
  after(async () => {
    for (const child of running) child.kill('SIGKILL');
    for (const inst of installations) await inst.dispose();
    if (migratedDb) fs.rmSync(path.dirname(await migratedDb), { recursive: true, force: true });
  });

  test(
    'serve: first start prints the URL and one-time admin credentials that sign in; a restart prints none',
    { timeout: TEST_TIMEOUT },
    async () => {
      const inst = await install({}, { migrated: true });
      const first = await serve(inst.env);
      try {
        assert.match(first.banner, new RegExp(`Chorus is listening on http://127\\.0\\.0\\.1:${first.port} `));
        assert.match(first.banner, new RegExp(`open http://localhost:${first.port} `));
        assert.match(first.banner, DATABASE_URL ? /Database: PostgreSQL/ : /Database: embedded PGlite in .*\/db/);
        assert.match(first.banner, REDIS_URL ? /key-value: Redis/ : /key-value: in-memory/);
        assert.match(first.banner, /mail: recorded and dropped/);
        assert.match(first.banner, /First start: a hub admin was created/);
        const [, email, password] = /shown once: email (\S+) password (\S+) /.exec(first.banner) ?? [];
        assert.ok(email && password, `credentials printed:\n${first.banner}`);
        assert.ok(password.length >= 16, 'a strong generated password');

        const health = await fetch(`${first.url}/api/health`);
        assert.equal(health.status, 200);

        const ok = await login(first.url, email, password);
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.body.user.email, email);
        assert.equal(ok.body.user.isAdmin, true, 'the generated account is a hub admin');
        const wrong = await login(first.url, email, password + 'x');
        assert.equal(wrong.status, 401);
        await stopCleanly(first);

        const second = await serve(inst.env);
        try {
          assert.match(second.banner, /Chorus is listening on/);
          assert.doesNotMatch(second.banner, /First start|password |created from CHORUS_ADMIN_EMAIL/);
          assert.equal(second.banner.includes(password), false, 'the password is never printed again');
          const again = await login(second.url, email, password);
          assert.equal(again.status, 200, `the admin survives the restart: ${again.text}`);
        } finally {
          await stopCleanly(second);
        }
      } finally {
        if (first.child.exitCode === null) await first.stop();
      }
    },
  );

  test('serve: CHORUS_ADMIN_EMAIL/CHORUS_ADMIN_PASSWORD create the hub admin from them', { timeout: TEST_TIMEOUT }, async () => {
    const inst = await install({ CHORUS_ADMIN_EMAIL: 'root@example.org', CHORUS_ADMIN_PASSWORD: 'operator-chosen-pw' }, { migrated: true });
    const server = await serve(inst.env);
    try {
      assert.match(server.banner, /Hub admin root@example\.org created from CHORUS_ADMIN_EMAIL\./);
      assert.doesNotMatch(server.banner, /First start|password |operator-chosen-pw/);
      const ok = await login(server.url, 'root@example.org', 'operator-chosen-pw');
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.user.isAdmin, true);
      const generated = await login(server.url, 'admin@chorus.local', 'whatever-password');
      assert.equal(generated.status, 401, 'no generated admin besides');
    } finally {
      await stopCleanly(server);
    }
  });

  test(
    'the hub killed (SIGKILL) between object write and row insert: after a restart the redelivered chunk completes, one row, its audio intact',
    { timeout: TEST_TIMEOUT },
    async () => {
      const inst = await install(
        { CHORUS_ADMIN_EMAIL: 'crash@example.org', CHORUS_ADMIN_PASSWORD: 'crash-test-password' },
        { migrated: true },
      );
      const mqttPort = String(await freePort());
      const env = { ...inst.env, MQTT_PORT: mqttPort };
      const doomed = await serve({ ...env, CHORUS_FAILPOINT: 'ingest.after-object' });
      const call = async (url: string, path: string, token: string | null, body?: unknown) => {
        const res = await fetch(`${url}/api${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers: {
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
      };
      const json = (r: { bytes: Buffer }) => JSON.parse(r.bytes.toString('utf8'));
      const token = json(
        await call(doomed.url, '/auth/login?returnToken=true', null, { email: 'crash@example.org', password: 'crash-test-password' }),
      ).token as string;
      const team = json(await call(doomed.url, '/auth/create-tenant', token, { name: 'Crash team' }));
      const reg = await call(doomed.url, '/satellites', token, { tenantId: team.id, name: 'Crashy' });
      assert.equal(reg.status, 201, reg.bytes.toString());
      const sat = { ...json(reg), tenantId: team.id };
      const body = audioBody(sat);
      const wav = Buffer.from(body.audio as string, 'base64');

      /** Connects as the satellite, publishes the chunk and resolves with its ack (or null when the hub died first). */
      const publish = async (): Promise<Record<string, unknown> | null> => {
        const c = await mqtt.connectAsync(
          `mqtt://127.0.0.1:${mqttPort}`,
          { clientId: `satellite-${sat.id}`, username: sat.mqtt.username, password: sat.mqtt.password, reconnectPeriod: 0 },
          false,
        );
        try {
          await c.subscribeAsync(`chorus/${team.id}/${sat.id}/ack`, { qos: 1 });
          const ack = new Promise<Record<string, unknown> | null>((resolve) => {
            c.on('message', (_t, m) => resolve(JSON.parse(m.toString('utf8'))));
            c.on('close', () => resolve(null));
          });
          c.publish(`chorus/${team.id}/${sat.id}/audio`, JSON.stringify(body), { qos: 1 });
          return await ack;
        } finally {
          c.end(true);
        }
      };

      assert.equal(await publish(), null, 'no ack: the hub died after writing the object');
      const died = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        doomed.child.exitCode !== null || doomed.child.signalCode !== null
          ? resolve({ code: doomed.child.exitCode, signal: doomed.child.signalCode })
          : doomed.child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      // tsx runs the hub in a child of its own and reports a killed child as exit code 128 + 9.
      assert.ok(died.signal === 'SIGKILL' || died.code === 137, `killed, not stopped: ${JSON.stringify(died)}`);
      const objects = path.join(inst.env.CHORUS_DATA_DIR, 'objects');
      const files = (dir: string): string[] =>
        fs.existsSync(dir)
          ? fs
              .readdirSync(dir, { withFileTypes: true })
              .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
          : [];
      const stored = files(objects).filter((f) => f.includes(body.chunkId));
      assert.equal(stored.length, 1, 'the object was written before the crash');

      const revived = await serve(env);
      try {
        assert.equal((await call(revived.url, `/audio/${body.chunkId}`, token)).status, 404, 'no row survived the crash');
        assert.deepEqual(await publish(), { chunkId: body.chunkId, status: 'stored' }, 'the redelivery completes');
        const audio = await call(revived.url, `/audio/${body.chunkId}`, token);
        assert.equal(audio.status, 200);
        assert.ok(audio.bytes.equals(wav), 'the stored audio is the chunk as sent');
        assert.deepEqual(await publish(), { chunkId: body.chunkId, status: 'stored' }, 'a further redelivery is acked again');
        assert.deepEqual(
          files(objects).filter((f) => f.includes(body.chunkId)),
          stored,
          'still one object, at the same key',
        );
        const sessions = json(await call(revived.url, `/sessions?tenantId=${team.id}`, token));
        assert.equal(sessions.sessions?.[0]?.chunkCount ?? sessions.sessions?.[0]?.chunks, 1, `one chunk row: ${JSON.stringify(sessions)}`);
      } finally {
        await stopCleanly(revived);
      }
    },
  );

  test('migrate: applies every migration once, then reports up to date', { timeout: TEST_TIMEOUT }, async () => {
    const inst = await install();
    const versions = listMigrations().map((m) => m.version);
    assert.ok(versions.length > 0);
    const first = await runOk(['migrate'], inst.env);
    assert.equal(first.trim(), `Applied: ${versions.join(', ')}\nSpecies catalog: ${speciesCatalog().all().length} species written`);
    const second = await runOk(['migrate'], inst.env);
    assert.equal(second.trim(), 'Database is up to date');
  });

  test(
    'CHORUS_MIGRATE=off refuses a schema behind; after `migrate`, jobs failed and jobs retry answer',
    { timeout: TEST_TIMEOUT },
    async () => {
      const inst = await install();
      const refused = await run(['jobs', 'failed'], { ...inst.env, CHORUS_MIGRATE: 'off' });
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(
        refused.stderr,
        /The database schema is behind this version of Chorus \(not applied: 0001_foundation.*run `chorus migrate` once/,
      );
      await runOk(['migrate'], inst.env);
      assert.equal((await runOk(['jobs', 'failed'], { ...inst.env, CHORUS_MIGRATE: 'off' })).trim(), 'No failed inference jobs');
      assert.equal((await runOk(['jobs', 'retry'], inst.env)).trim(), 'Retried 0 failed inference jobs');
      const bad = await run(['jobs', 'retry', 'not-a-chunk'], inst.env);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /"not-a-chunk" is not a chunk id/);
    },
  );

  test('admin create-user, make-admin and reset-password change what serve then accepts', { timeout: TEST_TIMEOUT }, async () => {
    const inst = await install({}, { migrated: true });

    const created = await runOk(
      ['admin', 'create-user', '--email', 'ann@example.org', '--name', 'Ann Operator', '--password', 'ann-first-password'],
      inst.env,
    );
    assert.match(created, /^Created ann@example\.org \([0-9a-f-]{36}\)\n$/, 'a plain user, not an admin');

    const createdAdmin = await runOk(
      ['admin', 'create-user', '--email', 'boss@example.org', '--name', 'Boss', '--password', 'boss-password-1', '--admin'],
      inst.env,
    );
    assert.match(createdAdmin, /^Created boss@example\.org \([0-9a-f-]{36}\) as hub admin\n$/);

    const taken = await run(
      ['admin', 'create-user', '--email', 'ann@example.org', '--name', 'Ann Again', '--password', 'another-password'],
      inst.env,
    );
    assert.notEqual(taken.code, 0);
    assert.match(taken.stderr, /EMAIL_TAKEN: An account with this email exists/);

    const shortPw = await run(['admin', 'create-user', '--email', 'cy@example.org', '--password', 'x'], inst.env);
    assert.notEqual(shortPw.code, 0);
    assert.match(shortPw.stderr, /VALIDATION_FAILED: password must be/);

    const noEmail = await run(['admin', 'make-admin'], inst.env);
    assert.notEqual(noEmail.code, 0);
    assert.match(noEmail.stderr, /--email is required/);

    const unknownUser = await run(['admin', 'make-admin', '--email', 'ghost@example.org'], inst.env);
    assert.notEqual(unknownUser.code, 0);
    assert.match(unknownUser.stderr, /NOT_FOUND: No user with email ghost@example\.org/);

    const unknownReset = await run(['admin', 'reset-password', '--email', 'ghost@example.org'], inst.env);
    assert.notEqual(unknownReset.code, 0);
    assert.match(unknownReset.stderr, /NOT_FOUND/);

    const promoted = await runOk(['admin', 'make-admin', '--email', 'ann@example.org'], inst.env);
    assert.equal(promoted.trim(), 'ann@example.org is now a hub admin');

    const revoked = await runOk(['admin', 'make-admin', '--email', 'boss@example.org', '--revoke'], inst.env);
    assert.equal(revoked.trim(), 'boss@example.org is no longer a hub admin');

    const reset = await runOk(['admin', 'reset-password', '--email', 'ann@example.org'], inst.env);
    const generated = /^New password for ann@example\.org: (\S+)\n$/.exec(reset)?.[1];
    assert.ok(generated, `a generated password is printed: ${reset}`);
    assert.notEqual(generated, 'ann-first-password');

    const chosen = await runOk(['admin', 'reset-password', '--email', 'boss@example.org', '--password', 'boss-password-2'], inst.env);
    assert.equal(chosen.trim(), 'Password of boss@example.org changed');
    assert.doesNotMatch(chosen, /boss-password-2/, 'a chosen password is not echoed');

    const server = await serve(inst.env);
    try {
      // Ann is a hub admin, so the first start generated none.
      assert.doesNotMatch(server.banner, /First start|password /);
      const ann = await login(server.url, 'ann@example.org', generated);
      assert.equal(ann.status, 200, `the generated password works: ${ann.text}`);
      assert.equal(ann.body.user.name, 'Ann Operator');
      assert.equal(ann.body.user.isAdmin, true, 'make-admin took effect');
      const annOld = await login(server.url, 'ann@example.org', 'ann-first-password');
      assert.equal(annOld.status, 401, 'the old password no longer works');

      const boss = await login(server.url, 'boss@example.org', 'boss-password-2');
      assert.equal(boss.status, 200, boss.text);
      assert.equal(boss.body.user.isAdmin, false, 'make-admin --revoke took effect');
      assert.equal((await login(server.url, 'boss@example.org', 'boss-password-1')).status, 401);
    } finally {
      await stopCleanly(server);
    }
  });

  test('a bad configuration value exits non-zero with a clear message', { timeout: TEST_TIMEOUT }, async () => {
    const inst = await install();
    for (const command of [['serve'], ['migrate'], ['admin', 'make-admin', '--email', 'a@example.org']]) {
      const r = await run(command, { ...inst.env, PORT: 'abc' });
      assert.equal(r.code, 1, `${command.join(' ')} exits 1`);
      // The hub says it in its log (one JSON line, level fatal); a command in plain words on stderr.
      const said =
        command[0] === 'serve'
          ? logLines(r.stdout)
              .map((l) => `${l.level} ${l.msg}`)
              .join('\n')
          : r.stderr.trim();
      assert.equal(said, `${command[0] === 'serve' ? '60 ' : ''}Configuration error: PORT must be a whole number, got "abc"`);
      assert.doesNotMatch(r.stdout, /listening/);
    }
    const db = await run(['migrate'], { ...inst.env, DATABASE_URL: 'mysql://root:hunter2@localhost/chorus' });
    assert.equal(db.code, 1);
    assert.match(db.stderr, /^Configuration error: DATABASE_URL must use postgres: or postgresql:, got "mysql:"/);
    assert.doesNotMatch(db.stderr, /hunter2/);
    const pair = await run(['serve'], { ...inst.env, CHORUS_ADMIN_EMAIL: 'root@example.org' });
    assert.equal(pair.code, 1);
    assert.match(logText(pair.stdout), /^Configuration error: CHORUS_ADMIN_EMAIL and CHORUS_ADMIN_PASSWORD must be set together/);
  });

  test(
    'unknown commands fail with the usage; help prints it; bin/chorus.mjs passes exit codes through',
    { timeout: TEST_TIMEOUT },
    async () => {
      const inst = await install();
      const unknown = await run(['frobnicate'], inst.env);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /Unknown command "frobnicate"/);
      assert.match(unknown.stderr, /admin reset-password --email E/);

      const unknownAdmin = await run(['admin', 'explode', '--email', 'a@example.org'], inst.env);
      assert.equal(unknownAdmin.code, 1);
      assert.match(unknownAdmin.stderr, /Unknown admin command "explode"/);

      const help = await run(['help'], inst.env);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^chorus <command>/);

      const binHelp = await run(['--help'], inst.env, { viaBin: true });
      assert.equal(binHelp.code, 0);
      assert.match(binHelp.stdout, /migrate\s+apply database migrations and exit/);
      const binBad = await run(['serve'], { ...inst.env, PORT: 'abc' }, { viaBin: true });
      assert.equal(binBad.code, 1);
      // serve says it in its log (a JSON line on stdout).
      assert.match(logText(binBad.stdout), /^Configuration error: PORT/m);
    },
  );
});
