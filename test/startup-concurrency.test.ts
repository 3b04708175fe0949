/**
 * Start-up steps run by several processes at once (issue 21 item 4): two api processes starting
 * together on an empty database both come up. Each "process" here is its own connection pool on
 * one PostgreSQL schema, running the migrations and then the first admin's bootstrap as
 * `chorus serve` does, twice at the same moment. Needs DATABASE_URL (skipped without it: PGlite is
 * one process's database, nothing else can start beside it). Also: CHORUS_MIGRATE=off refuses a
 * schema that is behind, and starts on a current one.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServices } from '../src/services.ts';
import { closeInfra, createInfra } from '../src/infra/index.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { listMigrations, pendingMigrations } from '../src/infra/db/migrate.ts';
import { prepareDatabase, prepareOrCheckDatabase, SchemaBehindError } from '../src/database.ts';
import { ensureFirstAdmin } from '../src/bootstrap.ts';
import type { Infra } from '../src/infra/types.ts';
import { sqlOf } from './helpers/sql.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const skip = DATABASE_URL ? false : 'DATABASE_URL is not set: concurrent start-up needs PostgreSQL (PGlite serves one process)';

const cleanups: Array<() => Promise<void>> = [];

async function freshSchema(): Promise<string> {
  const schema = `startup_${crypto.randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  await c.query(`CREATE SCHEMA ${schema}`);
  await c.end();
  cleanups.push(async () => {
    const d = new pg.Client({ connectionString: DATABASE_URL });
    await d.connect();
    await d.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await d.end();
  });
  return schema;
}

/** One api process's parts on the schema: its own pool, no broker. */
async function processOn(schema: string, extra: Record<string, string> = {}): Promise<Infra> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-startup-'));
  const config = loadConfig({
    CHORUS_DATA_DIR: dataDir,
    CHORUS_SECRET: 's'.repeat(40),
    DATABASE_URL: DATABASE_URL!,
    LOG_LEVEL: 'silent',
    ...extra,
  });
  const infra = await createInfra(config, { db: createPostgresDb({ url: DATABASE_URL!, schema, poolSize: 4 }), broker: false });
  cleanups.push(async () => {
    await closeInfra(infra);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return infra;
}

/** What `chorus serve` does before listening: the schema, then the first hub admin. */
async function startUp(infra: Infra) {
  await prepareOrCheckDatabase(infra.db, infra.clock.now(), infra.config.migrate);
  return ensureFirstAdmin(infra.config, createServices(infra));
}

const admins = async (infra: Infra) =>
  (await sqlOf(infra.db).query<{ email: string }>('SELECT email FROM users WHERE is_admin')).map((r) => r.email);

describe('start-up steps run concurrently', { skip }, () => {
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  test('two processes migrate and bootstrap a generated admin at once: both start, one admin', async () => {
    const schema = await freshSchema();
    const [a, b] = await Promise.all([processOn(schema), processOn(schema)]);
    const results = await Promise.all([startUp(a), startUp(b)]);
    assert.deepEqual(results.map((r) => r.kind).sort(), ['existing', 'generated'], JSON.stringify(results));
    assert.deepEqual(await admins(a), ['admin@chorus.local']);
    assert.deepEqual(await pendingMigrations(a.db), []);
    const applied = await sqlOf(a.db).query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(
      applied.map((r) => r.version),
      listMigrations().map((m) => m.version),
      'each migration once',
    );
    // Started again, both find it there.
    assert.deepEqual(
      (await Promise.all([startUp(a), startUp(b)])).map((r) => r.kind),
      ['existing', 'existing'],
    );
  });

  test('two processes bootstrap the admin of CHORUS_ADMIN_EMAIL at once: both start, one admin', async () => {
    const schema = await freshSchema();
    const env = { CHORUS_ADMIN_EMAIL: 'Root@Example.org', CHORUS_ADMIN_PASSWORD: 'a-long-password-1' };
    const [a, b] = await Promise.all([processOn(schema, env), processOn(schema, env)]);
    const results = await Promise.all([startUp(a), startUp(b)]);
    assert.ok(
      results.every((r) => r.kind === 'from_env' || r.kind === 'existing'),
      JSON.stringify(results),
    );
    assert.deepEqual(
      (await admins(a)).map((e) => e.toLowerCase()),
      ['root@example.org'],
    );
    assert.equal((await sqlOf(a.db).one<{ n: number }>('SELECT count(*)::int AS n FROM users')).n, 1);
  });

  test('CHORUS_MIGRATE=off: refuses to start on a schema that is behind, starts once `chorus migrate` ran', async () => {
    const schema = await freshSchema();
    const off = await processOn(schema, { CHORUS_MIGRATE: 'off' });
    await assert.rejects(startUp(off), (err: unknown) => {
      assert.ok(err instanceof SchemaBehindError);
      assert.match(err.message, /schema is behind .*not applied: 0001_foundation.*chorus migrate/s);
      return true;
    });
    await prepareDatabase(off.db, new Date());
    assert.equal((await startUp(off)).kind, 'generated');
  });
});
