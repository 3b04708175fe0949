/**
 * Species names in other languages (spec §4 Species: /species/languages, /species/translate),
 * read from the catalog built from the BirdNET labels.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { DEFAULT_CATALOG_PATH, readCatalogFile, SpeciesCatalog, speciesCatalog } from '../src/modules/species/catalog.ts';
import { syncSpeciesCatalog } from '../src/modules/species/catalog-sync.ts';
import { sqlOf } from './helpers/sql.ts';

describe('species names', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let user: TestUser;
  const catalog = speciesCatalog();
  const robin = catalog.byScientificName('Erithacus rubecula')!;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    user = await factories(hub).user();
  });
  after(() => hub.close());

  test('GET /species/languages is public and lists the catalog languages', async () => {
    const res = await api.get('/species/languages');
    assert.equal(res.status, 200);
    assert.ok(res.body.languages.includes('en') && res.body.languages.includes('de'));
    assert.deepEqual(res.body.languages, [...catalog.languages]);
  });

  test('GET /species/translate gives one species in each language asked, regional tags falling back', async () => {
    const res = await api.get(`/species/translate?speciesCode=${robin.code}&languages=de,fr-CA,en`, user);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.speciesCode, robin.code);
    assert.equal(res.body.scientificName, 'Erithacus rubecula');
    assert.deepEqual(res.body.names, { de: 'Rotkehlchen', fr: catalog.commonName(robin, 'fr'), en: 'European Robin' });
    assert.notEqual(res.body.names.fr, 'European Robin');
  });

  test('refusals: unknown species 404, unknown language 400, missing parameters 400, anonymous 401', async () => {
    assertError(await api.get('/species/translate?speciesCode=nosuch1&languages=de', user), 404, 'NOT_FOUND');
    assertError(await api.get(`/species/translate?speciesCode=${robin.code}&languages=xx`, user), 400, 'UNKNOWN_LANGUAGE');
    assertError(await api.get(`/species/translate?speciesCode=${robin.code}&languages=,,`, user), 400, 'VALIDATION_FAILED');
    assertError(await api.get(`/species/translate?speciesCode=${robin.code}`, user), 400, 'VALIDATION_FAILED');
    assertError(await api.get(`/species/translate?speciesCode=${robin.code}&languages=de`), 401, 'UNAUTHENTICATED');
  });

  test('POST /species/translate translates many at once and lists unknown codes apart', async () => {
    const wren = catalog.byScientificName('Troglodytes troglodytes')!;
    const res = await api.post(
      '/species/translate',
      { speciesCodes: [robin.code, wren.code, 'nosuch1', robin.code], languages: ['de'] },
      user,
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.species.map((s: any) => [s.speciesCode, s.names.de]),
      [
        [robin.code, 'Rotkehlchen'],
        [wren.code, catalog.commonName(wren, 'de')],
      ],
    );
    assert.deepEqual(res.body.unknown, ['nosuch1']);
    assertError(await api.post('/species/translate', { speciesCodes: [], languages: ['de'] }, user), 400, 'VALIDATION_FAILED');
    assertError(
      await api.post('/species/translate', { speciesCodes: [robin.code], languages: ['de'], extra: 1 }, user),
      400,
      'VALIDATION_FAILED',
    );
  });

  test('the species table holds the catalog once, rewritten only when the catalog changes', async () => {
    const db = hub.infra.db;
    const all = catalog.all();
    const rows = await sqlOf(db).query<{ code: string; common_name: string; category: string; catalog_index: number }>(
      `SELECT code, common_name, category, catalog_index FROM species WHERE source = 'catalog' ORDER BY catalog_index`,
    );
    assert.equal(rows.length, all.length);
    assert.deepEqual(rows[robin.index], { code: robin.code, common_name: 'European Robin', category: 'bird', catalog_index: robin.index });
    const version = await sqlOf(db).one<{ fingerprint: string; species_count: number }>(
      'SELECT fingerprint, species_count FROM species_catalog_version',
    );
    assert.equal(version.species_count, all.length);

    // Another start-up with the same catalog writes nothing.
    assert.equal(await syncSpeciesCatalog(db, catalog, new Date()), 0);

    // A new catalog file (a renamed species) is written whole, then the bundled one again.
    const file = readCatalogFile(DEFAULT_CATALOG_PATH);
    file.commonName[robin.index] = 'Robin Redbreast';
    assert.equal(await syncSpeciesCatalog(db, new SpeciesCatalog(file), new Date()), all.length);
    assert.equal(
      (await sqlOf(db).one<{ common_name: string }>('SELECT common_name FROM species WHERE code = $1', [robin.code])).common_name,
      'Robin Redbreast',
    );
    assert.notEqual(
      (await sqlOf(db).one<{ fingerprint: string }>('SELECT fingerprint FROM species_catalog_version')).fingerprint,
      version.fingerprint,
    );
    assert.equal(await syncSpeciesCatalog(db, catalog, new Date()), all.length);
    assert.equal(
      (await sqlOf(db).one<{ common_name: string }>('SELECT common_name FROM species WHERE code = $1', [robin.code])).common_name,
      'European Robin',
    );
  });

  test("a model's own species are named from the species table; other unknown codes stay unknown", async () => {
    await hub.sql.query(
      `INSERT INTO species (code, scientific_name, common_name, category, source, updated_at) VALUES ('x-bufo-testus', 'Bufo testus', 'Test Toad', 'other_animal', 'model', now())`,
    );
    const res = await api.post(
      '/species/translate',
      { speciesCodes: ['x-bufo-testus', 'x-nothing-here', robin.code], languages: ['de', 'fr'] },
      user,
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.species[0], {
      speciesCode: 'x-bufo-testus',
      scientificName: 'Bufo testus',
      names: { de: 'Test Toad', fr: 'Test Toad' },
    });
    assert.deepEqual(res.body.unknown, ['x-nothing-here']);
  });
});
