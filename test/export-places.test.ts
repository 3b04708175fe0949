/**
 * Issue 34, points 6 and 7: country and state in the eBird and xeno-canto files, looked up
 * offline from the satellite's position (src/modules/places, assets/places), and xeno-canto's
 * whole-call recording with the automatic flag and sound types from its vocabulary. The files
 * come from a running hub over HTTP and are parsed back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { countryName, DEFAULT_PLACES_PATH, placeAt } from '../src/modules/places/index.ts';
import { fetchBytes, unzip } from './helpers/export-files.ts';

/** The RIFF chunks of a WAV, read from its header: fmt fields and the data chunk's bytes. */
function readRiff(buf: Buffer) {
  assert.equal(buf.toString('latin1', 0, 4), 'RIFF');
  assert.equal(buf.readUInt32LE(4), buf.length - 8, 'RIFF size is the file less 8 bytes');
  assert.equal(buf.toString('latin1', 8, 12), 'WAVE');
  let offset = 12;
  let fmt: { format: number; channels: number; sampleRate: number; bits: number } | null = null;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      fmt = {
        format: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bits: buf.readUInt16LE(body + 14),
      };
    }
    if (id === 'data') {
      assert.equal(body + size, buf.length, 'the data chunk runs to the end of the file');
      return { fmt: fmt!, data: buf.subarray(body, body + size), samples: size / 2 };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('no data chunk');
}

/** xeno-canto's sound types (its upload form's list). */
const XC_SOUND_TYPES = new Set([
  'song',
  'call',
  'alarm call',
  'flight call',
  'nocturnal flight call',
  'begging call',
  'drumming',
  'duet',
  'dawn song',
  'subsong',
]);

describe('places: the offline lookup and its data', () => {
  test('country and first-level subdivision at known positions; nothing in the open sea', () => {
    assert.deepEqual(placeAt(50.7374, 7.0982), { country: 'DE', subdivision: 'DE-NW' }); // Bonn
    assert.deepEqual(placeAt(50.578, 7.23), { country: 'DE', subdivision: 'DE-RP' }); // Remagen, 18 km up the Rhine
    // Either side of the Rhine border, 4.6 km apart: Kehl and Strasbourg.
    assert.deepEqual(placeAt(48.573, 7.815), { country: 'DE', subdivision: 'DE-BW' });
    assert.deepEqual(placeAt(48.5734, 7.7521), { country: 'FR', subdivision: 'FR-GES' });
    // Second-level Natural Earth units take their first level.
    assert.deepEqual(placeAt(41.9, 12.5), { country: 'IT', subdivision: 'IT-62' }); // Rome, Lazio
    assert.deepEqual(placeAt(55.95, -3.19), { country: 'GB', subdivision: 'GB-SCT' }); // Edinburgh
    assert.deepEqual(placeAt(40.4168, -3.7038), { country: 'ES', subdivision: 'ES-MD' }); // Madrid
    assert.deepEqual(placeAt(40.7128, -74.006), { country: 'US', subdivision: 'US-NY' });
    assert.equal(placeAt(54.5, 4.0), null, 'the North Sea');
    assert.equal(placeAt(40, -30), null, 'the Atlantic');
    assert.equal(placeAt(null, 7), null);
    assert.equal(countryName('DE'), 'Germany');
  });

  test('the data file names its source and ships with its attribution', () => {
    const gz = fs.readFileSync(DEFAULT_PLACES_PATH);
    assert.ok(gz.length < 3_000_000, `compact: ${gz.length} bytes`);
    const data = JSON.parse(gunzipSync(gz).toString('utf8')) as { format: string; source: string; codes: string[] };
    assert.equal(data.format, 'chorus-places/1');
    assert.match(data.source, /Natural Earth/);
    assert.ok(data.codes.includes('DE DE-NW'));
    const attribution = fs.readFileSync(path.join(path.dirname(DEFAULT_PLACES_PATH), 'ATTRIBUTION.md'), 'utf8');
    assert.match(attribution, /Natural Earth/);
    assert.match(attribution, /public domain/);
    assert.match(attribution, /admin1\.json\.gz/);
    assert.match(attribution, /scripts\/build-places\.ts/);
  });
});

