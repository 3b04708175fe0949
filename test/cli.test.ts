/**
 * The command line, run as an operator runs it: real child processes of `tsx src/main.ts`
 * (what `npm start` and bin/chorus.mjs run) on a temporary data dir with embedded PGlite, or
 * on a fresh PostgreSQL schema when DATABASE_URL is set (helpers/cli-hub.ts). Servers are stopped
 * with SIGTERM. This file: `serve`, a crash mid-ingest, `migrate` and `jobs`; cli-admin.test.ts:
 * `admin`, bad configuration, usage.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import mqtt from 'mqtt';
import { listMigrations } from '../src/infra/db/migrate.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { audioBody } from './helpers/raw-satellite.ts';
import { freePort } from './helpers/ports.ts';
import { cliFixture, DATABASE_URL, REDIS_URL, root, TEST_TIMEOUT } from './helpers/cli-hub.ts';

describe('cli', { timeout: TEST_TIMEOUT * 5 }, () => {
  const { install, run, runOk, serve, login, stopCleanly, cleanup } = cliFixture();
  before(() => {
    assert.ok(fs.existsSync(path.join(root, 'node_modules', 'tsx')), 'tsx is installed');
  });
  after(() => cleanup());

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
});
