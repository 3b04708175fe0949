/**
 * Builds assets/species/catalog.json.gz from the BirdNET v2.4 label files and BirdNET's eBird
 * code maps in ../shared/data/species (SOURCES.md there gives origin and licence).
 *
 *   npm run build:species [-- --source DIR] [-- --out FILE]
 *
 * Rules (also in docs/model.md):
 * - Order: the English BirdNET v2.4 label file; entry i = model output i. Every translation
 *   must have the same line count and the same scientific name on every line, or the build stops.
 * - Code: the code of the label in eBird_taxonomy_codes_2024E.json (eBird 2024 codes for birds;
 *   BirdNET's own `t-…` codes for frogs, insects and mammals; `dogdog`, `engine`, … for the
 *   non-species classes). A label the map does not know gets `x-` + its scientific name in
 *   lower case with every run of other characters than a-z0-9 turned into `-`
 *   (`Cuculus canorus` → `x-cuculus-canorus`): stable, readable, unique as scientific names are.
 *   eBird 2021 codes that differ (60 taxonomy splits) are kept as aliases.
 * - Languages: file suffix → tag: `en_uk` → en-GB, `in` → id, `pt_BR` → pt-BR, `pt_PT` → pt-PT,
 *   `et_ee` → et, `hi_in` → hi, `lv_lv` → lv, `vi_vn` → vi, others as they are; every tag must be
 *   one of the settings registry's LANGUAGES. Where BirdNET-Go has a variant of an upstream
 *   language (fi, fr, pt_BR), the upstream name wins and BirdNET-Go's fills the names upstream
 *   leaves in English. A name equal to the English one is stored as null (English fallback).
 * - Category: see categoryOf below.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { LANGUAGES } from '../src/modules/settings/registry.ts';
import { CATALOG_FORMAT, normaliseLanguage, type CatalogFile, type SpeciesCategory } from '../src/modules/species/catalog.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const source = path.resolve(arg('--source') ?? path.join(root, '..', 'shared', 'data', 'species'));
const out = path.resolve(arg('--out') ?? path.join(root, 'assets', 'species', 'catalog.json.gz'));

const PREFIX = 'BirdNET_GLOBAL_6K_V2.4_Labels';
const UPSTREAM = path.join(source, 'birdnet_v2.4', 'labels');
const BIRDNET_GO = path.join(source, 'birdnet_v2.4', 'labels_birdnet-go');

/** File suffixes whose tag is not simply the normalised suffix. */
const SUFFIX_TAG: Record<string, string> = { en_uk: 'en-GB', in: 'id', et_ee: 'et', hi_in: 'hi', lv_lv: 'lv', vi_vn: 'vi' };

/**
 * BirdNET's 11 non-species classes. Anthropogenic holds every non-biological class: machines,
 * weapons, fireworks and sirens, sounds people make other than with the voice, and also
 * `Environmental` (wind, rain, water) and `Noise`: the six categories have no "environment"
 * bucket, and these, like machine noise, should be dropped at the satellite and hidden by default.
 */
const NON_SPECIES: Record<string, SpeciesCategory> = {
  Dog_Dog: 'other_animal',
  Engine_Engine: 'anthropogenic',
  Environmental_Environmental: 'anthropogenic',
  Fireworks_Fireworks: 'anthropogenic',
  Gun_Gun: 'anthropogenic',
  'Human non-vocal_Human non-vocal': 'anthropogenic',
  'Human vocal_Human vocal': 'human_voice',
  'Human whistle_Human whistle': 'human_voice',
  Noise_Noise: 'anthropogenic',
  'Power tools_Power tools': 'anthropogenic',
  Siren_Siren: 'anthropogenic',
};

/**
 * The genera of BirdNET v2.4's 90 non-bird species (those with a `t-…` code in BirdNET's map).
 * A `t-` label of any other genus stops the build, so a new label set cannot slip in as a bird.
 */
const AMPHIBIAN_GENERA = [
  'Acris',
  'Anaxyrus',
  'Dryophytes',
  'Eleutherodactylus',
  'Gastrophryne',
  'Hyliola',
  'Incilius',
  'Lithobates',
  'Pseudacris',
  'Scaphiopus',
  'Spea',
];
const INSECT_GENERA = [
  'Allonemobius',
  'Amblycorypha',
  'Anaxipha',
  'Apis',
  'Atlanticus',
  'Conocephalus',
  'Cyrtoxipha',
  'Eunemobius',
  'Gryllus',
  'Microcentrum',
  'Miogryllus',
  'Neoconocephalus',
  'Neonemobius',
  'Oecanthus',
  'Orchelimum',
  'Orocharis',
  'Phyllopalpus',
  'Pterophylla',
  'Scudderia',
];
const MAMMAL_GENERA = ['Alouatta', 'Canis', 'Odocoileus', 'Sciurus', 'Tamias', 'Tamiasciurus'];

/**
 * bird: every label with a regular eBird code (or no code at all); amphibian / insect /
 * other_animal: labels with BirdNET's `t-` codes, by genus; the non-species classes as above.
 */
function categoryOf(label: string, scientificName: string, code: string | undefined): SpeciesCategory {
  if (NON_SPECIES[label]) return NON_SPECIES[label];
  if (code?.startsWith('t-')) {
    const genus = scientificName.split(' ')[0];
    if (AMPHIBIAN_GENERA.includes(genus)) return 'amphibian';
    if (INSECT_GENERA.includes(genus)) return 'insect';
    if (MAMMAL_GENERA.includes(genus)) return 'other_animal';
    throw new Error(`${label}: non-bird code ${code} of a genus with no category; add "${genus}" to a genus list`);
  }
  return 'bird';
}

