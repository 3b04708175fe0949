/**
 * The species catalog: every BirdNET v2.4 label with its species code, scientific name,
 * English common name, names in 42 languages and a detection category. Models' labels map
 * into it (by label, else by scientific name). The data is one gzipped JSON file built by
 * `npm run build:species` (scripts/build-species-catalog.ts) from ../shared/data/species and
 * committed under assets/species/; see assets/species/ATTRIBUTION.md for its licence.
 *
 * The file is read once, on first use, and kept in memory (about 6,500 species).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { type CATEGORIES } from '../settings/registry.ts';

export type SpeciesCategory = (typeof CATEGORIES)[number];

export const DEFAULT_CATALOG_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../assets/species/catalog.json.gz');

export const CATALOG_FORMAT = 'chorus-species-catalog/1';

/** The file's shape: one array per field, in BirdNET label order (index = model output). */
export interface CatalogFile {
  format: typeof CATALOG_FORMAT;
  source: string;
  count: number;
  /** BCP-47-like tags, `en` first. */
  languages: string[];
  code: string[];
  scientificName: string[];
  commonName: string[];
  category: SpeciesCategory[];
  /** Per language other than `en`: the name, or null where the source keeps the English name. */
  names: Record<string, (string | null)[]>;
  /** Older codes (eBird 2021 taxonomy, where it differs) → current code. */
  aliases: Record<string, string>;
}

export interface Species {
  /** Position in the BirdNET v2.4 label list (= the output index of a BirdNET v2.4 model). */
  readonly index: number;
  /** eBird species code where BirdNET's eBird map has one, else derived (see docs/model.md). */
  readonly code: string;
  readonly scientificName: string;
  /** English common name. */
  readonly commonName: string;
  /** BirdNET's label: `Scientific name_Common name` (English). */
  readonly label: string;
  readonly category: SpeciesCategory;
}

export interface SearchOptions {
  /** Also match common names in these languages (English and scientific names always match). */
  languages?: readonly string[];
  categories?: readonly SpeciesCategory[];
  /** Default 50. */
  limit?: number;
}

export class SpeciesCatalogError extends Error {}

/**
 * Normalises a language tag to the catalog's form: `pt_br` → `pt-BR`, `EN-gb` → `en-GB`,
 * and the old or alternative codes BirdNET's files use (`in` → `id`, `iw` → `he`,
 * `nb`/`nn` → `no`, `en-UK` → `en-GB`).
 */
export function normaliseLanguage(tag: string): string {
  const parts = tag.trim().replace(/_/g, '-').split('-').filter(Boolean);
  if (parts.length === 0) return '';
  let lang = parts[0].toLowerCase();
  lang = ({ in: 'id', iw: 'he', nb: 'no', nn: 'no' } as Record<string, string>)[lang] ?? lang;
  const rest = parts
    .slice(1)
    .map((p) => (p.length === 2 ? p.toUpperCase() : p.length === 4 ? p[0].toUpperCase() + p.slice(1).toLowerCase() : p.toLowerCase()));
  if (lang === 'en' && rest[0] === 'UK') rest[0] = 'GB';
  return [lang, ...rest].join('-');
}

const fold = (s: string) => s.toLocaleLowerCase('en').normalize('NFC');

export class SpeciesCatalog {
  readonly languages: readonly string[];
  readonly source: string;
  private readonly species: readonly Species[];
  private readonly names: CatalogFile['names'];
  private readonly byCodeMap = new Map<string, Species>();
  private readonly byScientific = new Map<string, Species>();
  private readonly byLabelMap = new Map<string, Species>();
  private readonly aliases: Map<string, string>;
  private readonly languageSet: Map<string, string>;
  /** Lower-cased names per language, built on the first search in that language. */
  private readonly folded = new Map<string, string[]>();

  constructor(file: CatalogFile) {
    if (file.format !== CATALOG_FORMAT) throw new SpeciesCatalogError(`species catalog: unknown format "${String(file.format)}"`);
    const n = file.count;
    for (const key of ['code', 'scientificName', 'commonName', 'category'] as const) {
      if (!Array.isArray(file[key]) || file[key].length !== n)
        throw new SpeciesCatalogError(`species catalog: "${key}" does not hold ${n} entries`);
    }
    for (const [lang, list] of Object.entries(file.names)) {
      if (list.length !== n) throw new SpeciesCatalogError(`species catalog: names in "${lang}" do not hold ${n} entries`);
    }
    this.languages = Object.freeze([...file.languages]);
    this.source = file.source;
    this.names = file.names;
    this.aliases = new Map(Object.entries(file.aliases ?? {}));
    this.languageSet = new Map(file.languages.map((l) => [l.toLowerCase(), l]));
    const all: Species[] = [];
    for (let i = 0; i < n; i++) {
      const s: Species = Object.freeze({
        index: i,
        code: file.code[i],
        scientificName: file.scientificName[i],
        commonName: file.commonName[i],
        label: `${file.scientificName[i]}_${file.commonName[i]}`,
        category: file.category[i],
      });
      all.push(s);
      this.byCodeMap.set(s.code.toLowerCase(), s);
      this.byScientific.set(fold(s.scientificName), s);
      this.byLabelMap.set(s.label, s);
    }
    this.species = Object.freeze(all);
  }

  get size(): number {
    return this.species.length;
  }

  /** Every species in BirdNET label order. */
  all(): readonly Species[] {
    return this.species;
  }

  byIndex(index: number): Species | undefined {
    return this.species[index];
  }

  /** By species code (case-insensitive); older eBird 2021 codes resolve to the current one. */
  byCode(code: string): Species | undefined {
    const key = code.trim().toLowerCase();
    return this.byCodeMap.get(key) ?? this.byCodeMap.get(this.aliases.get(key) ?? '');
  }

