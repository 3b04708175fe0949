/**
 * Starts a real hub for a test file: the whole app on an ephemeral port, embedded parts by
 * default, PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set. Each hub gets its own
 * database (a fresh PGlite restored from a migrated snapshot, or a PostgreSQL database copied from a
 * migrated template, ./pg-template.ts)
 * and its own key prefix, so test files run in parallel without seeing each other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { loadConfig, type Config } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import type { Services } from '../../src/services.ts';
import type { Infra } from '../../src/infra/types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { createPgliteDb } from '../../src/infra/db/pglite.ts';
import { createPostgresDb } from '../../src/infra/db/postgres.ts';
import { closeInfra, createInfra } from '../../src/infra/index.ts';
import type { Db } from '../../src/infra/db/index.ts';
import { prepareDatabase } from '../../src/database.ts';
import { satelliteCredentialCheck } from '../../src/modules/satellites/broker-credentials.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import type { Permission } from '../../src/core/permissions.ts';
import type { FastifyInstance } from 'fastify';
import { sqlOf, type Sql } from './sql.ts';
import { freshDatabase, migrationsHash } from './pg-template.ts';

export const INTERNAL_KEY = 'internal-key-for-tests-0123456789abcdef';

export interface Hub {
  url: string;
  clock: ManualClock;
  infra: Infra;
  /** Ad-hoc SQL on the hub's database, for assertions (./sql.ts). */
  sql: Sql;
  services: Services;
  registry: Permission[];
  app: FastifyInstance;
  /** The background parts (ingester subscribed, offline monitor to tick). */
  runtime: Runtime;
  close(): Promise<void>;
}

const root = path.resolve(import.meta.dirname, '../..');

async function pgliteFromSnapshot(): Promise<Db> {
  const hash = migrationsHash();
  const dir = path.join(root, '.tmp');
  // Not gzipped: PGlite loads the plain tar about 0.2 s faster, and every embedded test hub loads it.
  const file = path.join(dir, `pglite-${hash}.tar`);
  if (!fs.existsSync(file)) {
    const { db, dump } = await createPgliteDb({ dataDir: null });
    await prepareDatabase(db, new Date());
    const snapshot = await dump('none');
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, snapshot);
    fs.renameSync(tmp, file);
    return db;
  }
  const { db } = await createPgliteDb({ dataDir: null, loadDataDir: fs.readFileSync(file) });
  // The snapshot is keyed by the migrations; the species catalog may have changed since.
  await prepareDatabase(db, new Date());
  return db;
}

async function postgresDatabase(url: string): Promise<{ db: Db; drop: () => Promise<void> }> {
  const made = await freshDatabase(url);
  const db = createPostgresDb({ url: made.url, poolSize: 8 });
  // The template is keyed by the migrations; the species catalog may have changed since (a no-op otherwise).
  await prepareDatabase(db, new Date());
  return { db, drop: made.drop };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-test-'));
  return loadConfig({
    CHORUS_DATA_DIR: dataDir,
    CHORUS_SECRET: 'test-secret-0123456789abcdef0123456789abcdef',
    CHORUS_INTERNAL_KEY: INTERNAL_KEY,
    CHORUS_PUBLIC_URL: 'http://chorus.test',
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    CHORUS_KV_PREFIX: `chorus-test:${crypto.randomBytes(4).toString('hex')}:`,
    LOG_LEVEL: 'silent',
    // Every test hub gets its own broker listeners on free ports.
    MQTT_PORT: '0',
    MQTT_WS_PORT: '0',
    MQTT_HOST: '127.0.0.1',
    // No test reaches the real photo providers; species-images tests point them at local servers.
    IMAGES_PROVIDERS: 'off',
    // No test reaches the real weather or eBird services: port 9 (discard) refuses at once.
    WEATHER_API_URL: 'http://127.0.0.1:9',
    EBIRD_API_URL: 'http://127.0.0.1:9',
    ...overrides,
  });
}

/** `port`: listen there instead of a free port, for a test whose hub must know its own public URL (CHORUS_PUBLIC_URL) before it starts. */
export async function startHub(opts: { env?: Record<string, string>; port?: number } = {}): Promise<Hub> {
  const config = testConfig(opts.env);
  const clock = new ManualClock();
  let drop = async () => {};
  let db: Db;
  if (config.databaseUrl) {
    const made = await postgresDatabase(config.databaseUrl);
    db = made.db;
    drop = made.drop;
  } else {
    db = await pgliteFromSnapshot();
  }
  const infra = await createInfra(config, { db, clock, credentialCheck: satelliteCredentialCheck });
  const { app, services, registry } = await buildApp(infra, { strictAudit: true, logger: false });
  await app.listen({ port: opts.port ?? 0, host: '127.0.0.1' });
  // Tests drive the schedules themselves (alerting.scheduler.tick()) after moving the clock.
  const stopRuntime = startRuntime(infra, services, { error: () => {} }, { timers: false });
  await stopRuntime.ready;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    clock,
    infra,
    sql: sqlOf(infra.db),
    services,
    registry,
    app,
    runtime: stopRuntime,
    async close() {
      await stopRuntime();
      await app.close();
      await closeInfra(infra);
      await drop();
      fs.rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}