function derivedCode(scientificName: string): string {
  return (
    'x-' +
    scientificName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
  );
}

function readLabels(file: string): { scientific: string; common: string }[] {
  const lines = fs
    .readFileSync(file, 'utf8')
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''));
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.map((line, i) => {
    const cut = line.indexOf('_');
    if (cut <= 0) throw new Error(`${file}:${i + 1}: not "Scientific name_Common name": ${JSON.stringify(line)}`);
    return { scientific: line.slice(0, cut), common: line.slice(cut + 1) };
  });
}

function labelFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const f of fs.readdirSync(dir).sort()) {
    const m = f.match(new RegExp(`^${PREFIX}_(.+)\\.txt$`));
    if (m) files.set(m[1], path.join(dir, f));
  }
  return files;
}

function tagOf(suffix: string): string {
  const tag = SUFFIX_TAG[suffix] ?? normaliseLanguage(suffix);
  if (!(LANGUAGES as readonly string[]).includes(tag))
    throw new Error(`label file suffix "${suffix}" → "${tag}", which is not in the settings registry's LANGUAGES`);
  return tag;
}

function build(): CatalogFile {
  const english = readLabels(path.join(UPSTREAM, `${PREFIX}.txt`));
  const n = english.length;
  const map2024 = JSON.parse(fs.readFileSync(path.join(source, 'ebird', 'eBird_taxonomy_codes_2024E.json'), 'utf8')) as Record<
    string,
    string
  >;
  const map2021 = JSON.parse(fs.readFileSync(path.join(source, 'ebird', 'eBird_taxonomy_codes_2021E.json'), 'utf8')) as Record<
    string,
    string
  >;

  const code: string[] = [];
  const category: SpeciesCategory[] = [];
  const aliases: Record<string, string> = {};
  let derived = 0;
  for (const { scientific, common } of english) {
    const label = `${scientific}_${common}`;
    const mapped = map2024[label];
    const c = mapped ?? derivedCode(scientific);
    if (!mapped) derived++;
    code.push(c);
    category.push(categoryOf(label, scientific, mapped));
    const old = map2021[label];
    if (old && old !== c) aliases[old] = c;
  }
  if (new Set(code).size !== n) throw new Error('species codes are not unique');
  for (const old of Object.keys(aliases)) if (code.includes(old)) delete aliases[old]; // an old code that is someone's current code is no alias

  const check = (file: string, rows: { scientific: string }[]) => {
    if (rows.length !== n) throw new Error(`${file}: ${rows.length} labels, the English file has ${n}`);
    rows.forEach((r, i) => {
      if (r.scientific !== english[i].scientific)
        throw new Error(`${file}:${i + 1}: "${r.scientific}" where the English file has "${english[i].scientific}"`);
    });
  };

  const names: Record<string, (string | null)[]> = {};
  const upstream = labelFiles(UPSTREAM);
  const go = fs.existsSync(BIRDNET_GO) ? labelFiles(BIRDNET_GO) : new Map<string, string>();
  for (const suffix of new Set([...upstream.keys(), ...go.keys()])) {
    const tag = tagOf(suffix);
    if (names[tag]) throw new Error(`two label files map to "${tag}"`);
    const primary = upstream.get(suffix) ?? go.get(suffix)!;
    const rows = readLabels(primary);
    check(primary, rows);
    const fill = upstream.has(suffix) && go.has(suffix) ? readLabels(go.get(suffix)!) : null;
    if (fill) check(go.get(suffix)!, fill);
    names[tag] = rows.map((r, i) => {
      const en = english[i].common;
      if (r.common !== en) return r.common;
      if (fill && fill[i].common !== en) return fill[i].common;
      return null;
    });
  }
  const languages = [
    'en',
    ...Object.keys(names).sort((a, b) => (LANGUAGES as readonly string[]).indexOf(a) - (LANGUAGES as readonly string[]).indexOf(b)),
  ];
  const sortedNames = Object.fromEntries(languages.slice(1).map((l) => [l, names[l]]));

  console.log(
    `${n} labels: ${category.filter((c) => c === 'bird').length} birds, ` +
      (['amphibian', 'insect', 'other_animal', 'anthropogenic', 'human_voice'] as const)
        .map((c) => `${category.filter((x) => x === c).length} ${c}`)
        .join(', '),
  );
  console.log(`${n - derived} codes from the eBird 2024E map, ${derived} derived; ${Object.keys(aliases).length} eBird 2021 aliases`);
  console.log(
    `${languages.length} languages: ${languages.map((l) => `${l} (${l === 'en' ? n : names[l].filter((x) => x != null).length})`).join(', ')}`,
  );

  return {
    format: CATALOG_FORMAT,
    source:
      'BirdNET v2.4 labels and translations (BirdNET-Analyzer, BirdNET-Go), eBird codes from BirdNET-Analyzer; see assets/species/ATTRIBUTION.md',
    count: n,
    languages,
    code,
    scientificName: english.map((e) => e.scientific),
    commonName: english.map((e) => e.common),
    category,
    names: sortedNames,
    aliases,
  };
}

const catalog = build();
fs.mkdirSync(path.dirname(out), { recursive: true });
const json = JSON.stringify(catalog);
const gz = gzipSync(Buffer.from(json, 'utf8'), { level: 9 });
fs.writeFileSync(out, gz);
console.log(`wrote ${path.relative(process.cwd(), out)}: ${gz.length} bytes (${json.length} bytes of JSON)`);
