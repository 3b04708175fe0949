/**
 * The eBird checklist file written two ways (issue 34): aggregated by the database under COPY
 * (formats/ebird-lines.ts, what PostgreSQL serves) and from rows in JavaScript (formats/ebird.ts:
 * PGlite, and the tests' small part limits). The two must give the same file byte for byte, held
 * here over where they could part: a half-hour zone, names eBird's rules clean (commas, quotes,
 * line breaks, a formula), two satellites of one name, a place looked up and none, several models
 * (one the hub does not have), equal confidences among the three linked detections, a call that
 * lasts, a sensitive species generalised, and rows left out (rejected, not a bird, not in eBird's
 * taxonomy). Then a file past 1 MB: the same parts, whole checklists in each.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { makeDetection, makeSatellite, type TestTeam } from './helpers/factories.ts';
import { bothWays, halfHourTeam, unzip } from './helpers/export-files.ts';
import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { DEFAULT_EBIRD_NAMES_PATH, type EbirdNamesFile } from '../src/modules/exports/formats/ebird-names.ts';

const DATABASE_URL = process.env.DATABASE_URL;

describe(
  'eBird file: the database’s checklists and the rows’ writer agree',
  { skip: DATABASE_URL ? false : 'DATABASE_URL is not set' },
  () => {
    let hub: Hub;
    let team: TestTeam;
    const ids: string[] = [];
    const day = '2026-03-10';

    const both = (options = {}) => bothWays(hub, team.id, { kind: 'checklist', options });

    before(async () => {
      hub = await startHub();
      const { owner, team: t } = await halfHourTeam(hub);
      team = t;
      const weiher = await makeSatellite(hub, team, owner, 'Kottenforst, "Weiher"\nSüd');
      const formula = await makeSatellite(hub, team, owner, '=cmd|x');
      const twinA = await makeSatellite(hub, team, owner, 'Twin');
      const twinB = await makeSatellite(hub, team, owner, 'Twin');
      // Bonn (DE-NW), a coordinate on a tie of six decimals, and no position at all.
      await hub.sql.query('UPDATE satellites SET latitude = 50.7078125, longitude = 7.0078125 WHERE id = $1', [weiher.id]);
      await hub.sql.query('UPDATE satellites SET latitude = -33.9, longitude = 151.2 WHERE id = $1', [formula.id]);
      await hub.sql.query('UPDATE satellites SET latitude = 50.7, longitude = 7.1 WHERE id = $1', [twinA.id]);
      const at = (minutes: number, d = day) => new Date(Date.parse(`${d}T12:00:00Z`) + minutes * 60_000 + 123);
      const rows: Array<Parameters<typeof makeDetection>[1]> = [
        // Four blackbirds on one checklist: equal confidences (the earlier linked first), a fourth not linked.
        { satellite: weiher, at: at(0), confidence: 0.625, code: 'eurbla', scientificName: 'Turdus merula', commonName: 'Amsel' },
        { satellite: weiher, at: at(1), confidence: 0.835, code: 'eurbla', scientificName: 'Turdus merula', modelId: 'birdnet, "2.4"' },
        { satellite: weiher, at: at(2), confidence: 0.835, code: 'eurbla', scientificName: 'Turdus merula' },
        { satellite: weiher, at: at(3), confidence: 0.125, code: 'eurbla', scientificName: 'Turdus merula' },
        { satellite: weiher, at: at(4), confidence: 0.5, code: 'eurrob1', modelId: 'perch-2' },
        { satellite: weiher, at: at(5), confidence: 0.9, code: 'comcha', scientificName: 'Fringilla coelebs', modelId: 'perch-2' },
        // Left out: rejected, not a bird, not in eBird's taxonomy.
        { satellite: weiher, at: at(6), verificationStatus: 'rejected' },
        { satellite: weiher, at: at(7), code: 'dog', commonName: 'Dog', scientificName: 'Canis familiaris', category: 'other' },
        { satellite: weiher, at: at(8), code: 'zzznotabird', commonName: 'Nothing', scientificName: 'Nihil nihil' },
        // St John's is UTC−02:30 in March: 02:00Z is still the 10th there (this checklist), 03:00Z the 11th.
        { satellite: weiher, at: new Date(`2026-03-11T02:00:00.250Z`), confidence: 0.3, code: 'eurbla', scientificName: 'Turdus merula' },
        { satellite: weiher, at: new Date(`2026-03-11T03:00:00.250Z`), code: 'eurbla', scientificName: 'Turdus merula' },
        { satellite: formula, at: at(10), code: 'eurrob1', confidence: 0.815 },
        { satellite: twinA, at: at(11), code: 'eurrob1' },
        { satellite: twinB, at: at(9), code: 'eurrob1' },
        { satellite: twinB, at: at(12), code: 'comcha', scientificName: 'Fringilla coelebs' },
        // A sensitive species (the hub's seed list): its place on the grid, its time the hour, no satellite name.
        { satellite: weiher, at: at(13), code: 'goleag', commonName: 'Golden Eagle', scientificName: 'Aquila chrysaetos' },
        { satellite: twinA, at: at(14), code: 'goleag', commonName: 'Golden Eagle', scientificName: 'Aquila chrysaetos' },
      ];
      for (const r of rows) ids.push(await makeDetection(hub, r));
      // A call that lasts: the checklist's effort runs to its end.
      const long = await makeDetection(hub, { satellite: formula, at: at(20), code: 'comcha', scientificName: 'Fringilla coelebs' });
      await hub.sql.query(`UPDATE detections SET call_chunks = 40, call_end_at = $2 WHERE id = $1`, [long, at(200)]);
    });
    after(() => hub.close());

    test('presence: the same bytes, and what the file holds', async () => {
      const { sql, rows, a, b } = await both();
      assert.equal(a.toString('utf8'), b.toString('utf8'));
      assert.equal(sql.contentType, 'text/csv; charset=utf-8');
      assert.equal(sql.filename, rows.filename);
      const lines = a.toString('utf8').split('\r\n').slice(0, -1);
      for (const l of lines) {
        assert.equal(l.split(',').length, 19, l);
        assert.ok(!l.includes('"'), l);
      }
      const weiher = lines.filter((l) => l.includes("Kottenforst; 'Weiher' Süd,50.707813,7.007813,03/10/2026,09:30,NW,DE"));
      assert.equal(weiher.length, 3, 'blackbird, robin and chaffinch on the first day');
      const blackbird = weiher.find((l) => l.startsWith('Eurasian Blackbird,Turdus,merula,X,'))!;
      assert.ok(blackbird, lines.join('\n'));
      assert.match(blackbird, /\(model birdnet; '2\.4'; best confidence 0\.84\); 5 calls; /);
      assert.ok(blackbird.includes("models birdnet; '2.4'; builtin; perch-2) from 7 calls"), blackbird);
      assert.ok(
        lines.some((l) => l.startsWith('Eurasian Blackbird,') && l.includes(',03/11/2026,00:30,')),
        'the next local day: a checklist of its own',
      );
      assert.ok(
        lines.some((l) => l.includes(",'=cmd|x,")),
        'the formula guard on the location',
      );
      assert.ok(
        lines.some((l) => l.includes(',withheld,50.700000,7.000000,03/10/2026,')),
        'a sensitive species on the grid, no satellite',
      );
      assert.ok(!a.toString('utf8').includes('Dog') && !a.toString('utf8').includes('Nothing'));
      assert.ok(
        lines.some((l) => /,Stationary,1,(19[0-9]|20[0-9]),N,/.test(l)),
        'the long call sets the effort',
      );
    });

    test('counts of calls: the same bytes', async () => {
      const { a, b } = await both({ counts: 'calls' });
      assert.equal(a.toString('utf8'), b.toString('utf8'));
      assert.ok(a.toString('utf8').includes('Eurasian Blackbird,Turdus,merula,5,'));
    });

    describe('past 1 MB', () => {
      before(async () => {
        const sat = await makeSatellite(hub, team, null, 'Bulk');
        // 40 days of 100 species of eBird's taxonomy: 4,000 checklist lines, over several parts of 1 MB.
        const names = JSON.parse(gunzipSync(fs.readFileSync(DEFAULT_EBIRD_NAMES_PATH)).toString('utf8')) as EbirdNamesFile;
        const codes = names.code.filter((_, i) => names.category[i] === 'species').slice(0, 100);
        await hub.sql.query(
          `INSERT INTO detections (id, tenant_id, satellite_id, chunk_id, species_code, scientific_name, common_name, category, confidence,
           detected_at, start_ms, end_ms, model_id, created_at)
         SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), ($3::text[])[g % 100 + 1], 'X y', 'X', 'bird', 0.5 + (g % 7) / 20.0,
           '2026-04-01T12:00:00Z'::timestamptz + (g / 100) * interval '1 day' + (g % 100) * interval '1 minute', 0, 3000, 'builtin', now()
         FROM generate_series(0, 3999) AS g`,
          [team.id, sat.id, codes],
        );
      });

      test('a zip of the same parts, each under 1 MB, no checklist split', async () => {
        const { sql, a, b } = await both();
        assert.equal(sql.contentType, 'application/zip');
        const [pa, pb] = [await unzip(a), await unzip(b)];
        assert.deepEqual([...pa.keys()], [...pb.keys()]);
        assert.ok(pa.size >= 2, `${pa.size} parts`);
        const seen = new Set<string>();
        for (const [name, text] of pa) {
          assert.equal(text.toString('utf8'), pb.get(name)!.toString('utf8'), name);
          assert.ok(text.length <= 1_000_000, `${name}: ${text.length} bytes`);
          const lists = new Set(
            text
              .toString('utf8')
              .split('\r\n')
              .slice(0, -1)
              .map((l) => l.split(',').slice(5, 10).join(',')),
          );
          for (const l of lists) {
            assert.ok(!seen.has(l), `${l} in two parts`);
            seen.add(l);
          }
        }
      });
    });
  },
);
