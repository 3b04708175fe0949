import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './types.ts';
import { col, shape } from './shape.ts';

const Exists = shape({ found: col.int() });
const TableName = shape({ name: col.nullable(col.text()) });
const Version = shape({ version: col.text() });

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../db/migrations');

export interface Migration {
  version: string;
  sql: string;
  /** First line `-- chorus:postgres-only`: recorded as applied on PGlite without running (issue 37). */
  postgresOnly: boolean;
}

const POSTGRES_ONLY = /^-- chorus:postgres-only\b/;

export function listMigrations(): Migration[] {
  return fs
    .readdirSync(migrationsDir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = fs.readFileSync(path.join(migrationsDir, f), 'utf8');
      return { version: f.replace(/\.sql$/, ''), sql, postgresOnly: POSTGRES_ONLY.test(sql) };
    });
}

/** One lock for every step of migrating: two processes starting at once take turns (issue 21). */
const MIGRATION_LOCK = 734112;

/**
 * Applies pending migrations in order, each in its own transaction. Migrations only move
 * forward. An advisory lock keeps two processes starting at once from racing: it is taken by
 * the bookkeeping table's creation too (two concurrent `CREATE TABLE IF NOT EXISTS` can both
 * find it missing, and one then fails on the catalog's unique index).
 */
export async function migrate(db: Db, opts: { upTo?: string } = {}): Promise<string[]> {
  await db.tx(async (tx) => {
    await tx.run(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.run(`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
  });
  const applied: string[] = [];
  // upTo (a version's number, e.g. '0036'): a test stops there to fill the database before a later one runs.
  for (const m of listMigrations().filter((m) => !opts.upTo || m.version.slice(0, 4) <= opts.upTo!)) {
    const done = await db.tx(async (tx) => {
      await tx.run(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      const exists = await tx.maybeOne(Exists, 'SELECT 1 AS found FROM schema_migrations WHERE version = $1', [m.version]);
      if (exists) return false;
      // The embedded database keeps the shape the earlier migrations gave it (one detections table).
      if (!(m.postgresOnly && db.kind === 'pglite')) await tx.exec(m.sql);
      await tx.run('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}

/**
 * The migrations this version knows that the database has not applied (all of them on an empty
 * database). A process started with CHORUS_MIGRATE=off refuses to start while any is pending.
 */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const table = await db.maybeOne(TableName, `SELECT to_regclass('schema_migrations')::text AS name`);
  const done = new Set(table?.name ? (await db.query(Version, 'SELECT version FROM schema_migrations')).map((r) => r.version) : []);
  return listMigrations()
    .map((m) => m.version)
    .filter((v) => !done.has(v));
}
