/**
 * Sensitive species cannot be joined to a precise row (issue 33, point 4). A golden eagle (on the
 * hub's sensitive list) and a robin are heard in the same chunk; a robin a few minutes before and
 * a wren a few minutes after in other chunks of the same satellite. Every output that leaves the
 * team — scheduled exports through a channel, the four submission formats as a member downloads
 * them, share links and their preview, the public page and its preview, alert webhooks — is
 * produced, and no field of the eagle's row may equal or link to the robin's: no exact time (the
 * hour for files and messages, the day for the public), no chunk, satellite id or name, audio or
 * recording, exact coordinate, and no place in the file that gives its time away.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { ALERT_ENV } from './helpers/alerts.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver, type Receiver } from './helpers/receivers.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { unzip } from './helpers/export-files.ts';

const LAT = 52.51634;
const LON = 13.37771;
const SATELLITE = 'Eyrie Ledge North';
const EAGLE = { code: 'goleag', scientificName: 'Aquila chrysaetos', commonName: 'Golden Eagle' };
const WREN = { code: 'eurwre', scientificName: 'Troglodytes troglodytes', commonName: 'Eurasian Wren' };
const HOUR = 3_600_000;

describe('sensitive species: no join to a precise row', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  let sat: { id: string; tenantId: string; name: string };
  let receiver: Receiver;
  let sharedChunk: string;
  let eagleId: string;
  let robinId: string;
  /** The shared chunk's time: 23 min 17.25 s past an hour two hours back. */
  let at: Date;
  let hourStart: string;

  before(async () => {
    hub = await startHub({ env: { ...ALERT_ENV, IMAGES_PROVIDERS: 'off' } });
    api = client(hub.url);
    const f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    sat = await makeSatellite(hub, team, owner, SATELLITE);
    await hub.sql.query('UPDATE satellites SET latitude = $2, longitude = $3 WHERE id = $1', [sat.id, LAT, LON]);
    receiver = await startReceiver();
    const base = Math.floor(hub.clock.now().getTime() / HOUR) * HOUR - 2 * HOUR;
    at = new Date(base + 23 * 60_000 + 17_250);
    hourStart = new Date(base).toISOString();
    const wav = makeWav(48_000);
    const satellite = { id: sat.id, tenantId: team.id };
    const chunkAt = async (t: Date) => (await makeChunk(hub, { satellite, at: t, audio: wav })).id;
    sharedChunk = await chunkAt(at);
    const before5 = new Date(at.getTime() - 5 * 60_000);
    const after10 = new Date(at.getTime() + 10 * 60_000);
    await makeDetection(hub, { satellite, chunkId: await chunkAt(before5), at: before5 });
    eagleId = await makeDetection(hub, { satellite, chunkId: sharedChunk, at, ...EAGLE, startMs: 3000, endMs: 6000 });
    robinId = await makeDetection(hub, { satellite, chunkId: sharedChunk, at });
    await makeDetection(hub, { satellite, chunkId: await chunkAt(after10), at: after10, ...WREN });
  });
  after(async () => {
    await receiver.close();
    await hub.close();
  });

  /** What would place the eagle: the shared chunk, the satellite, the exact position or the exact minute. */
  function assertNoLink(text: string, what: string) {
    assert.ok(!text.includes(sharedChunk), `${what}: no chunk id`);
    assert.ok(!text.includes(sat.id), `${what}: no satellite id`);
    assert.ok(!text.includes(SATELLITE), `${what}: no satellite name`);
    assert.ok(!text.includes('52.516') && !text.includes('13.377'), `${what}: no exact position`);
    assert.ok(!text.includes('/api/audio/'), `${what}: no audio link`);
    const minute = at.toISOString().slice(11, 16); // HH:23 in UTC, the team's zone
    assert.ok(!text.includes(minute), `${what}: no exact time (${minute}) in ${text}`);
  }

  async function download(path: string): Promise<Buffer> {
    const res = await fetch(`${hub.url}/api${path}${path.includes('?') ? '&' : '?'}tenantId=${team.id}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    assert.equal(res.status, 200, path);
    return Buffer.from(await res.arrayBuffer());
  }

  test('the team’s own CSV keeps the eagle exact (the contrast)', async () => {
    const rows: Record<string, string>[] = parse(await download('/export/detections?format=csv'), { columns: true });
    const eagle = rows.find((r) => r.species_code === 'goleag')!;
    assert.equal(eagle.detected_at_utc, at.toISOString());
    assert.equal(eagle.chunk_id, sharedChunk);
  });

  test('scheduled export through a webhook: the eagle’s hour, no chunk, and its place in the file says nothing', async () => {
    const ch = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'webhook', name: 'Archive', config: { url: `${receiver.url}/exports` } },
      owner,
    );
    assert.equal(ch.status, 201, ch.text);
    // Daily at the next full hour: the first run covers the day before it, the shared chunk included.
    const schedule = `0 ${(hub.clock.now().getUTCHours() + 1) % 24} * * *`;
    let next = '';
    for (const format of ['csv', 'json'] as const) {
      const sched = await api.post(
        '/exports/scheduled',
        { tenantId: team.id, name: `Daily ${format}`, format, schedule, timeZone: 'UTC', channelId: ch.body.id },
        owner,
      );
      assert.equal(sched.status, 201, sched.text);
      next = sched.body.nextRunAt;
    }
    hub.clock.advance(new Date(next).getTime() - hub.clock.now().getTime() + 1000);
    assert.equal(await hub.services.scheduledExports.tick(), 2);
    const got = await waitFor('both export webhooks', async () => {
      const r = receiver.received.filter((x) => x.path === '/exports');
      return r.length >= 2 && r.map((x) => JSON.parse(x.body.toString()).data);
    });

    const csv = got.find((d: any) => d.format === 'csv');
    const rows: Record<string, string>[] = parse(csv.content, { columns: true });
    const eagle = rows.find((r) => r.species_code === 'goleag')!;
    const robin = rows.find((r) => r.species_code === 'eurrob1' && r.detected_at_utc === at.toISOString())!;
    assert.ok(eagle && robin, csv.content);
    assert.equal(robin.chunk_id, sharedChunk, 'the precise row is there to join against');
    assert.equal(eagle.detected_at_utc, hourStart);
    assert.equal(eagle.end_at_utc, new Date(Date.parse(hourStart) + HOUR).toISOString());
    assert.equal(eagle.detected_at_local, hourStart.slice(0, 19).replace('T', ' '));
    for (const col of ['detected_at_utc', 'detected_at_local', 'end_at_utc', 'satellite_id', 'satellite_name', 'chunk_id', 'audio_url'])
      assert.notEqual(eagle[col], robin[col], `${col} joins the eagle to the robin`);
    assert.equal(eagle.audio_url, '');
    assertNoLink(Object.values(eagle).join(','), 'scheduled CSV');
    // Rows are in time order: the eagle comes after every row of its hour, not beside the robin.
    const eagleAt = rows.indexOf(eagle);
    const sameHour = rows.filter((r) => r !== eagle && r.detected_at_utc.slice(0, 13) === hourStart.slice(0, 13));
    assert.equal(sameHour.length, 3);
    for (const r of sameHour) assert.ok(rows.indexOf(r) < eagleAt, `the eagle sits after ${r.species_code} ${r.detected_at_utc}`);

    const json = JSON.parse(got.find((d: any) => d.format === 'json').content) as Record<string, unknown>[];
    const jEagle = json.find((r) => r.speciesCode === 'goleag')!;
    assert.equal(jEagle.detectedAt, hourStart);
    assert.equal(jEagle.endAt, new Date(Date.parse(hourStart) + HOUR).toISOString(), 'ends with its hour');
    assert.equal(json.indexOf(jEagle), json.length - 1, 'last of its hour');
    assertNoLink(JSON.stringify(jEagle), 'scheduled JSON');
  });

  test('iNaturalist CSV downloaded by a member: hour, grid, obscured, no links', async () => {
    const rows: string[][] = parse(await download('/export/observation?format=inaturalist'));
    const eagle = rows.find((r) => r[0] === EAGLE.scientificName)!;
    const robin = rows.find((r) => r[0] === 'Erithacus rubecula' && r[1].includes(at.toISOString().slice(11, 19)))!;
    assert.ok(eagle && robin, JSON.stringify(rows));
    assert.equal(eagle[1], `${hourStart.slice(0, 10)} ${hourStart.slice(11, 19)} +00:00`);
    assert.equal(eagle[3], 'withheld');
    assert.equal(eagle[4], '52.500000');
    assert.equal(eagle[7], 'obscured');
    assertNoLink(eagle.join(','), 'iNaturalist');
    assert.equal(rows.indexOf(eagle), rows.length - 1, 'after the wren of the same hour');
  });

  test('Darwin Core Archive: eventDate an hour interval, no media line, generalisation stated', async () => {
    const files = await unzip(await download('/export/observation?format=dwca'));
    const [header, ...lines] = files
      .get('occurrence.txt')!
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    const col = (n: string) => header.indexOf(n);
    const eagle = lines.find((l) => l[col('scientificName')] === EAGLE.scientificName)!;
    const robin = lines.find((l) => l[col('eventDate')].startsWith(at.toISOString().slice(0, 19)))!;
    assert.ok(eagle && robin);
    const end = new Date(Date.parse(hourStart) + HOUR).toISOString();
    assert.equal(eagle[col('eventDate')], `${hourStart.slice(0, 19)}+00:00/${end.slice(0, 19)}+00:00`);
    assert.equal(eagle[col('locality')], 'withheld');
    assert.equal(eagle[col('associatedMedia')], '');
    assert.match(eagle[col('dataGeneralizations')], /0\.1 degree, time to the hour/);
    assert.match(eagle[col('informationWithheld')], /recording withheld/);
    // Issue 34: a file names a recording only by a public link the export published, and the chunk the eagle was heard in is never published.
    assert.equal(robin[col('associatedMedia')], '');
    assert.ok(!files.get('occurrence.txt')!.toString('utf8').includes(sharedChunk), 'the shared chunk is named nowhere');
    assertNoLink(eagle.join('\t'), 'Darwin Core occurrence');
    const media = files.get('multimedia.txt')!.toString('utf8');
    assert.ok(!media.includes(eagleId), 'no multimedia line for the eagle');
    assert.ok(!media.includes(robinId), 'nor for the robin heard in its chunk');
  });

  test('eBird checklist: the eagle in a withheld checklist starting on the hour', async () => {
    const rows: string[][] = parse(await download('/export/checklist'));
    const eagle = rows.find((r) => r[0] === EAGLE.commonName)!;
    const robin = rows.find((r) => r[0] === 'European Robin')!;
    assert.ok(eagle && robin, JSON.stringify(rows));
    assert.equal(eagle[5], 'withheld');
    assert.equal(eagle[6], '52.500000');
    assert.equal(eagle[9], hourStart.slice(11, 16));
    assert.equal(eagle[14], '60', 'Duration: the hour it was heard in');
    assert.notEqual(eagle[9], robin[9]);
    assertNoLink(eagle.join(','), 'eBird');
  });

  test('xeno-canto zip: the eagle’s recording (the robin’s chunk) is left out', async () => {
    const files = await unzip(await download('/export/recording?includeUnverified=1'));
    assert.ok(files.has(`audio/${robinId}.wav`));
    assert.ok(!files.has(`audio/${eagleId}.wav`), 'the same bytes as the robin’s recording');
    assert.ok(!files.get('metadata.csv')!.toString().includes(EAGLE.scientificName));
    assert.match(files.get('missing.txt')!.toString(), new RegExp(`${eagleId},goleag,sensitive_species`));
  });

  test('share link: the day only, no offsets, audio or spectrogram; its preview the same', async () => {
    const link = async (id: string) => {
      const res = await api.get(`/detections/${id}/share`, owner);
      assert.equal(res.status, 200, res.text);
      return new URL(res.body.shareUrl).pathname;
    };
    const eaglePath = await link(eagleId);
    const robinPath = await link(robinId);
    const eagle = (await api.get(eaglePath)).body;
    const robin = (await api.get(robinPath)).body;
    assert.equal(robin.detectedAt, at.toISOString(), 'the precise link');
    assert.equal(eagle.detectedAt, `${at.toISOString().slice(0, 10)}T00:00:00.000Z`);
    assert.equal(eagle.timePrecision, 'day');
    assert.equal(robin.timePrecision, 'exact');
    assert.equal(eagle.startMs, null);
    assert.equal(eagle.endMs, null);
    assert.equal(eagle.audioUrl, null);
    assert.equal(eagle.spectrogramUrl, null);
    assert.equal(eagle.place, null);
    assertNoLink(JSON.stringify(eagle), 'share view');
    const [, , , id, token] = eaglePath.split('/');
    assert.equal((await api.get(`/share/audio/${id}/${token}`)).status, 404, 'its chunk’s audio is not served');
    assert.equal((await api.get(`/share/spectrogram/${id}/${token}`)).status, 404);
    const og = (await api.get(`${eaglePath}/og`)).text;
    assert.ok(!og.includes('og:audio') && !og.includes('og:image'), og);
    assert.match(og, new RegExp(`Heard on ${at.toISOString().slice(0, 10)}`));
    assertNoLink(og.replace(/\/share\/detection\/[^"]+/g, ''), 'share preview');
  });

  test('public page: the eagle by the day, last among the day’s firsts', async () => {
    await api.put('/settings/platform', { allow_public_pages: true }, hubAdmin);
    await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page: true, public_page_show_sensitive: true }, owner);
    const page = await api.get(`/public/teams/${team.slug}`);
    assert.equal(page.status, 200, page.text);
    const day = page.body.recentFirsts.find((d: any) => d.species.some((s: any) => s.code === 'goleag'));
    assert.equal(day.date, at.toISOString().slice(0, 10));
    // In time order (newest first) the eagle would sit between the wren and the robin.
    assert.deepEqual(
      day.species.map((s: any) => s.code),
      ['eurwre', 'eurrob1', 'goleag'],
    );
    assertNoLink(JSON.stringify(page.body), 'public page');
    assertNoLink((await api.get(`/public/teams/${team.slug}/og`)).text, 'public page preview');
  });

  test('alert webhook: the eagle’s delivery carries the hour, the robin’s the instant', async () => {
    const ch = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'webhook', name: 'Hook', config: { url: `${receiver.url}/alerts` } },
      owner,
    );
    assert.equal(ch.status, 201, ch.text);
    const rule = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'All', type: 'detection', channelIds: [ch.body.id] },
      owner,
    );
    assert.equal(rule.status, 201, rule.text);
    const announce = (id: string, d: { speciesCode: string; scientificName: string; commonName: string }) =>
      hub.services.alerting.engine.onDetection('announced', {
        id,
        tenantId: team.id,
        satelliteId: sat.id,
        satelliteName: SATELLITE,
        modelId: null,
        confidence: 0.9,
        isRare: false,
        isFirstOfDay: false,
        isFirstOfSeason: false,
        detectedAt: at.toISOString(),
        ...d,
      });
    hub.clock.freeze(hub.clock.now());
    const now = hub.clock.now();
    await announce(eagleId, { speciesCode: EAGLE.code, scientificName: EAGLE.scientificName, commonName: EAGLE.commonName });
    await announce(robinId, { speciesCode: 'eurrob1', scientificName: 'Erithacus rubecula', commonName: 'European Robin' });
    const hooks = await waitFor('both alert webhooks', async () => {
      const got = receiver.received.filter((r) => r.path === '/alerts');
      return got.length >= 2 && got.map((r) => JSON.parse(r.body.toString()));
    });
    const eagle = hooks.find((h: any) => h.data.species === EAGLE.scientificName)!;
    const robin = hooks.find((h: any) => h.data.species === 'Erithacus rubecula')!;
    assert.equal(robin.timestamp, now.toISOString());
    assert.equal(eagle.timestamp, new Date(Math.floor(now.getTime() / HOUR) * HOUR).toISOString());
    assert.notEqual(eagle.timestamp, robin.timestamp);
    assert.equal(eagle.data.satelliteName, null);
    assert.ok(!JSON.stringify(eagle).includes(SATELLITE) && !JSON.stringify(eagle).includes(sharedChunk));
  });
});