describe('places in the eBird and xeno-canto files', () => {
  let hub: Hub;
  let member: TestUser;
  let team: TestTeam;
  const base = new Date('2026-06-10T05:00:00Z');
  const at = (seconds: number) => new Date(base.getTime() + seconds * 1000);
  const window = `start=${encodeURIComponent(at(-3600).toISOString())}&end=${encodeURIComponent(at(3600).toISOString())}`;
  const sats: Record<string, { id: string; tenantId: string; name: string }> = {};
  /** Three chunks of a call, of different lengths so their sum is telling. */
  const lengths = [144_000, 143_000, 141_500];
  const pcm: Int16Array[] = lengths.map((n, k) => new Int16Array(n).map((_, i) => ((i * (k + 3)) % 20_000) - 10_000));
  const ids: Record<string, string> = {};

  before(async () => {
    hub = await startHub();
    const f = factories(hub);
    const owner = await f.user();
    team = await f.team(owner);
    member = await f.member(team, 'member');
    const positions: Record<string, [number, number] | null> = {
      Bonn: [50.7374, 7.0982],
      Kehl: [48.573, 7.815],
      Strasbourg: [48.5734, 7.7521],
      Sea: [54.5, 4.0],
      Nowhere: null,
    };
    for (const [name, pos] of Object.entries(positions)) {
      sats[name] = await makeSatellite(hub, team, owner, name);
      if (pos) await hub.sql.query('UPDATE satellites SET latitude = $2, longitude = $3 WHERE id = $1', [sats[name].id, ...pos]);
      if (name !== 'Bonn') await makeDetection(hub, { satellite: sats[name], at: at(600), verificationStatus: 'confirmed' });
    }

    // In Bonn: a call over three chunks (c1..c3) between two chunks that are not part of it.
    const bonn = sats.Bonn!;
    await makeChunk(hub, { satellite: bonn, audio: makeWav(1000), at: at(-3) });
    const chunks = [];
    for (let k = 0; k < 3; k++) chunks.push(await makeChunk(hub, { satellite: bonn, audio: makeWav(pcm[k]!), at: at(3 * k) }));
    await makeChunk(hub, { satellite: bonn, audio: makeWav(2000), at: at(9) });
    // The first row's window spans c1 and c2 (span_chunk_ids); a stitched row heard it in c3.
    ids.call = await makeDetection(hub, { chunk: chunks[0], at: at(0), verificationStatus: 'confirmed', callChunks: 2 });
    await hub.sql.query('UPDATE detections SET span_chunk_ids = $2::uuid[] WHERE id = $1', [ids.call, [chunks[0]!.id, chunks[1]!.id]]);
    await makeDetection(hub, { chunk: chunks[2], at: at(6), callId: ids.call, verificationStatus: 'confirmed' });
    // A model whose label names the sound type (a custom model's "(call)" qualifier).
    const owlChunk = await makeChunk(hub, { satellite: bonn, audio: makeWav(3000), at: at(300) });
    ids.owl = await makeDetection(hub, {
      chunk: owlChunk,
      at: at(300),
      code: 'x-strix-aluco',
      commonName: 'Tawny Owl (call)',
      scientificName: 'Strix aluco',
      verificationStatus: 'confirmed',
    });
  });
  after(() => hub.close());

  test('eBird: State/Province and Country Code from the position; empty at sea or without one', async () => {
    const res = await fetchBytes(hub, `/export/checklist?tenantId=${team.id}&${window}`, member);
    assert.equal(res.status, 200, res.body.toString());
    const lines = res.body
      .toString('utf8')
      .trimEnd()
      .split('\r\n')
      .map((l) => l.split(','));
    const placeOf = new Map(lines.map((l) => [l[5], [l[10], l[11]]]));
    for (const l of lines) assert.equal(l.length, 19);
    assert.deepEqual(Object.fromEntries(placeOf), {
      Bonn: ['NW', 'DE'],
      Kehl: ['BW', 'DE'],
      Strasbourg: ['GES', 'FR'],
      Sea: ['', ''],
      Nowhere: ['', ''],
    });
  });

  test('xeno-canto: one WAV holds the whole call (three chunks joined); country, automatic flag, sound types', async () => {
    const res = await fetchBytes(hub, `/export/recording?tenantId=${team.id}&${window}`, member);
    assert.equal(res.status, 200, res.body.toString());
    const files = await unzip(res.body);

    const call = readRiff(files.get(`audio/${ids.call}.wav`)!);
    assert.deepEqual(call.fmt, { format: 1, channels: 1, sampleRate: 48_000, bits: 16 });
    assert.equal(call.samples, lengths[0]! + lengths[1]! + lengths[2]!, 'the sum of the three chunks');
    const joined = Buffer.concat(pcm.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
    assert.ok(call.data.equals(joined), 'the chunks in order, nothing from the chunks around the call');

    const meta = parse(files.get('metadata.csv')!, { columns: true }) as Record<string, string>[];
    const byFile = new Map(meta.map((m) => [m.file, m]));
    const rec = byFile.get(`audio/${ids.call}.wav`)!;
    assert.equal(rec.country, 'Germany');
    assert.equal(rec.automatic_recording, 'yes');
    assert.equal(rec.sound_type, '', 'a species model does not say how it called');
    assert.doesNotMatch(rec.remarks, /first .* s\./, 'the whole call, not cut');
    assert.equal(byFile.get(`audio/${ids.owl}.wav`)!.sound_type, 'call');
    for (const m of meta) {
      assert.ok(m.sound_type === '' || XC_SOUND_TYPES.has(m.sound_type), `sound type "${m.sound_type}" is xeno-canto's`);
      assert.equal(m.automatic_recording, 'yes');
    }
  });
});
