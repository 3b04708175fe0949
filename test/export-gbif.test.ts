/**
 * What GBIF (and the other importers) are sent, issue 34 points 2, 3 and 8, over HTTP:
 * - the team's publication licence (team setting publication_license): validated, its URL in
 *   Darwin Core's license columns and in eml.xml's intellectualRights link (where GBIF reads it),
 *   its name in xeno-canto's metadata, and a warning on the Darwin Core preview when GBIF would
 *   refuse it;
 * - eml.xml valid against the GBIF metadata profile it names (1.3, schema files in
 *   test/fixtures/gbif-eml), meta.xml against the Darwin Core text schema;
 * - identificationVerificationStatus on every occurrence, and the preview's count of rows nobody
 *   confirmed with their lowest confidence.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { schemaErrors, xpathString } from './helpers/xsd.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { darwinCoreArchive } from '../src/modules/exports/formats/dwca.ts';
import { LICENSES } from '../src/modules/exports/licenses.ts';
import type { ExportContext, ExportRow } from '../src/modules/exports/types.ts';
import { fetchBytes, tsv, unzip } from './helpers/export-files.ts';

const SCHEMAS = path.join(import.meta.dirname, 'fixtures/gbif-eml');
const EML_XSD = path.join(SCHEMAS, 'gbif-eml-1.3/eml.xsd');
const META_XSD = path.join(SCHEMAS, 'tdwg_dwc_text.xsd');

/** GBIF's three licences as its License vocabulary spells their URLs. */
const CC_BY = 'http://creativecommons.org/licenses/by/4.0/legalcode';
const CC_BY_NC_SA = 'http://creativecommons.org/licenses/by-nc-sa/4.0/legalcode';

