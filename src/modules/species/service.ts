/**
 * The species table (docs/model.md "The species table"): the catalog's species and the models'
 * own, and the mapping of each model's outputs into them.
 */
import type { Db } from '../../infra/db/index.ts';
import { createSpeciesRepo, type LabelRow } from './repo.ts';

export type { LabelRow };

export function createSpeciesService(deps: { db: Db }) {
  const repo = createSpeciesRepo(deps.db);
  return {
    /** A species of the table by code (any case), read in `tx` when given. */
    find: (code: string, tx: Db = deps.db) => createSpeciesRepo(tx).find(code),

    /** A page of a model's mapped labels: `search` in the label, code or names; `own` only its own species. */
    labelsPage: repo.labelsPage,

    label: repo.label,

    setLabelSpecies: repo.setLabelSpecies,
  };
}

export type SpeciesService = ReturnType<typeof createSpeciesService>;
