/**
 * The hub's seed list of sensitive species (hub setting `sensitive_species`), read once from
 * assets/sensitive-species/sensitive-species.json; its source and attribution are in
 * assets/sensitive-species/ATTRIBUTION.md.
 */
import fs from 'node:fs';
import path from 'node:path';

export const SENSITIVE_SEED_PATH = path.resolve(import.meta.dirname, '../../../assets/sensitive-species/sensitive-species.json');

export const SENSITIVE_SEED: readonly string[] = Object.freeze(
  (JSON.parse(fs.readFileSync(SENSITIVE_SEED_PATH, 'utf8')) as { codes: string[] }).codes,
);
