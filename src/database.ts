import type { Db } from './infra/db/types.ts';
import { migrate } from './infra/db/migrate.ts';
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
