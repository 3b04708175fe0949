import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './types.ts';

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../db/migrations');

export interface Migration {
  version: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return fs
    .readdirSync(migrationsDir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: fs.readFileSync(path.join(migrationsDir, f), 'utf8') }));
}

/**
 * Applies pending migrations in order, each in its own transaction. Migrations only move
 * forward. An advisory lock keeps two processes starting at once from racing.
 */
export async function migrate(db: Db): Promise<string[]> {
  await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied: string[] = [];
  for (const m of listMigrations()) {
    const done = await db.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(734112)');
      const exists = await tx.maybeOne('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (exists) return false;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}
