/**
 * The species catalog (assets/species/catalog.json.gz, built by scripts/build-species-catalog.ts):
 * one entry per BirdNET v2.4 label in label order, eBird codes, names in every language with
 * English fallback, categories of the non-bird labels, lookups and search.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CATEGORIES, LANGUAGES } from '../src/modules/settings/registry.ts';
import {
  DEFAULT_CATALOG_PATH,
  normaliseLanguage,
  SpeciesCatalog,
  speciesCatalog,
  readCatalogFile,
  SpeciesCatalogError,
} from '../src/modules/species/catalog.ts';
import { SPECIES } from '../src/satellite/soundscape.ts';

const SOURCE = path.resolve(import.meta.dirname, '..', '..', 'shared', 'data', 'species');
const ENGLISH = path.join(SOURCE, 'birdnet_v2.4', 'labels', 'BirdNET_GLOBAL_6K_V2.4_Labels.txt');
const haveSource = fs.existsSync(ENGLISH);

describe('species catalog', () => {
  const catalog = speciesCatalog();

  test('the data file is compact and loads once', () => {
    const bytes = fs.statSync(DEFAULT_CATALOG_PATH).size;
    assert.ok(bytes < 2_000_000, `catalog is ${bytes} bytes`);
    assert.equal(speciesCatalog(), catalog);
  });

  test('one entry per BirdNET v2.4 label, in label order', { skip: !haveSource && 'shared/data/species is not beside the project' }, () => {
    const labels = fs.readFileSync(ENGLISH, 'utf8').split('\n').filter(Boolean);
    assert.equal(labels.length, 6522);
    assert.equal(catalog.size, labels.length);
    labels.forEach((label, i) => assert.equal(catalog.byIndex(i)!.label, label));
  });

  test('codes are unique eBird codes; 2021 codes resolve to the current one', () => {
    const codes = catalog.all().map((s) => s.code);
    assert.equal(new Set(codes).size, codes.length);
    assert.equal(catalog.byCode('eurbla')!.scientificName, 'Turdus merula');
    assert.equal(catalog.byCode('EURBLA')!.code, 'eurbla');
    assert.equal(catalog.byCode('integr')!.code, 'integr1'); // Intermediate Egret, split after eBird 2021
    assert.equal(catalog.byCode('nope'), undefined);
  });

  test('the five soundscape species are in the catalog with their codes and names', () => {
    const expected: Record<string, [string, string, string, string]> = {
      'Cuculus canorus_Common Cuckoo': ['comcuc', 'Kuckuck', 'Coucou gris', 'カッコウ'],
      'Turdus merula_Eurasian Blackbird': ['eurbla', 'Amsel', 'Merle noir', 'ニシクロウタドリ'],
      'Fringilla coelebs_Common Chaffinch': ['comcha', 'Buchfink', 'Pinson des arbres', 'ズアオアトリ'],
      'Parus major_Great Tit': ['gretit1', 'Kohlmeise', 'Mésange charbonnière', 'ヨーロッパシジュウカラ'],
      'Erithacus rubecula_European Robin': ['eurrob1', 'Rotkehlchen', 'Rougegorge familier', 'ヨーロッパコマドリ'],
    };
    for (const s of SPECIES) {
      const entry = catalog.byLabel(s.label);
      assert.ok(entry, s.label);
      const [code, de, fr, ja] = expected[s.label];
      assert.equal(entry.code, code);
      assert.equal(entry.category, 'bird');
      assert.equal(catalog.commonName(entry, 'de'), de);
      assert.equal(catalog.commonName(entry, 'fr'), fr);
      assert.equal(catalog.commonName(code, 'ja'), ja);
    }
  });

  test('names in every language, English where a language has none', () => {
    assert.deepEqual([...catalog.languages].sort(), [...LANGUAGES].sort());
    assert.equal(catalog.languages[0], 'en');
    const names = catalog.namesOf('eurbla')!;
    assert.equal(Object.keys(names).length, LANGUAGES.length);
    assert.equal(names.sv, 'Koltrast');
    assert.equal(names['pt-BR'], 'Melro');
    assert.equal(names.uk, 'Дрізд чорний');
    assert.equal(names.et, 'Musträstas'); // from BirdNET-Go's et_ee file
    assert.equal(names.hi, 'Eurasian Blackbird'); // no Hindi name: English
    assert.equal(catalog.hasTranslation('eurbla', 'hi'), false);
    assert.equal(catalog.hasTranslation('eurbla', 'de'), true);
    // Tags are normalised and fall back: region dropped, old codes, unknown → English.
    assert.equal(catalog.commonName('eurrob1', 'pt_br'), catalog.commonName('eurrob1', 'pt-BR'));
    assert.equal(catalog.commonName('eurrob1', 'de-AT'), 'Rotkehlchen');
    assert.equal(catalog.commonName('eurrob1', 'xx'), 'European Robin');
    assert.equal(catalog.resolveLanguage('in'), 'id');
    assert.equal(catalog.resolveLanguage('en_uk'), 'en-GB');
    assert.equal(catalog.resolveLanguage('nb-NO'), 'no');
    assert.equal(catalog.resolveLanguage('pt'), 'pt-PT');
    assert.equal(normaliseLanguage('PT_br'), 'pt-BR');
    // French gaps upstream are filled from BirdNET-Go's file: nearly every French name exists.
    assert.ok(catalog.all().filter((s) => catalog.hasTranslation(s, 'fr')).length > 6500);
  });

  test('non-bird labels have their categories', () => {
    const cat = (label: string) => catalog.byLabel(label)!.category;
    assert.equal(cat('Dog_Dog'), 'other_animal');
    assert.equal(cat('Human vocal_Human vocal'), 'human_voice');
    assert.equal(cat('Human whistle_Human whistle'), 'human_voice');
    assert.equal(cat('Human non-vocal_Human non-vocal'), 'anthropogenic');
    assert.equal(cat('Engine_Engine'), 'anthropogenic');
    assert.equal(cat('Siren_Siren'), 'anthropogenic');
    assert.equal(cat('Environmental_Environmental'), 'anthropogenic');
    assert.equal(cat('Noise_Noise'), 'anthropogenic');
    assert.equal(cat('Lithobates catesbeianus_American Bullfrog'), 'amphibian');
    assert.equal(cat('Pseudacris crucifer_Spring Peeper'), 'amphibian');
    assert.equal(cat('Gryllus pennsylvanicus_Fall Field Cricket'), 'insect');
    assert.equal(cat('Apis mellifera_Honey Bee'), 'insect');
    assert.equal(cat('Canis lupus_Gray Wolf'), 'other_animal');
    const count = (c: string) => catalog.all().filter((s) => s.category === c).length;
    assert.deepEqual(Object.fromEntries(CATEGORIES.map((c) => [c, count(c)])), {
      bird: 6421,
      amphibian: 41,
      insect: 42,
      anthropogenic: 8,
      human_voice: 2,
      other_animal: 8,
    });
  });

  test('lookups by scientific name and by label are forgiving', () => {
    assert.equal(catalog.byScientificName('turdus  MERULA')!.code, 'eurbla');
    assert.equal(catalog.byLabel('Turdus merula_Amsel')!.code, 'eurbla'); // a translated labels file
    assert.equal(catalog.byLabel('Turdus merula')!.code, 'eurbla');
    assert.equal(catalog.byLabel('Nonexistent bird_Nobody'), undefined);
  });

  test('search is case-insensitive on common and scientific names, best matches first', () => {
    assert.equal(catalog.search('EURASIAN BLACKBIRD')[0].code, 'eurbla');
    assert.equal(catalog.search('turdus merula')[0].code, 'eurbla');
    assert.ok(catalog.search('blackbird', { limit: 500 }).some((s) => s.code === 'eurbla'));
    assert.ok(catalog.search('Blackbird').every((s) => /blackbird/i.test(s.commonName) || /blackbird/i.test(s.scientificName)));
    assert.deepEqual(catalog.search('amsel'), []); // German only when asked
    assert.equal(catalog.search('amsel', { languages: ['de'] })[0].code, 'eurbla');
    assert.equal(catalog.search('ROTKEHLCHEN', { languages: ['de'] })[0].code, 'eurrob1');
    assert.ok(catalog.search('rotkehl', { languages: ['de'] }).some((s) => s.code === 'eurrob1'));
    assert.equal(catalog.search('robin', { limit: 3 }).length, 3);
    assert.ok(catalog.search('frog', { categories: ['amphibian'] }).length > 10);
    assert.ok(catalog.search('frog', { categories: ['bird'] }).every((s) => s.category === 'bird'));
    assert.deepEqual(catalog.search('   '), []);
  });

  test('a file that is not a catalog fails with a clear error', (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-catalog-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const bad = path.join(dir, 'bad.json.gz');
    fs.writeFileSync(bad, 'not gzip');
    assert.throws(
      () => readCatalogFile(bad),
      (e: unknown) => e instanceof SpeciesCatalogError && /not a valid catalog file/.test(e.message),
    );
    assert.throws(() => readCatalogFile(path.join(dir, 'missing.json.gz')), /cannot read/);
    assert.throws(() => new SpeciesCatalog({ format: 'other' } as never), /unknown format/);
  });
});
