/**
 * Which species a model's label stands for. Labels come in two forms: BirdNET's
 * `Scientific name_Common name`, and Perch's class lists, one eBird species code per line
 * (`ostric2`). They map into the species catalog by exact label, else (a single word) by species
 * code, older eBird codes included, else by scientific name; a label the catalog does not know
 * keeps its own names, the catalog's derived code (`x-` + scientific name, or + the code) and
 * category `other_animal` (docs/model.md).
 */
import type { ModelLabel } from '../../infra/classifier/types.ts';
import type { SpeciesCatalog, SpeciesCategory } from './catalog.ts';

export interface LabelSpecies {
  speciesCode: string;
  scientificName: string;
  commonName: string;
  category: SpeciesCategory;
  /** False for a label the catalog does not know. */
  known: boolean;
}

/** The catalog's derived code for names it does not know (docs/model.md "Species code"). */
export const derivedCode = (scientificName: string) =>
  `x-${scientificName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')}`;

/** A label that may be a species code: one word, no `_` (a BirdNET label always has one). */
const CODE_LIKE = /^[A-Za-z0-9-]{2,16}$/;

export function speciesOfLabel(catalog: SpeciesCatalog, l: ModelLabel): LabelSpecies {
  const s =
    catalog.byLabel(l.label) ??
    (CODE_LIKE.test(l.label) ? catalog.byCode(l.label) : undefined) ??
    catalog.byScientificName(l.scientificName);
  if (s) return { speciesCode: s.code, scientificName: s.scientificName, commonName: s.commonName, category: s.category, known: true };
  return {
    speciesCode: derivedCode(l.scientificName),
    scientificName: l.scientificName,
    commonName: l.commonName,
    category: 'other_animal',
    known: false,
  };
}
