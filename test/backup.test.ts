// test/run.mjs: the same on any parts — backup and restore cover embedded parts only; every hub here is on a file data dir.
/**
 * `chorus backup` and `chorus restore` (issue 21, "Backups") round trip on embedded parts: a hub
 * on a file data dir (PGlite in it, objects as files, a generated secret) with a team,
 * detections and audio; backed up by the command while the hub is stopped; then changed;
 * restored into a fresh dir; a hub started there holds the same rows and the same object
 * bytes, and a session token signed before the backup still opens the audio (the secret came back).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { ManualClock } from '../src/core/clock.ts';
import { closeInfra, createInfra } from '../src/infra/index.ts';
import { createPgliteDb } from '../src/infra/db/pglite.ts';
import type { Db } from '../src/infra/db/index.ts';
import { prepareDatabase } from '../src/database.ts';
import { satelliteCredentialCheck } from '../src/modules/satellites/broker-credentials.ts';
import { startRuntime } from '../src/runtime.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { INTERNAL_KEY, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { sqlOf } from './helpers/sql.ts';
import { runChorus } from './helpers/chorus-cli.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-backup-'));
const dirA = path.join(tmp, 'a');
const dirB = path.join(tmp, 'b');
const archive = path.join(tmp, 'hub.tar.gz');

/** A hub as `chorus serve` builds it, on a file data dir (no CHORUS_SECRET: the secret file is made). */
async function fileHub(dataDir: string): Promise<Hub> {
  const config = loadConfig({
    CHORUS_DATA_DIR: dataDir,
    CHORUS_INTERNAL_KEY: INTERNAL_KEY,
    CHORUS_PUBLIC_URL: 'http://chorus.test',
    LOG_LEVEL: 'silent',
    MQTT_PORT: '0',
    MQTT_WS_PORT: '0',
    MQTT_HOST: '127.0.0.1',
  });
  const clock = new ManualClock();
  const infra = await createInfra(config, { clock, credentialCheck: satelliteCredentialCheck });
  await prepareDatabase(infra.db, clock.now());
  const { app, services, registry } = await buildApp(infra, { strictAudit: true, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const runtime = startRuntime(infra, services, { error: () => {} }, { timers: false });
  await runtime.ready;
  const port = (app.server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    clock,
    infra,
    sql: sqlOf(infra.db),
    services,
    registry,
    app,
    runtime,
    async close() {
      await runtime();
      await app.close();
      await closeInfra(infra);
    },
  };
}

/** Every row of every table, each table's rows in a stable order. */
async function rows(db: Db): Promise<Record<string, string[]>> {
  const tables = await sqlOf(db).query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  const out: Record<string, string[]> = {};
  for (const { name } of tables) out[name] = (await sqlOf(db).query(`SELECT * FROM "${name}"`)).map((r) => JSON.stringify(r)).sort();
  return out;
}

/** Every object file by key, temp files aside. */
function objects(dataDir: string): Map<string, Buffer> {
  const base = path.join(dataDir, 'objects');
  const out = new Map<string, Buffer>();
  if (!fs.existsSync(base)) return out;
  for (const rel of (fs.readdirSync(base, { recursive: true }) as string[]).sort()) {
    const file = path.join(base, rel);
    if (fs.statSync(file).isFile()) out.set(rel.split(path.sep).join('/'), fs.readFileSync(file));
  }
  return out;
}

/** `chorus <args>` to completion, as an operator runs it (helpers/chorus-cli.ts). */
const chorus = (args: string[], env: Record<string, string> = {}) => runChorus(args, env);

async function audio(url: string, chunkId: string, as: TestUser): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(`${url}/api/audio/${chunkId}`, { headers: { authorization: `Bearer ${as.token}` } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

describe('chorus backup and restore', { concurrency: false, timeout: 300_000 }, () => {
  let owner: TestUser;
  const chunkIds: string[] = [];
  let expectedRows: Record<string, string[]>;
  let expectedObjects: Map<string, Buffer>;
  let secret: string;

  before(async () => {
    const hub = await fileHub(dirA);
    try {
      const f = factories(hub);
      owner = await f.user();
      const team = await f.team(owner);
      await f.member(team, 'viewer');
      const sat = await makeSatellite(hub, team, owner);
      for (let i = 0; i < 3; i++) {
        const chunk = await makeChunk(hub, {
          satellite: sat,
          audio: makeWav(Int16Array.from({ length: 4800 * (i + 1) }, (_, j) => Math.round(8000 * Math.sin(j / (i + 2))))),
        });
        chunkIds.push(chunk.id);
        await makeDetection(hub, { chunk, confidence: 0.5 + i / 10 });
        hub.clock.advanceMinutes(1);
      }
      expectedRows = await rows(hub.infra.db);
    } finally {
      await hub.close();
    }
    expectedObjects = objects(dirA);
    secret = fs.readFileSync(path.join(dirA, 'secret'), 'utf8');
    assert.equal(expectedObjects.size, 3);
    assert.equal(expectedRows.detections.length, 3);
  });

  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('backup refuses while the data dir is in use', async () => {
    const lock = path.join(dirA, 'chorus.lock');
    fs.writeFileSync(
      lock,
      JSON.stringify({ pid: process.pid, hostname: os.hostname(), purpose: 'serve', since: new Date().toISOString() }),
    );
    try {
      const r = await chorus(['backup', '--out', archive], { CHORUS_DATA_DIR: dirA });
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`in use: chorus serve runs as process ${process.pid}`));
      assert.equal(fs.existsSync(archive), false);
    } finally {
      fs.rmSync(lock);
    }
  });

  test('backup and restore refuse PostgreSQL and S3 deployments, pointing at their tools', async () => {
    const pg = await chorus(['backup', '--out', archive], { CHORUS_DATA_DIR: dirA, DATABASE_URL: 'postgres://x@localhost/x' });
    assert.equal(pg.code, 1);
    assert.match(pg.stderr, /pg_dump/);
    const s3 = await chorus(['restore', archive], { CHORUS_DATA_DIR: dirB, S3_URL: 'http://localhost:9000' });
    assert.equal(s3.code, 1);
    assert.match(s3.stderr, /S3_URL is set/);
  });

  test('back up, change things, restore into a fresh dir: same rows, same objects, same secret', async () => {
    const b = await chorus(['backup', '--out', archive], { CHORUS_DATA_DIR: dirA });
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /objects: {2}3 /);
    assert.equal(fs.existsSync(path.join(dirA, 'chorus.lock')), false, 'the lock is released');

    // Change things after the backup: a detection deleted, an object gone, another changed.
    const changed = await createPgliteDb({ dataDir: path.join(dirA, 'db') });
    await sqlOf(changed.db).query('DELETE FROM detections WHERE chunk_id = $1', [chunkIds[0]]);
    await sqlOf(changed.db).query(`UPDATE users SET name = 'Changed' WHERE id = $1`, [owner.id]);
    await changed.db.close();
    const keys = [...expectedObjects.keys()];
    fs.rmSync(path.join(dirA, 'objects', keys[0]));
    fs.writeFileSync(path.join(dirA, 'objects', keys[1]), 'overwritten');

    // Restore refuses a data dir in use by other data; a fresh one is fine.
    const refused = await chorus(['restore', archive], { CHORUS_DATA_DIR: dirA });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /not empty/);
    const r = await chorus(['restore', archive, '--data', dirB]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /row counts checked/);

    assert.equal(fs.readFileSync(path.join(dirB, 'secret'), 'utf8'), secret);
    assert.equal((fs.statSync(path.join(dirB, 'secret')).mode & 0o777).toString(8), '600');
    const restoredObjects = objects(dirB);
    assert.deepEqual([...restoredObjects.keys()], [...expectedObjects.keys()]);
    for (const [key, bytes] of expectedObjects) assert.ok(restoredObjects.get(key)!.equals(bytes), `object ${key} byte for byte`);

    const hub = await fileHub(dirB);
    try {
      assert.deepEqual(await rows(hub.infra.db), expectedRows);
      // The token was signed with the backed-up secret before the backup: still good.
      for (const [i, id] of chunkIds.entries()) {
        const res = await audio(hub.url, id, owner);
        assert.equal(res.status, 200, `audio ${i}`);
        assert.ok(res.body.equals(expectedObjects.get(keys.find((k) => k.includes(id))!)!));
      }
      const me = await client(hub.url).get('/auth/me', owner);
      assert.equal(me.status, 200);
      assert.ok(me.text.includes(JSON.stringify(owner.name)), 'the owner as before the change');
    } finally {
      await hub.close();
    }
  });

  test('restore --force replaces a non-empty data dir', async () => {
    const r = await chorus(['restore', archive, '--force'], { CHORUS_DATA_DIR: dirA });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...objects(dirA).keys()], [...expectedObjects.keys()]);
    const { db } = await createPgliteDb({ dataDir: path.join(dirA, 'db') });
    try {
      assert.equal((await sqlOf(db).one<{ n: number }>('SELECT count(*)::int AS n FROM detections')).n, 3);
    } finally {
      await db.close();
    }
  });
});
