/**
 * Darwin Core and iNaturalist written two ways (issue 34): by the database under COPY
 * (formats/submission-lines.ts, what PostgreSQL serves when no recording is published) and from
 * rows in JavaScript (formats/dwca.ts, formats/inaturalist.ts: PGlite, and files that publish
 * recordings). The two must give the same file byte for byte, held here over the values where
 * they could part: toFixed's ties, a zone offset of half an hour, transliteration to Latin-1,
 * tabs and formulas in names, a calibration curve, sensitive species generalised and moved,
 * rejected rows and sounds that are no species left out. Only PostgreSQL streams COPY, so only
 * there are these two different writers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam } from './helpers/factories.ts';
import { bothWays, halfHourTeam, unzip } from './helpers/export-files.ts';

const DATABASE_URL = process.env.DATABASE_URL;

describe(
  'submission files: the database’s lines and the rows’ writers agree',
  { skip: DATABASE_URL ? false : 'DATABASE_URL is not set' },
  () => {
    let hub: Hub;
    let team: TestTeam;
    const day = '2026-03-10';
    const next = '2026-03-11';
    const midnight = { eagle: '', before: '', at: '', nextEagle: '', localEagle: '', local: '' };

    before(async () => {
      hub = await startHub();
      // Half an hour off UTC, and a name and a recordist a spreadsheet would run.
      const { owner, team: t } = await halfHourTeam(hub);
      team = t;
      const lodz = await makeSatellite(hub, team, owner, 'Łódź\tNord\nSüd');
      const formula = await makeSatellite(hub, team, owner, '=cmd|x');
      const nowhere = await makeSatellite(hub, team, owner, 'Nowhere');
      // Coordinates on toFixed(6)'s exact ties (odd multiples of 1/128), either sign.
      await hub.sql.query('UPDATE satellites SET latitude = 52.5078125, longitude = -1.0078125 WHERE id = $1', [lodz.id]);
      await hub.sql.query('UPDATE satellites SET latitude = -33.9, longitude = 151.2 WHERE id = $1', [formula.id]);
      await hub.sql.query('INSERT INTO calibration_curves (tenant_id, model_id, fitted_at, samples, buckets) VALUES ($1, $2, $3, 20, $4)', [
        team.id,
        'cal-model',
        hub.clock.now(),
        JSON.stringify([
          { minConfidence: 0.2, maxConfidence: 0.4, calibrated: 0.125, samples: 10 },
          { minConfidence: 0.6, maxConfidence: 0.8, calibrated: 0.7, samples: 10 },
        ]),
      ]);
      const rows: Array<Parameters<typeof makeDetection>[1]> = [
        // toFixed(2) ties (0.125, 0.625) and values just under a tie (0.835, 0.815).
        { satellite: lodz, confidence: 0.125, commonName: 'Grünfink', code: 'eurgre1', scientificName: 'Chloris chloris' },
        { satellite: lodz, confidence: 0.625, commonName: '金翅雀 Zeisig', code: 'eursis', scientificName: 'Spinus spinus' },
        { satellite: formula, confidence: 0.835, commonName: '=SUM(A1)', scientificName: 'Turdus merula', code: 'eurbla' },
        {
          satellite: formula,
          confidence: 0.815,
          commonName: 'Bergfink, "Nord"',
          scientificName: 'Fringilla montifringilla',
          code: 'brambl',
        },
        { satellite: nowhere, confidence: 0.9, commonName: 'U\u0308ber\u0085fink', scientificName: 'Fringilla coelebs', code: 'comcha' },
        // The curve: below, inside, between and above its buckets.
        { satellite: lodz, confidence: 0.1, modelId: 'cal-model' },
        { satellite: lodz, confidence: 0.5, modelId: 'cal-model' },
        { satellite: lodz, confidence: 0.95, modelId: 'cal-model' },
        // A sensitive species (the hub's seed list), generalised and moved to the end of its hour.
        { satellite: lodz, confidence: 0.7, code: 'goleag', commonName: 'Golden Eagle', scientificName: 'Aquila chrysaetos' },
        // Left out: rejected, and sounds that are no species.
        { satellite: lodz, verificationStatus: 'rejected' },
        { satellite: lodz, code: 'dog', commonName: 'Dog', scientificName: 'Dog', category: 'other' },
        { satellite: lodz, code: 'human', commonName: 'Human', scientificName: 'Human vocal', category: 'human_voice' },
        { satellite: lodz, confidence: 0.55, verificationStatus: 'confirmed', modelId: 'birdnet-2.4' },
      ];
      for (const [i, r] of rows.entries())
        await makeDetection(hub, { ...r, at: new Date(Date.parse(`${day}T06:00:00Z`) + i * 7 * 60_000 + 123) });
      // A call that lasts (eventDate an interval) and one with no length (one instant).
      const long = await makeDetection(hub, { satellite: lodz, at: new Date(`${day}T08:00:00.500Z`) });
      await hub.sql.query(`UPDATE detections SET call_chunks = 4, call_end_at = $2 WHERE id = $1`, [
        long,
        new Date(`${day}T08:00:12.500Z`),
      ]);
      await makeDetection(hub, { satellite: lodz, at: new Date(`${day}T08:30:00Z`), startMs: 0, endMs: 0 });
      // Around the UTC midnight where Darwin Core's statement goes on to its next day: a sensitive row of the
      // day's last hour goes after the row a microsecond before midnight and before the one at midnight.
      const eagle = { code: 'goleag', commonName: 'Golden Eagle', scientificName: 'Aquila chrysaetos' };
      midnight.eagle = await makeDetection(hub, { satellite: formula, at: new Date(`${day}T23:40:00Z`), ...eagle });
      midnight.before = await makeDetection(hub, { satellite: lodz, at: new Date(`${day}T23:59:59.999Z`) });
      midnight.at = await makeDetection(hub, { satellite: nowhere, at: new Date(`${next}T00:00:00Z`) });
      midnight.nextEagle = await makeDetection(hub, { satellite: formula, at: new Date(`${next}T00:10:00Z`), ...eagle });
      // Local midnight is 02:30 UTC: an eagle of 02:00–03:00 UTC goes after a row of 02:45, whatever the team's day.
      midnight.localEagle = await makeDetection(hub, { satellite: formula, at: new Date(`${next}T02:10:00Z`), ...eagle });
      midnight.local = await makeDetection(hub, { satellite: lodz, at: new Date(`${next}T02:45:00Z`) });
    });
    after(() => hub.close());

    test('Darwin Core: every file of the archive the same', async () => {
      const both = await bothWays(hub, team.id, { kind: 'dwca' });
      const { sql, rows } = both;
      const [a, b] = [await unzip(both.a), await unzip(both.b)];
      assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
      // eml.xml names the moment each file was made.
      const text = (m: Map<string, Buffer>, name: string) =>
        m
          .get(name)!
          .toString('utf8')
          .replace(/chorus-export-\d+/, 'chorus-export-T')
          .replace(/Generated [^<]+\./, 'Generated T.');
      for (const name of a.keys()) assert.equal(text(a, name), text(b, name), name);
      const occurrences = a.get('occurrence.txt')!.toString('utf8').trimEnd().split('\n');
      assert.equal(occurrences.length, 1 + 18, 'a header and the eighteen rows that are occurrences');
      const ids = occurrences.map((l) => l.split('\t')[0]);
      const at = (id: string) => ids.indexOf(id);
      assert.deepEqual(
        [midnight.before, midnight.eagle, midnight.at, midnight.nextEagle, midnight.local, midnight.localEagle].map(at),
        [13, 14, 15, 16, 17, 18],
        'the eagle of 23:00–24:00 UTC after the row a millisecond before midnight, before the row at midnight; the next hour’s eagle after that; the eagle of 02:00–03:00 UTC after the row of 02:45',
      );
      assert.ok(
        occurrences.some((l) => l.includes('confidence 0.13 (calibrated 0.13)')),
        'toFixed takes the larger of a tie',
      );
      assert.ok(
        occurrences.some((l) => l.includes('52.507813\t-1.007813')),
        'coordinates on a tie round away from zero',
      );
      assert.ok(
        occurrences.some((l) => l.includes('-02:30')),
        'the zone’s half-hour offset',
      );
      assert.equal(sql.filename, rows.filename);
    });

    for (const geoprivacy of ['open', 'private'] as const)
      test(`iNaturalist (${geoprivacy}): the same Latin-1 bytes`, async () => {
        const { sql, a, b } = await bothWays(hub, team.id, { kind: 'inaturalist', options: { geoprivacy } });
        assert.equal(a.toString('latin1'), b.toString('latin1'));
        assert.equal(sql.contentType, 'text/csv; charset=iso-8859-1');
        const text = a.toString('latin1');
        assert.ok(text.includes('"Lodz\tNord\nSüd"'), 'transliterated, and quoted for its line break');
        assert.ok(text.includes('JinChiQue Zeisig'), text);
        assert.ok(text.includes('Überfink'), 'composed to a Latin-1 letter, the C1 control dropped');
        assert.ok(text.includes(`"'=SUM(A1)`), 'the formula guard on the description');
      });

    test('a team with no calibration curve (the confidence rounded once for both cells): the same both ways', async () => {
      const f = factories(hub);
      const plain = await f.team(await f.user());
      const sat = await makeSatellite(hub, plain, null, 'Heide');
      for (const [i, confidence] of [0.125, 0.835, 0.625].entries())
        await makeDetection(hub, { satellite: sat, confidence, at: new Date(Date.parse(`${day}T10:00:00Z`) + i * 60_000) });
      const files = async (kind: 'dwca' | 'inaturalist') => {
        const { a, b } = await bothWays(hub, plain.id, { kind });
        return [a, b];
      };
      const [dwcSql, dwcRows] = await files('dwca');
      const occurrence = async (zip: Buffer) => (await unzip(zip)).get('occurrence.txt')!.toString('utf8');
      const text = await occurrence(dwcSql);
      assert.equal(text, await occurrence(dwcRows));
      assert.deepEqual(
        text
          .trimEnd()
          .split('\n')
          .slice(1)
          .map((l) => l.split('\t')[15]),
        [
          'confidence 0.13 (calibrated 0.13), model builtin',
          'confidence 0.84 (calibrated 0.84), model builtin',
          'confidence 0.63 (calibrated 0.63), model builtin',
        ],
      );
      const [inatSql, inatRows] = await files('inaturalist');
      assert.equal(inatSql.toString('latin1'), inatRows.toString('latin1'));
      assert.match(inatSql.toString('latin1'), /confidence 0\.84 \(calibrated 0\.84\), model builtin/);
    });

    describe('more observations than iNaturalist takes in a file', () => {
      before(async () => {
        const sat = await makeSatellite(hub, team, null, 'Bulk');
        await hub.sql.query(
          `INSERT INTO detections (id, tenant_id, satellite_id, chunk_id, species_code, scientific_name, common_name, category, confidence,
           detected_at, start_ms, end_ms, model_id, created_at)
         SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'eurrob1', 'Erithacus rubecula', 'Robin ' || g, 'bird', 0.9,
           '2026-04-01T00:00:00Z'::timestamptz + g * interval '1 second', 0, 3000, 'builtin', now()
         FROM generate_series(1, 20000) AS g`,
          [team.id, sat.id],
        );
      });

      test('a zip of parts of 9,999 observations each, the same parts both ways', async () => {
        const both = await bothWays(hub, team.id, { kind: 'inaturalist' });
        const [sql, rows] = [await unzip(both.a), await unzip(both.b)];
        assert.deepEqual([...sql.keys()], ['inaturalist-part-1.csv', 'inaturalist-part-2.csv', 'inaturalist-part-3.csv']);
        for (const [name, text] of sql) assert.equal(text.toString('latin1'), rows.get(name)!.toString('latin1'), name);
        const lines = [...sql.values()].map((t) => t.toString('latin1').trimEnd().split('\r\n').length - 1);
        assert.deepEqual(lines, [9999, 9999, 20000 + 18 - 2 * 9999]);
      });
    });
  },
);