describe('GBIF: licence, eml.xml profile, what is submitted', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let member: TestUser;
  let team: TestTeam;
  const ids: Record<string, string> = {};
  const base = new Date('2026-06-10T05:00:00Z');
  const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);
  const window = `start=${encodeURIComponent(at(-60).toISOString())}&end=${encodeURIComponent(at(120).toISOString())}`;

  const archive = async () => {
    const res = await fetchBytes(hub, `/export/observation?tenantId=${team.id}&format=dwca&${window}`, member);
    assert.equal(res.status, 200, res.body.toString());
    return unzip(res.body);
  };
  const setLicense = async (value: unknown) => api.put(`/settings/tenant?tenantId=${team.id}`, { publication_license: value }, owner);

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    member = await f.member(team, 'member');
    const sat = await makeSatellite(hub, team, owner, 'Kottenforst');
    await hub.sql.query('UPDATE satellites SET latitude = 50.69, longitude = 7.05 WHERE id = $1', [sat.id]);
    const wav = makeWav(new Int16Array(4800).map((_, i) => Math.round(Math.sin(i / 5) * 8000)));
    const chunk = await makeChunk(hub, { satellite: sat, audio: wav, at: at(0) });
    ids.confirmed = await makeDetection(hub, { chunk, at: at(0), confidence: 0.93, verificationStatus: 'confirmed' });
    ids.low = await makeDetection(hub, {
      satellite: sat,
      at: at(5),
      code: 'comchi1',
      commonName: 'Common Chiffchaff',
      scientificName: 'Phylloscopus collybita',
      confidence: 0.31,
    });
    ids.pending = await makeDetection(hub, {
      satellite: sat,
      at: at(7),
      code: 'eurbla',
      commonName: 'Eurasian Blackbird',
      scientificName: 'Turdus merula',
      confidence: 0.52,
      verificationStatus: 'pending_review',
    });
    // Rejected: listed under no filter a submission sends, never in a file, never counted.
    ids.rejected = await makeDetection(hub, { satellite: sat, at: at(9), confidence: 0.12, verificationStatus: 'rejected' });
  });
  after(() => hub.close());

  test('the team setting: CC BY 4.0 by default, only the listed licences accepted, members cannot change it', async () => {
    const defs = await api.get('/settings/definitions', owner);
    assert.equal(defs.status, 200);
    const def = defs.body.settings.find((s: { key: string }) => s.key === 'publication_license');
    assert.ok(def, 'publication_license is declared');
    assert.equal(def.default, 'CC-BY-4.0');
    assert.deepEqual(def.options, [
      'CC0-1.0',
      'CC-BY-4.0',
      'CC-BY-NC-4.0',
      'CC-BY-SA-4.0',
      'CC-BY-NC-SA-4.0',
      'CC-BY-NC-ND-4.0',
      'all-rights-reserved',
    ]);
    assert.equal((await api.get(`/settings/tenant?tenantId=${team.id}`, member)).body.publication_license, 'CC-BY-4.0');

    for (const bad of ['CC BY 4.0', 'GPL-3.0', 42, ['CC0-1.0']]) {
      const res = await setLicense(bad);
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      assert.match(res.body.error.message, /publication_license/);
    }
    const byMember = await api.put(`/settings/tenant?tenantId=${team.id}`, { publication_license: 'CC0-1.0' }, member);
    assert.equal(byMember.status, 403);
    assert.equal((await api.get(`/settings/tenant?tenantId=${team.id}`, member)).body.publication_license, 'CC-BY-4.0');
  });

  test('Darwin Core with the default licence: eml.xml valid against GBIF profile 1.3, the licence URL in eml.xml and both license columns', async () => {
    const files = await archive();
    const eml = files.get('eml.xml')!.toString('utf8');
    assert.deepEqual(schemaErrors(EML_XSD, eml), []);
    assert.match(
      eml,
      /xsi:schemaLocation="https:\/\/eml\.ecoinformatics\.org\/eml-2\.2\.0 https:\/\/rs\.gbif\.org\/schema\/eml-gbif-profile\/1\.3\/eml\.xsd"/,
    );
    assert.equal(xpathString(eml, 'string(/*/dataset/intellectualRights/para/ulink/@url)'), CC_BY);
    assert.equal(
      xpathString(eml, 'string(/*/dataset/intellectualRights/para/ulink/citetitle)'),
      'Creative Commons Attribution (CC-BY) 4.0 License',
    );
    assert.equal(xpathString(eml, 'string(/*/dataset/licensed/url)'), CC_BY);
    assert.equal(xpathString(eml, 'string(/*/dataset/licensed/identifier)'), 'CC-BY-4.0');
    // Profile 1.1's complaint: creator and metadataProvider come before pubDate.
    assert.equal(xpathString(eml, 'name(/*/dataset/pubDate/preceding-sibling::*[1])'), 'metadataProvider');
    assert.equal(xpathString(eml, 'string(/*/dataset/creator/organizationName)'), team.name);

    assert.deepEqual(schemaErrors(META_XSD, files.get('meta.xml')!.toString('utf8')), []);
    const occurrences = tsv(files.get('occurrence.txt')!);
    assert.equal(occurrences.length, 3, 'the rejected detection is left out');
    for (const o of occurrences) assert.equal(o.license, CC_BY, `license of ${o.occurrenceID}`);
    // Recordings are listed once published (issue 34 point 4); their licence is the same URL (the writer test below).
    for (const m of tsv(files.get('multimedia.txt')!)) assert.equal(m.license, CC_BY);
  });

  test('the writer: the multimedia license is the URL too; an empty team name still makes a valid eml.xml', async () => {
    const ctx: ExportContext = {
      teamName: '',
      timeZone: 'UTC',
      generatedAt: new Date('2026-06-10T12:00:00Z'),
      detectionUrl: (id) => `https://chorus.example/detections/${id}`,
      audioUrl: (chunkId) => `https://chorus.example/public/audio/${chunkId}`,
      recordist: '',
      license: LICENSES['CC0-1.0'].name,
      licenseInfo: LICENSES['CC0-1.0'],
    };
    const row: ExportRow = {
      id: 'det-1',
      tenantId: 'team-1',
      detectedAt: '2026-06-10T05:00:00.000Z',
      endAt: '2026-06-10T05:00:03.000Z',
      speciesCode: 'eurrob1',
      commonName: 'European Robin',
      scientificName: 'Erithacus rubecula',
      category: 'bird',
      confidence: 0.8,
      calibratedConfidence: 0.7,
      satelliteId: 'sat-a',
      satelliteName: 'North Hedge',
      latitude: 50.69,
      longitude: 7.05,
      verificationStatus: 'pending_review',
      chunkId: 'chunk-1',
      callChunks: 1,
      modelId: 'birdnet-2.4',
      isRare: false,
    } as ExportRow;
    const chunks: Buffer[] = [];
    for await (const c of darwinCoreArchive(
      (async function* () {
        yield [row];
      })(),
      ctx,
    ))
      chunks.push(c as Buffer);
    const files = await unzip(Buffer.concat(chunks));
    const cc0 = 'http://creativecommons.org/publicdomain/zero/1.0/legalcode';
    const media = tsv(files.get('multimedia.txt')!);
    assert.equal(media.length, 1);
    assert.equal(media[0]!.license, cc0);
    assert.equal(tsv(files.get('occurrence.txt')!)[0]!.identificationVerificationStatus, 'unverified');
    const eml = files.get('eml.xml')!.toString('utf8');
    assert.deepEqual(schemaErrors(EML_XSD, eml), []);
    assert.equal(xpathString(eml, 'string(/*/dataset/intellectualRights/para/ulink/@url)'), cc0);
  });

  test('identificationVerificationStatus on every occurrence: verified when confirmed, else unverified; its term in meta.xml', async () => {
    const files = await archive();
    const meta = files.get('meta.xml')!.toString('utf8');
    const core = meta.slice(meta.indexOf('<core'), meta.indexOf('</core>'));
    const header = files.get('occurrence.txt')!.toString('utf8').split('\n')[0]!.split('\t');
    const index = header.indexOf('identificationVerificationStatus');
    assert.ok(index > 0);
    assert.match(core, new RegExp(`<field index="${index}" term="http://rs\\.tdwg\\.org/dwc/terms/identificationVerificationStatus"/>`));
    const status = Object.fromEntries(tsv(files.get('occurrence.txt')!).map((o) => [o.occurrenceID, o.identificationVerificationStatus]));
    assert.deepEqual(status, { [ids.confirmed!]: 'verified', [ids.low!]: 'unverified', [ids.pending!]: 'unverified' });
  });

  test('the preview over HTTP: the licence, and how many rows nobody confirmed with their lowest confidence', async () => {
    const dwca = await api.get(`/export/preview?tenantId=${team.id}&kind=observation&format=dwca&${window}`, member);
    assert.equal(dwca.status, 200, dwca.text);
    assert.deepEqual(dwca.body.unverified, { rows: 2, lowestConfidence: 0.31 });
    assert.deepEqual(dwca.body.license, {
      id: 'CC-BY-4.0',
      name: 'CC BY 4.0',
      title: 'Creative Commons Attribution (CC-BY) 4.0 License',
      url: CC_BY,
      gbif: true,
    });
    assert.deepEqual(dwca.body.warnings, []);

    for (const kind of ['checklist', 'observation', 'recording']) {
      const res = await api.get(`/export/preview?tenantId=${team.id}&kind=${kind}&${window}`, member);
      assert.equal(res.status, 200, res.text);
      // xeno-canto takes confirmed recordings unless asked: nothing unreviewed.
      assert.deepEqual(
        res.body.unverified,
        kind === 'recording' ? { rows: 0, lowestConfidence: null } : { rows: 2, lowestConfidence: 0.31 },
        kind,
      );
    }
    const withUnverified = await api.get(`/export/preview?tenantId=${team.id}&kind=recording&includeUnverified=1&${window}`, member);
    assert.deepEqual(withUnverified.body.unverified, { rows: 2, lowestConfidence: 0.31 });
    const confirmed = await api.get(
      `/export/preview?tenantId=${team.id}&kind=observation&format=dwca&verificationStatus=confirmed&${window}`,
      member,
    );
    assert.equal(confirmed.body.total, 1);
    assert.deepEqual(confirmed.body.unverified, { rows: 0, lowestConfidence: null });
    const pending = await api.get(`/export/preview?tenantId=${team.id}&kind=checklist&verificationStatus=pending_review&${window}`, member);
    assert.deepEqual(pending.body.unverified, { rows: 1, lowestConfidence: 0.52 });
    // The team's own files are not submissions: no figure.
    const own = await api.get(`/export/preview?tenantId=${team.id}&kind=detections&${window}`, member);
    assert.equal(own.body.unverified, undefined);
    assert.equal((await api.get(`/export/preview?tenantId=${team.id}&kind=observation&format=gbif`, member)).status, 400);
  });

  test('a licence GBIF does not take: the Darwin Core preview warns, the files carry it; all rights reserved has no URL', async () => {
    try {
      assert.equal((await setLicense('CC-BY-NC-SA-4.0')).status, 200);
      const dwca = await api.get(`/export/preview?tenantId=${team.id}&kind=observation&format=dwca&${window}`, member);
      assert.equal(dwca.body.license.gbif, false);
      assert.equal(dwca.body.warnings.length, 1);
      assert.equal(dwca.body.warnings[0].code, 'LICENSE_NOT_ACCEPTED_BY_GBIF');
      assert.match(dwca.body.warnings[0].message, /GBIF .*CC BY-NC-SA 4\.0/);
      // The warning is GBIF's: iNaturalist's preview has none.
      const inat = await api.get(`/export/preview?tenantId=${team.id}&kind=observation&${window}`, member);
      assert.deepEqual(inat.body.warnings, []);

      const files = await archive();
      const eml = files.get('eml.xml')!.toString('utf8');
      assert.deepEqual(schemaErrors(EML_XSD, eml), []);
      assert.equal(xpathString(eml, 'string(/*/dataset/intellectualRights/para/ulink/@url)'), CC_BY_NC_SA);
      for (const o of tsv(files.get('occurrence.txt')!)) assert.equal(o.license, CC_BY_NC_SA);

      // xeno-canto names the licence in its own field.
      const rec = await fetchBytes(hub, `/export/recording?tenantId=${team.id}&${window}`, member);
      assert.equal(rec.status, 200);
      const meta: Record<string, string>[] = parse((await unzip(rec.body)).get('metadata.csv')!, { columns: true });
      assert.equal(meta.length, 1);
      assert.equal(meta[0]!.license, 'CC BY-NC-SA 4.0');

      assert.equal((await setLicense('all-rights-reserved')).status, 200);
      const reserved = await archive();
      const emlReserved = reserved.get('eml.xml')!.toString('utf8');
      assert.deepEqual(schemaErrors(EML_XSD, emlReserved), []);
      assert.equal(xpathString(emlReserved, 'count(//ulink)'), '0');
      assert.equal(xpathString(emlReserved, 'string(/*/dataset/licensed/licenseName)'), 'All rights reserved');
      for (const o of tsv(reserved.get('occurrence.txt')!)) assert.equal(o.license, 'All rights reserved');
    } finally {
      assert.equal((await setLicense(null)).status, 200);
    }
  });
});
