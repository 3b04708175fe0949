import type { Db } from './infra/db/types.ts';
import { migrate, pendingMigrations } from './infra/db/migrate.ts';
import { syncSpeciesCatalog } from './modules/species/catalog-sync.ts';
import { speciesCatalog } from './modules/species/catalog.ts';

/**
 * Migrations, then reference data kept like the schema: the species table follows the bundled catalog.
 * Returns the migrations applied and how many species rows were written (`chorus migrate` reports them).
 */
export async function prepareDatabase(db: Db, now: Date): Promise<{ applied: string[]; species: number }> {
  const applied = await migrate(db);
  const species = await syncSpeciesCatalog(db, speciesCatalog(), now);
  return { applied, species };
}

export class SchemaBehindError extends Error {}

/**
 * At start: migrate and sync the catalog (CHORUS_MIGRATE=on, the default), or only check that the
 * schema is current (off: a rolling upgrade runs `chorus migrate` once, before new processes start).
 */
export async function prepareOrCheckDatabase(
  db: Db,
  now: Date,
  migrateAtStart: boolean,
): Promise<{ applied: string[]; species: number } | null> {
  if (migrateAtStart) return prepareDatabase(db, now);
  const pending = await pendingMigrations(db);
  if (pending.length > 0) {
    throw new SchemaBehindError(
      `The database schema is behind this version of Chorus (not applied: ${pending.join(', ')}). ` +
        'CHORUS_MIGRATE=off: run `chorus migrate` once (npm run chorus -- migrate), then start the processes again.',
    );
  }
  return null;
}
