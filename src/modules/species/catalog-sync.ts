/**
 * Keeps the species table in step with the bundled catalog, and maps models' labels into it
 * (docs/model.md "The species table").
 */
import crypto from 'node:crypto';
import type { Db } from '../../infra/db/index.ts';
import type { ModelLabel } from '../../infra/classifier/types.ts';
import { type LabelSpecies, speciesOfLabel } from './label-species.ts';
import type { SpeciesCatalog } from './catalog.ts';
import { createSpeciesRepo } from './repo.ts';

/**
 * Writes the catalog's species into the table when they differ from what was last written
 * (a fingerprint of codes, names and categories in order). Run at start-up by every hub process;
 * returns how many rows were written (0 when nothing changed).
 */
export async function syncSpeciesCatalog(db: Db, catalog: SpeciesCatalog, now: Date): Promise<number> {
  const entries = catalog
    .all()
    .map((s) => ({ code: s.code, scientificName: s.scientificName, commonName: s.commonName, category: s.category }));
  const fingerprint = crypto.createHash('sha256').update(JSON.stringify(entries)).digest('hex');
  return createSpeciesRepo(db).writeCatalog(entries, fingerprint, now);
}

/** Maps every label of a model into the species table: the catalog's species, else the model's own. */
export function mapModelLabels(tx: Db, catalog: SpeciesCatalog, modelId: string, labels: readonly ModelLabel[], now: Date): Promise<void> {
  return createSpeciesRepo(tx).mapLabels(
    tx,
    modelId,
    labels.map((l) => ({ label: l.label, species: speciesOfLabel(catalog, l) })),
    now,
  );
}

/**
 * Maps a model's labels unless all `outputs` are mapped already (the first mapping stands): the
 * built-in model on a fresh hub, or a model uploaded before the species table. `labels` is only
 * read when the model needs mapping.
 */
export async function ensureModelMapped(
  db: Db,
  catalog: SpeciesCatalog,
  modelId: string,
  outputs: number,
  labels: () => Promise<readonly ModelLabel[]>,
  now: Date,
): Promise<void> {
  if ((await createSpeciesRepo(db).mappedCount(modelId)) >= outputs) return;
  const list = await labels();
  await db.tx((tx) => mapModelLabels(tx, catalog, modelId, list, now));
}

/** What each output of a loaded model means, from the species table, in output order. */
export function createLabelSpecies(db: Db, catalog: () => SpeciesCatalog, clock: { now(): Date }) {
  const repo = createSpeciesRepo(db);
  return async (modelId: string, labels: readonly ModelLabel[]): Promise<LabelSpecies[]> => {
    await ensureModelMapped(db, catalog(), modelId, labels.length, async () => labels, clock.now());
    const rows = await repo.labelsOf(modelId);
    return rows.map((r) => ({
      speciesCode: r.speciesCode,
      scientificName: r.scientificName,
      commonName: r.commonName,
      category: r.category,
      known: r.source === 'catalog',
    }));
  };
}
