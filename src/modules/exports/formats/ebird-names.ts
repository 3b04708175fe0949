/**
 * eBird's English and scientific names for our species codes (issue 18). The eBird import
 * matches species by eBird's own names, and the catalog's BirdNET names differ for about 200
 * birds, so the eBird export reads this small file instead (assets/species/ebird-names.json.gz,
 * built by scripts/build-ebird-names.ts from the eBird/Clements v2025 taxonomy; attribution in
 * assets/species/ATTRIBUTION.md). Loaded once, on first use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { speciesCatalog } from '../../species/catalog.ts';

export const EBIRD_NAMES_FORMAT = 'chorus-ebird-names/1';

export const DEFAULT_EBIRD_NAMES_PATH = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../assets/species/ebird-names.json.gz',
);

/** One array per field, entry i describing one taxon. */
export interface EbirdNamesFile {
  format: typeof EBIRD_NAMES_FORMAT;
  source: string;
  count: number;
  code: string[];
  commonName: string[];
  scientificName: string[];
  /** eBird's taxonomic_order: checklists list species in this order. */
  taxonomicOrder: number[];
  /** eBird category: species, issf, slash, spuh, form, … */
  category: string[];
}

export interface EbirdTaxon {
  code: string;
  commonName: string;
  scientificName: string;
  taxonomicOrder: number;
  category: string;
}

let cache: Map<string, EbirdTaxon> | null = null;

function load(file: string): Map<string, EbirdTaxon> {
  const data = JSON.parse(gunzipSync(fs.readFileSync(file)).toString('utf8')) as EbirdNamesFile;
  if (data.format !== EBIRD_NAMES_FORMAT) throw new Error(`eBird names: unknown format "${String(data.format)}" in ${file}`);
  const map = new Map<string, EbirdTaxon>();
  for (let i = 0; i < data.count; i++) {
    map.set(data.code[i], {
      code: data.code[i],
      commonName: data.commonName[i],
      scientificName: data.scientificName[i],
      taxonomicOrder: data.taxonomicOrder[i],
      category: data.category[i],
    });
  }
  return map;
}

/**
 * The eBird taxon of one of our species codes, or undefined when the eBird v2025 taxonomy
 * lacks it. An older code the catalog keeps as an alias (eBird 2021) resolves to the current one.
 */
export function ebirdTaxon(code: string): EbirdTaxon | undefined {
  cache ??= load(DEFAULT_EBIRD_NAMES_PATH);
  const key = code.trim().toLowerCase();
  return cache.get(key) ?? cache.get(speciesCatalog().byCode(key)?.code ?? '');
}
