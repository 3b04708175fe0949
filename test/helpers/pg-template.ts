/**
 * A PostgreSQL database per test hub, copied from a migrated template. Migrating a fresh schema
 * (every migration plus the 6,522-species catalog) cost each hub about 1.5 s of the server's time;
 * `CREATE DATABASE … TEMPLATE` copies the migrated one in about 0.2 s. The template is named by a
 * hash of the migrations, built once by whichever test process gets there first (an advisory
 * lock makes the others wait), and renamed into place only when complete.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { listMigrations } from '../../src/infra/db/migrate.ts';
import { createPostgresDb } from '../../src/infra/db/postgres.ts';
import { prepareDatabase } from '../../src/database.ts';

const TEMPLATE_LOCK = 734113;
/** Test databases are named chorus_t_<unix seconds>_<random>, so a later run can drop old leftovers. */
export const TEST_DB_PREFIX = 'chorus_t_';

/** Names a migrated snapshot (PGlite) or template (PostgreSQL) by what the migrations say. */
export const migrationsHash = () =>
  crypto
    .createHash('sha256')
    .update(
      listMigrations()
        .map((m) => m.version + m.sql)
        .join('\n'),
    )
    .digest('hex')
    .slice(0, 16);

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function ensureTemplate(url: string): Promise<string> {
  const name = `chorus_tmpl_${migrationsHash()}`;
  await withClient(url, async (c) => {
    const exists = async () => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (await exists()) return;
    await c.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      if (await exists()) return;
      const building = `${name}_build`;
      await c.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${building}`);
      const db = createPostgresDb({ url: withDatabase(url, building), poolSize: 2 });
      try {
        await prepareDatabase(db, new Date());
      } finally {
        await db.close();
      }
      await c.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return name;
}

/**
 * A new database copied from the migrated template. `drop` removes it; the DROP runs on the
 * server while the caller goes on (the open connection keeps the test process alive until it
 * ends), and `dropOldTestDatabases` removes any a crashed run left.
 */
export async function freshDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const template = await ensureTemplate(url);
  const name = `${TEST_DB_PREFIX}${Math.floor(Date.now() / 1000)}_${crypto.randomBytes(5).toString('hex')}`;
  await withClient(url, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  return {
    url: withDatabase(url, name),
    drop: async () => {
      void withClient(url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    },
  };
}

/** Drops test databases and stale templates older than `maxAgeSeconds` (a crashed run's leftovers). */
export async function dropOldTestDatabases(url: string, maxAgeSeconds: number): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const current = `chorus_tmpl_${migrationsHash()}`;
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'chorus\\_t\\_%' OR datname LIKE 'chorus\\_tmpl\\_%'`,
    );
    let dropped = 0;
    for (const { datname } of rows) {
      const born = Number(/^chorus_t_(\d+)_/.exec(datname)?.[1] ?? NaN);
      const old = datname.startsWith('chorus_tmpl_') ? datname !== current && !datname.endsWith('_build') : now - born > maxAgeSeconds;
      if (!old) continue;
      await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
      dropped++;
    }
    return dropped;
  });
}
