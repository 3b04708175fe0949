/**
 * Published recordings (issue 34 item 4): an export for GBIF, iNaturalist or xeno-canto names a
 * recording by a public link only when the team publishes (team setting publish_audio) and the
 * export asks (publishAudio); the link opens the WAV without credentials (as GBIF fetches media),
 * is unguessable, never exists for a chunk a sensitive species was heard in, and ends when a team
 * admin revokes it. Without publishing the media URLs are empty, never a link that answers 401.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { waitFor } from './helpers/wait.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { tsv, unzip } from './helpers/export-files.ts';

const PUBLIC_LINK = /^http:\/\/chorus\.test\/api\/public\/audio\/([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})\.wav$/;

describe('published recordings', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let otherAdmin: TestUser;
  let team: TestTeam;
  const wav: Record<string, Buffer> = {};
  const chunk: Record<string, string> = {};
  const base = new Date('2026-06-10T05:00:00Z');
  const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);

  /** GET of an export with the member's token: status, headers and bytes. */
  async function download(path: string, as: TestUser = member) {
    const res = await fetch(`${hub.url}/api${path}`, { headers: { authorization: `Bearer ${as.token}` } });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  /** A GBIF-style fetch of a link in a file: a plain GET, no cookie, no credentials, redirects not followed. */
  const fetchLink = (link: string, headers: Record<string, string> = {}) =>
    fetch(link.replace('http://chorus.test', hub.url), { redirect: 'manual', headers });

  const publishedRows = async () =>
    Number((await hub.sql.query('SELECT count(*)::int AS n FROM published_audio WHERE tenant_id = $1', [team.id]))[0].n);

  const auditOf = async (action: string) =>
    (await hub.sql.query('SELECT details, actor_user_id AS "by" FROM audit_log WHERE action = $1 AND tenant_id = $2 ORDER BY at, id', [
      action,
      team.id,
    ])) as { details: Record<string, unknown>; by: string | null }[];

  const setPublishing = async (on: boolean) =>
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { publish_audio: on }, owner)).status, 200);

  /** The multimedia rows of a Darwin Core export, by occurrence id. */
  async function dwcaMedia(query = '') {
    const res = await download(`/export/observation?tenantId=${team.id}&format=dwca${query}`);
    assert.equal(res.status, 200, res.body.toString());
    const files = await unzip(res.body);
    return { occurrence: tsv(files.get('occurrence.txt')!), multimedia: tsv(files.get('multimedia.txt')!), raw: files };
  }

  const ids: Record<string, string> = {};

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    admin = await f.member(team, 'admin');
    member = await f.member(team, 'member');
    otherAdmin = await f.user();
    await f.member(await f.team(otherAdmin), 'viewer');
    const sat = await makeSatellite(hub, team, owner, 'Garden');
    await hub.sql.query('UPDATE satellites SET latitude = 52.52, longitude = 13.405 WHERE id = $1', [sat.id]);
    const tone = (hz: number) => makeWav(new Int16Array(9600).map((_, i) => Math.round(Math.sin((2 * Math.PI * hz * i) / 48_000) * 8000)));
    // robin and wren: plain chunks; mixed: a robin beside a sensitive species; owl: the sensitive species alone.
    for (const [name, hz, minute] of [
      ['robin', 2000, 0],
      ['wren', 3000, 5],
      ['mixed', 4000, 10],
      ['owl', 500, 15],
    ] as const) {
      wav[name] = tone(hz);
      chunk[name] = (await makeChunk(hub, { satellite: sat, audio: wav[name], at: at(minute) })).id;
    }
    const c = (name: string) => ({ id: chunk[name], tenantId: team.id, satelliteId: sat.id });
    ids.robin = await makeDetection(hub, { chunk: c('robin'), at: at(0), verificationStatus: 'confirmed' });
    ids.robin2 = await makeDetection(hub, {
      chunk: c('robin'),
      at: at(0),
      code: 'eurbla',
      commonName: 'Eurasian Blackbird',
      scientificName: 'Turdus merula',
      verificationStatus: 'confirmed',
    });
    ids.wren = await makeDetection(hub, {
      chunk: c('wren'),
      at: at(5),
      code: 'winwre4',
      commonName: 'Eurasian Wren',
      scientificName: 'Troglodytes troglodytes',
      verificationStatus: 'confirmed',
    });
    ids.mixedRobin = await makeDetection(hub, { chunk: c('mixed'), at: at(10), verificationStatus: 'confirmed' });
    // Heard in the mixed chunk, filtered out of the export by nothing but its species: still keeps the chunk private.
    ids.mixedOwl = await makeDetection(hub, {
      chunk: c('mixed'),
      at: at(10),
      code: 'eueowl1',
      commonName: 'Eurasian Eagle-Owl',
      scientificName: 'Bubo bubo',
      verificationStatus: 'confirmed',
    });
    ids.owl = await makeDetection(hub, {
      chunk: c('owl'),
      at: at(15),
      code: 'eueowl1',
      commonName: 'Eurasian Eagle-Owl',
      scientificName: 'Bubo bubo',
      verificationStatus: 'confirmed',
    });
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { sensitive_species_extra: ['eueowl1'] }, owner)).status, 200);
  });
  after(() => hub.close());

  test('publishing is off by default: asking for it is refused (409) and no link is created', async () => {
    const settings = await api.get(`/settings/tenant?tenantId=${team.id}`, owner);
    assert.equal(settings.status, 200);
    assert.equal(JSON.stringify(settings.body).includes('"publish_audio"'), true, 'the team setting exists');
    for (const path of [
      `/export/observation?tenantId=${team.id}&format=dwca&publishAudio=1`,
      `/export/observation?tenantId=${team.id}&format=inaturalist&publishAudio=true`,
      `/export/recording?tenantId=${team.id}&publishAudio=1`,
    ]) {
      const res = await api.get(path, member);
      assertError(res, 409, 'AUDIO_PUBLISHING_OFF');
    }
    assert.equal(await publishedRows(), 0);
  });

  test('without the export option the media URLs are empty (not a 401 link) and nothing is published', async () => {
    await setPublishing(true);
    try {
      const { occurrence, multimedia, raw } = await dwcaMedia();
      assert.ok(occurrence.length >= 3, 'the occurrences are there');
      for (const o of occurrence) assert.equal(o.associatedMedia, '', `no media for ${o.occurrenceID}`);
      assert.equal(multimedia.length, 0, 'no multimedia line names a recording nobody can fetch');
      for (const [name, bytes] of raw) assert.ok(!bytes.toString('utf8').includes('/api/audio/'), `${name} has no signed-in audio link`);

      const inat = await download(`/export/observation?tenantId=${team.id}&format=inaturalist`);
      assert.equal(inat.status, 200);
      const text = inat.body.toString('latin1');
      assert.ok(!text.includes('/api/audio/'), 'iNaturalist: no signed-in audio link');
      assert.ok(!text.includes('Audio:'), 'iNaturalist: no audio mentioned');
      assert.equal(await publishedRows(), 0);
    } finally {
      await setPublishing(false);
    }
  });

  test('with the setting and the option, Darwin Core names public links that fetch the WAV without credentials', async () => {
    await setPublishing(true);
    const { occurrence, multimedia } = await dwcaMedia('&publishAudio=1');
    const byId = new Map(occurrence.map((o) => [o.occurrenceID, o]));
    const robinLink = byId.get(ids.robin)!.associatedMedia;
    const m = PUBLIC_LINK.exec(robinLink);
    assert.ok(m, `a public link: ${robinLink}`);
    // Unguessable: a random UUID and a 256-bit signature (43 base64url characters).
    assert.equal(m[2].length, 43);
    // Both detections of the robin chunk name the same link; the wren's chunk has its own.
    assert.equal(byId.get(ids.robin2)!.associatedMedia, robinLink);
    const wrenLink = byId.get(ids.wren)!.associatedMedia;
    assert.match(wrenLink, PUBLIC_LINK);
    assert.notEqual(wrenLink, robinLink);
    // The sensitive species' row (generalised) and the robin heard beside it share no recording.
    assert.equal(byId.get(ids.mixedRobin)!.associatedMedia, '');
    assert.equal(byId.get(ids.owl)?.associatedMedia ?? '', '');
    const media = new Map(multimedia.map((r) => [r.coreid, r]));
    assert.deepEqual([...media.keys()].sort(), [ids.robin, ids.robin2, ids.wren].sort());
    assert.equal(media.get(ids.wren)!.identifier, wrenLink);
    assert.equal(media.get(ids.wren)!.format, 'audio/wav');
    // One row per published chunk; the two sensitive chunks have none.
    assert.equal(await publishedRows(), 2);
    const rows = await hub.sql.query('SELECT chunk_id AS "chunkId" FROM published_audio WHERE tenant_id = $1', [team.id]);
    assert.deepEqual(rows.map((r) => r.chunkId).sort(), [chunk.robin, chunk.wren].sort());
    const audit = await auditOf('audio.published');
    assert.equal(audit.length, 1);
    assert.deepEqual(audit[0].details, { count: 2, format: 'dwca' });
    assert.equal(audit[0].by, member.id);

    // GBIF's fetch: a plain GET with no cookie, following no redirects.
    for (const [link, name] of [
      [robinLink, 'robin'],
      [wrenLink, 'wren'],
    ] as const) {
      const res = await fetchLink(link);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'audio/wav');
      assert.equal(res.headers.get('accept-ranges'), 'bytes');
      assert.equal(res.headers.get('cache-control'), 'public, max-age=3600');
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(wav[name]), `the ${name} chunk's bytes`);
    }
    // The token without .wav opens it too; ranges work as on GET /audio/:chunkId.
    const ranged = await fetchLink(robinLink.replace(/\.wav$/, ''), { range: 'bytes=0-43' });
    assert.equal(ranged.status, 206);
    assert.equal(ranged.headers.get('content-range'), `bytes 0-43/${wav.robin.length}`);
    assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(wav.robin.subarray(0, 44)));
    const beyond = await fetchLink(robinLink, { range: `bytes=${wav.robin.length + 10}-` });
    assert.equal(beyond.status, 416);
  });

  test('exporting again names the same links and creates nothing; iNaturalist and xeno-canto carry them too', async () => {
    const first = await dwcaMedia('&publishAudio=1');
    const before = await publishedRows();
    const inat = await download(`/export/observation?tenantId=${team.id}&format=inaturalist&publishAudio=1`);
    assert.equal(inat.status, 200);
    const rows: Record<string, string>[] = parse(inat.body.toString('latin1'), { columns: true });
    const robinLink = first.occurrence.find((o) => o.occurrenceID === ids.robin)!.associatedMedia;
    const robinRow = rows.find((r) => r.Description.includes(ids.robin))!;
    assert.ok(robinRow.Description.endsWith(`Audio: ${robinLink}`), robinRow.Description);
    const mixed = rows.find((r) => r.Description.includes(ids.mixedRobin))!;
    assert.ok(!mixed.Description.includes('Audio:'), 'the robin beside a sensitive species has no recording');
    // xeno-canto: the zip holds the recording; its remarks name the public link too, or no link without publishing.
    const xc = await download(`/export/recording?tenantId=${team.id}&publishAudio=1`);
    assert.equal(xc.status, 200);
    const meta: Record<string, string>[] = parse((await unzip(xc.body)).get('metadata.csv')!, { columns: true });
    const xcRobin = meta.find((r) => r.file.includes(ids.robin))!;
    assert.ok(xcRobin.remarks.endsWith(`Audio: ${robinLink}`), xcRobin.remarks);
    const plain = await download(`/export/recording?tenantId=${team.id}`);
    const plainText = (await unzip(plain.body)).get('metadata.csv')!.toString('utf8');
    assert.ok(!plainText.includes('Audio:') && !plainText.includes('/api/audio/'), 'no link without publishing');
    assert.equal(await publishedRows(), before);
    assert.equal((await auditOf('audio.published')).length, 1, 'nothing new was published');
  });

  test('a chunk a sensitive species was heard in never gets a link, and a species made sensitive later ends its links', async () => {
    const services = hub.services.publishedAudio;
    const actor = {
      kind: 'session' as const,
      userId: member.id,
      apiKeyId: null,
      email: null,
      ip: '',
      teamId: team.id,
      declaredAudit: null,
    };
    // Even asked directly, the service publishes neither sensitive chunk.
    const links = await services.publish(actor, team.id, [chunk.owl, chunk.mixed], 'dwca');
    assert.equal(links.size, 0);
    assert.equal(
      Number(
        (await hub.sql.query('SELECT count(*)::int AS n FROM published_audio WHERE chunk_id = ANY($1)', [[chunk.owl, chunk.mixed]]))[0].n,
      ),
      0,
    );
    const { occurrence } = await dwcaMedia('&publishAudio=1');
    const wrenLink = occurrence.find((o) => o.occurrenceID === ids.wren)!.associatedMedia;
    assert.equal((await fetchLink(wrenLink)).status, 200);
    await api.put(`/settings/tenant?tenantId=${team.id}`, { sensitive_species_extra: ['eueowl1', 'winwre4'] }, owner);
    try {
      const res = await fetchLink(wrenLink);
      assert.equal(res.status, 404);
    } finally {
      await api.put(`/settings/tenant?tenantId=${team.id}`, { sensitive_species_extra: ['eueowl1'] }, owner);
    }
    assert.equal((await fetchLink(wrenLink)).status, 200);
  });

  test('forged and malformed tokens answer 404', async () => {
    const { occurrence } = await dwcaMedia('&publishAudio=1');
    const link = occurrence.find((o) => o.occurrenceID === ids.robin)!.associatedMedia;
    const m = PUBLIC_LINK.exec(link)!;
    const flipped = m[2][0] === 'A' ? `B${m[2].slice(1)}` : `A${m[2].slice(1)}`;
    for (const token of [`${m[1]}.${flipped}`, `${m[1]}`, 'nothing', `00000000-0000-4000-8000-000000000000.${m[2]}`]) {
      const res = await fetch(`${hub.url}/api/public/audio/${token}`, { headers: { 'x-forwarded-for': '198.18.34.1' } });
      assert.equal(res.status, 404, token);
      assert.equal((await res.json()).error.code, 'NOT_FOUND');
    }
  });

  test('team admins list the published recordings; members cannot; another team cannot revoke', async () => {
    const list = await api.get(`/export/published-audio?tenantId=${team.id}`, admin);
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.total, 2);
    const robin = list.body.recordings.find((r: { chunkId: string }) => r.chunkId === chunk.robin);
    assert.match(robin.url, PUBLIC_LINK);
    assert.deepEqual(robin.species, ['Eurasian Blackbird', 'European Robin']);
    assert.equal(robin.satelliteName, 'Garden');
    assert.equal(robin.recordedAt, at(0).toISOString());
    assertError(await api.get(`/export/published-audio?tenantId=${team.id}`, member), 403, 'FORBIDDEN');
    assertError(await api.del(`/export/published-audio/${robin.id}`, member), 403, 'FORBIDDEN');
    assertError(await api.del(`/export/published-audio/${robin.id}`, otherAdmin), 404, 'NOT_FOUND');
    assertError(await api.post('/export/published-audio/revoke-all', { tenantId: team.id }, otherAdmin), 404, 'NOT_FOUND');
    assert.equal((await fetchLink(robin.url)).status, 200, 'still published');
  });

  test('revoking one link makes it 404 at once; revoke-all ends the rest; both are audited', async () => {
    const list = (await api.get(`/export/published-audio?tenantId=${team.id}`, admin)).body.recordings as {
      id: string;
      chunkId: string;
      url: string;
    }[];
    const robin = list.find((r) => r.chunkId === chunk.robin)!;
    const wren = list.find((r) => r.chunkId === chunk.wren)!;
    assert.equal((await api.del(`/export/published-audio/${robin.id}`, admin)).status, 204);
    assert.equal((await fetchLink(robin.url)).status, 404);
    assert.equal((await fetchLink(wren.url)).status, 200);
    assertError(await api.del(`/export/published-audio/${robin.id}`, admin), 404, 'NOT_FOUND');
    const revoked = await auditOf('admin.published_audio_revoked');
    assert.equal(revoked.length, 1);
    assert.deepEqual(revoked[0].details, { chunkId: chunk.robin });

    // Published again, the chunk gets a new link: the revoked one stays dead.
    const { occurrence } = await dwcaMedia('&publishAudio=1');
    const again = occurrence.find((o) => o.occurrenceID === ids.robin)!.associatedMedia;
    assert.notEqual(again, robin.url);
    assert.equal((await fetchLink(again)).status, 200);
    assert.equal((await fetchLink(robin.url)).status, 404);

    const all = await api.post('/export/published-audio/revoke-all', { tenantId: team.id }, owner);
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body, { revoked: 2 });
    assert.equal(await publishedRows(), 0);
    for (const link of [again, wren.url]) assert.equal((await fetchLink(link)).status, 404);
    assert.deepEqual(
      (await auditOf('admin.published_audio_revoked_all')).map((a) => a.details),
      [{ count: 2 }],
    );
  });

  test('with the setting turned off again, an export asking to publish is refused and creates nothing', async () => {
    await setPublishing(false);
    assertError(await api.get(`/export/observation?tenantId=${team.id}&format=dwca&publishAudio=1`, member), 409, 'AUDIO_PUBLISHING_OFF');
    assert.equal(await publishedRows(), 0);
  });

  test('a background export publishes as the person who started it', async () => {
    await setPublishing(true);
    try {
      const started = await api.get(`/export/observation?tenantId=${team.id}&format=dwca&publishAudio=1&background=1`, member);
      assert.equal(started.status, 202, started.text);
      await waitFor('the job', async () => {
        const job = await api.get(`/export/jobs/${started.body.id}`, member);
        assert.notEqual(job.body.status, 'failed', job.text);
        return job.body.status === 'done';
      });
      const file = await download(`/export/jobs/${started.body.id}/file`);
      const multimedia = tsv((await unzip(file.body)).get('multimedia.txt')!);
      assert.equal(multimedia.length, 3);
      for (const r of multimedia) assert.equal((await fetchLink(r.identifier)).status, 200);
      assert.equal(await publishedRows(), 2);
      const audit = await auditOf('audio.published');
      assert.equal(audit.at(-1)!.by, member.id);
    } finally {
      await setPublishing(false);
    }
  });
});

describe('published recordings: guessing', () => {
  let hub: Hub;
  before(async () => {
    hub = await startHub({ env: { LIMIT_TOKEN_GUESSES: '3/15m' } });
  });
  after(() => hub.close());

  test('unknown links spend the token-guess budget: past it 429 from that address', async () => {
    const from = { 'x-forwarded-for': '198.18.34.2' };
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${hub.url}/api/public/audio/00000000-0000-4000-8000-00000000000${i}.${'A'.repeat(43)}.wav`, {
        headers: from,
      });
      assert.equal(res.status, 404);
    }
    const res = await fetch(`${hub.url}/api/public/audio/whatever`, { headers: from });
    assert.equal(res.status, 429);
    assert.equal((await fetch(`${hub.url}/api/public/audio/whatever`, { headers: { 'x-forwarded-for': '198.18.34.3' } })).status, 404);
  });
});