  /** By scientific name, case-insensitive (`turdus merula`). */
  byScientificName(name: string): Species | undefined {
    return this.byScientific.get(fold(name.trim().replace(/\s+/g, ' ')));
  }

  /**
   * By a model's label. The exact English BirdNET label first; otherwise the scientific-name
   * part (text before the first `_`), so translated label files and labels whose common name
   * differs still map.
   */
  byLabel(label: string): Species | undefined {
    const exact = this.byLabelMap.get(label.trim());
    if (exact) return exact;
    const cut = label.indexOf('_');
    return this.byScientificName(cut >= 0 ? label.slice(0, cut) : label);
  }

  /**
   * The catalog language a tag resolves to, or undefined: exact (case-insensitive) match,
   * then the language without its region (`de-AT` → `de`), then the one regional variant we
   * hold for a bare language (`pt` → `pt-PT`).
   */
  resolveLanguage(tag: string): string | undefined {
    const norm = normaliseLanguage(tag);
    if (!norm) return undefined;
    const exact = this.languageSet.get(norm.toLowerCase());
    if (exact) return exact;
    const primary = norm.split('-')[0];
    const base = this.languageSet.get(primary);
    if (base) return base;
    if (primary === 'pt') return this.languageSet.get('pt-pt');
    return undefined;
  }

  /** Common name in a language, falling back to English where the language or the name is missing. */
  commonName(speciesOrCode: Species | string, language = 'en'): string | undefined {
    const s = typeof speciesOrCode === 'string' ? this.byCode(speciesOrCode) : speciesOrCode;
    if (!s) return undefined;
    const lang = this.resolveLanguage(language);
    if (!lang || lang === 'en') return s.commonName;
    return this.names[lang]?.[s.index] ?? s.commonName;
  }

  /** Names in every catalog language (English where no translation exists). */
  namesOf(speciesOrCode: Species | string): Record<string, string> | undefined {
    const s = typeof speciesOrCode === 'string' ? this.byCode(speciesOrCode) : speciesOrCode;
    if (!s) return undefined;
    const out: Record<string, string> = {};
    for (const lang of this.languages) out[lang] = lang === 'en' ? s.commonName : (this.names[lang]?.[s.index] ?? s.commonName);
    return out;
  }

  /** Whether the source has a name of its own (not the English fallback) in this language. */
  hasTranslation(speciesOrCode: Species | string, language: string): boolean {
    const s = typeof speciesOrCode === 'string' ? this.byCode(speciesOrCode) : speciesOrCode;
    const lang = this.resolveLanguage(language);
    if (!s || !lang) return false;
    return lang === 'en' || this.names[lang]?.[s.index] != null;
  }

  /**
   * Case-insensitive search on the English common name, the scientific name, the code and,
   * when asked, common names in other languages. Exact matches come first, then prefix
   * matches (of the name or of a word in it), then other substring matches; ties keep
   * BirdNET label order.
   */
  search(query: string, opts: SearchOptions = {}): Species[] {
    const q = fold(query.trim());
    if (!q) return [];
    const limit = opts.limit ?? 50;
    const cats = opts.categories ? new Set(opts.categories) : null;
    const lists = [this.foldedNames('en'), this.foldedNames('@scientific'), this.foldedNames('@code')];
    for (const tag of opts.languages ?? []) {
      const lang = this.resolveLanguage(tag);
      if (lang && lang !== 'en') lists.push(this.foldedNames(lang));
    }
    const ranked: { s: Species; rank: number }[] = [];
    for (const s of this.species) {
      if (cats && !cats.has(s.category)) continue;
      let rank = 4;
      for (const list of lists) {
        const name = list[s.index];
        if (!name) continue;
        if (name === q) rank = Math.min(rank, 0);
        else if (name.startsWith(q)) rank = Math.min(rank, 1);
        else {
          const at = name.indexOf(q);
          if (at > 0) rank = Math.min(rank, /[\s\-'’(]/.test(name[at - 1]) ? 2 : 3);
        }
        if (rank === 0) break;
      }
      if (rank < 4) ranked.push({ s, rank });
    }
    ranked.sort((a, b) => a.rank - b.rank || a.s.index - b.s.index);
    return ranked.slice(0, limit).map((r) => r.s);
  }

  private foldedNames(key: string): string[] {
    let list = this.folded.get(key);
    if (!list) {
      if (key === 'en') list = this.species.map((s) => fold(s.commonName));
      else if (key === '@scientific') list = this.species.map((s) => fold(s.scientificName));
      else if (key === '@code') list = this.species.map((s) => s.code.toLowerCase());
      else list = (this.names[key] ?? []).map((n) => (n == null ? '' : fold(n)));
      this.folded.set(key, list);
    }
    return list;
  }
}

/** Reads and checks a catalog file (gzipped JSON, or plain JSON when the name has no `.gz`). */
export function readCatalogFile(file: string): CatalogFile {
  let raw: Buffer;
  try {
    raw = fs.readFileSync(file);
  } catch (err) {
    throw new SpeciesCatalogError(`species catalog: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    const text = file.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    return JSON.parse(text) as CatalogFile;
  } catch (err) {
    throw new SpeciesCatalogError(`species catalog: ${file} is not a valid catalog file: ${(err as Error).message}`);
  }
}

const loaded = new Map<string, SpeciesCatalog>();

/** The catalog, loaded on first call and cached per file. */
export function speciesCatalog(file = DEFAULT_CATALOG_PATH): SpeciesCatalog {
  let catalog = loaded.get(file);
  if (!catalog) {
    catalog = new SpeciesCatalog(readCatalogFile(file));
    loaded.set(file, catalog);
  }
  return catalog;
}
