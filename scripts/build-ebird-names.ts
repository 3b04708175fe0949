/**
 * Builds assets/species/ebird-names.json.gz: for every bird code of our species catalog, the
 * eBird/Clements v2025 taxon (English name, scientific name, taxonomic order, eBird category).
 * The eBird export needs eBird's own names: the catalog's come from BirdNET (eBird 2021/2024)
 * and differ for about 200 birds (splits, renames such as "Redpoll (Common)").
 *
 *   npm run build:ebird-names [-- --source DIR] [-- --out FILE]
 *
 * Source: ../shared/data/species/ebird/ebird-taxonomy.csv (Cornell Lab's `auk` copy of
 * eBird_taxonomy_v2025.csv; see assets/species/ATTRIBUTION.md). auk transliterated the
 * English names to ASCII; where the catalog's English name (from the eBird API via BirdNET)
 * folds to exactly that ASCII name, the catalog's spelling with its diacritics is kept, since
 * that is eBird's own spelling (`Rüppell's …`). Codes the taxonomy lacks are left out: the
 * export reports those species as skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { EBIRD_NAMES_FORMAT, type EbirdNamesFile } from '../src/modules/exports/formats/ebird-names.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const source = path.resolve(arg('--source') ?? path.join(root, '..', 'shared', 'data', 'species'));
const out = path.resolve(arg('--out') ?? path.join(root, 'assets', 'species', 'ebird-names.json.gz'));

interface TaxonRow {
  species_code: string;
  scientific_name: string;
  common_name: string;
  category: string;
  taxonomic_order: string;
}

const rows = parse(fs.readFileSync(path.join(source, 'ebird', 'ebird-taxonomy.csv')), { columns: true }) as TaxonRow[];
const taxonomy = new Map(rows.map((r) => [r.species_code, r]));
const ascii = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');

const file: EbirdNamesFile = {
  format: EBIRD_NAMES_FORMAT,
  source:
    'eBird/Clements Checklist v2025 (Cornell Lab of Ornithology), via CornellLabofOrnithology/auk data-raw/ebird-taxonomy.csv @ e2fc3cd',
  count: 0,
  code: [],
  commonName: [],
  scientificName: [],
  taxonomicOrder: [],
  category: [],
};
let missing = 0;
let diacritics = 0;
for (const s of speciesCatalog().all()) {
  if (s.category !== 'bird') continue;
  const t = taxonomy.get(s.code);
  if (!t) {
    missing++;
    continue;
  }
  let name = t.common_name;
  if (name !== s.commonName && ascii(s.commonName) === name) {
    name = s.commonName;
    diacritics++;
  }
  file.code.push(t.species_code);
  file.commonName.push(name);
  file.scientificName.push(t.scientific_name);
  file.taxonomicOrder.push(Number(t.taxonomic_order));
  file.category.push(t.category);
}
file.count = file.code.length;
fs.writeFileSync(out, gzipSync(JSON.stringify(file), { level: 9 }));
console.log(
  `${out}: ${file.count} birds, ${missing} catalog codes not in the v2025 taxonomy, ${diacritics} names with diacritics restored`,
);
