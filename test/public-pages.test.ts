/**
 * Public team pages (spec §4 "Teams, joining, public pages", §8; issue 20): the two switches,
 * what the page counts (promoted, shown categories only), the 10-minute cache on the injected
 * clock and its drop on any settings save, the link preview escaped, and bots at /t/:slug.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { newId } from '../src/core/crypto.ts';

/** A credited photo row as the species photos module stores one (no download in these tests). */
async function insertPhoto(hub: Hub, code: string, keys: { storage?: string; display?: string } = {}) {
  await hub.sql.query(
    `INSERT INTO species_images (id, species_code, position, provider, source_id, storage_key, content_type, width, height, original_bytes,
       display_key, display_bytes, display_width, display_height, author, licence, licence_url, source_url, created_at)
     VALUES ($1, $2, 0, 'wikimedia', $3, $4, 'image/jpeg', 256, 256, 1000, $5, 1000, 256, 256, 'Ann Author', 'CC BY 4.0',
       'https://creativecommons.org/licenses/by/4.0/', 'https://commons.wikimedia.org/wiki/File:Robin.jpg', $6)`,
    [newId(), code, `File:${code}.jpg`, keys.storage ?? `species/${code}/o.jpg`, keys.display ?? `species/${code}/d.jpg`, hub.clock.now()],
  );
}

describe('public team pages', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let hubAdmin: TestUser;

  before(async () => {
    // Offline: a page that asks for missing photos must not reach the internet from a test.
    hub = await startHub({ env: { IMAGES_PROVIDERS: 'off' } });
    api = client(hub.url);
    f = factories(hub);
    hubAdmin = await f.user({ admin: true });
  });
  after(() => hub.close());

  const hubSwitch = async (values: Record<string, unknown>) =>
    assert.equal((await api.put('/settings/platform', values, hubAdmin)).status, 200);
  const teamSettings = async (team: TestTeam, owner: TestUser, values: Record<string, unknown>) => {
    const res = await api.put(`/settings/tenant?tenantId=${team.id}`, values, owner);
    assert.equal(res.status, 200, res.text);
  };

  /** A team with its page on (the hub switch too), a satellite, and a robin heard now. */
  async function published(name?: string, description?: string) {
    const owner = await f.user();
    const team: TestTeam = description
      ? (await api.post('/auth/create-tenant', { name, description }, owner)).body
      : await f.team(owner, name);
    const sat = await makeSatellite(hub, team, owner, 'Secret Garden Post');
    await hub.sql.query('UPDATE satellites SET latitude = 52.51634, longitude = 13.37771 WHERE id = $1', [sat.id]);
    await hubSwitch({ allow_public_pages: true });
    await teamSettings(team, owner, { public_page: true });
    return { owner, team, sat };
  }

  test('404 unless both the hub switch and the team setting are on, for the page and its preview', async () => {
    const { owner, team } = await published();
    assert.equal((await api.get(`/public/teams/${team.slug}`)).status, 200);
    assert.equal((await api.get(`/public/teams/${team.slug}/og`)).status, 200);

    await hubSwitch({ allow_public_pages: false });
    assertError(await api.get(`/public/teams/${team.slug}`), 404, 'NOT_FOUND');
    assertError(await api.get(`/public/teams/${team.slug}/og`), 404, 'NOT_FOUND');

    await hubSwitch({ allow_public_pages: true });
    await teamSettings(team, owner, { public_page: false });
    assertError(await api.get(`/public/teams/${team.slug}`), 404, 'NOT_FOUND');
    assertError(await api.get(`/public/teams/${team.slug}/og`), 404, 'NOT_FOUND');

    await teamSettings(team, owner, { public_page: true });
    assert.equal((await api.get(`/public/teams/${team.slug}`)).status, 200);
    assertError(await api.get('/public/teams/no-such-team-anywhere'), 404, 'NOT_FOUND');
    assert.equal((await api.get('/public/teams/bad%20slug!')).status, 400);
  });

  test('promoted detections in the categories the team shows only; counts, top species, firsts, 30 local days', async () => {
    const { owner, team, sat } = await published();
    await teamSettings(team, owner, { time_zone: 'Europe/Berlin' });
    const now = hub.clock.now();
    for (let i = 0; i < 3; i++) await makeDetection(hub, { satellite: sat, at: new Date(now.getTime() - i * 1000) });
    const wren = { satellite: sat, code: 'eurwre', scientificName: 'Troglodytes troglodytes', commonName: 'Eurasian Wren' };
    const call = await makeDetection(hub, { ...wren, callChunks: 3 });
    // The wren's call ran over three chunks: its continuations are the same call, as on the dashboard (issue 36 point 6).
    for (let i = 0; i < 2; i++) await makeDetection(hub, { ...wren, callId: call });
    // Each of these must stay off the page.
    await makeDetection(hub, { satellite: sat, code: 'grewoo', commonName: 'Tentative Woodpecker', tentative: true, promoted: false });
    await makeDetection(hub, { satellite: sat, code: 'blutit', commonName: 'Unpromoted Tit', promoted: false });
    await makeDetection(hub, { satellite: sat, code: 'chaff1', commonName: 'Rejected Chaffinch', verificationStatus: 'rejected' });
    await makeDetection(hub, { satellite: sat, code: 'human', commonName: 'Human voice', category: 'human_voice' });
    await makeDetection(hub, { satellite: sat, code: 'eurfro1', commonName: 'Hidden Frog', category: 'amphibian' });
    await teamSettings(team, owner, { visible_categories: ['bird', 'insect'] });

    const res = await api.get(`/public/teams/${team.slug}`);
    assert.equal(res.status, 200, res.text);
    const p = res.body;
    assert.equal(p.name, team.name);
    assert.equal(p.slug, team.slug);
    assert.deepEqual(p.counts, { species: 2, detections: 4, devices: 1 });
    assert.deepEqual(
      p.topSpecies.map((s: any) => [s.code, s.detections]),
      [
        ['eurrob1', 3],
        ['eurwre', 1],
      ],
    );
    assert.equal(p.topSpecies[0].photo, null, 'no photo module yet: photo null');
    assert.deepEqual(p.recentFirsts.flatMap((d: any) => d.species.map((s: any) => s.code)).sort(), ['eurrob1', 'eurwre']);
    assert.equal(p.dailyTotals.length, 30);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(now);
    assert.deepEqual(p.dailyTotals.at(-1), { date: today, detections: 4 });
    assert.equal(p.towns, null, 'no towns unless the team opts in');
    assert.equal(p.join, null, 'an invite-only team gives no join hint');
    const text = JSON.stringify(p);
    for (const hidden of ['Tentative Woodpecker', 'Unpromoted Tit', 'Rejected Chaffinch', 'Human voice', 'Hidden Frog']) {
      assert.ok(!text.includes(hidden), `${hidden} must not appear`);
    }
    assert.ok(!text.includes('Secret Garden Post') && !text.includes('52.51'), 'never a satellite name or position');
  });

  test('top species carry their credited photo (the species photos module); the preview shows it with an absolute address', async () => {
    const { team, sat } = await published();
    await makeDetection(hub, { satellite: sat });
    await insertPhoto(hub, 'eurrob1');
    const p = (await api.get(`/public/teams/${team.slug}`)).body;
    assert.deepEqual(p.topSpecies[0].photo, {
      url: '/api/species/showcase/image?code=eurrob1&square=256',
      credit: 'Ann Author',
      licence: 'CC BY 4.0',
      licenceUrl: 'https://creativecommons.org/licenses/by/4.0/',
      sourceUrl: 'https://commons.wikimedia.org/wiki/File:Robin.jpg',
    });
    const og = (await api.get(`/public/teams/${team.slug}/og`)).text;
    assert.match(og, /<meta property="og:image" content="https?:\/\/[^"/]+\/api\/species\/showcase\/image\?code=eurrob1&amp;square=256">/);
    assert.match(og, /<meta name="twitter:card" content="summary_large_image">/);
    assert.match(og, /Photo: Ann Author \(CC BY 4.0\)/);
  });

  test('?lang= names the species in that language; an unknown language falls back to English', async () => {
    const { team, sat } = await published();
    await makeDetection(hub, { satellite: sat });
    assert.equal((await api.get(`/public/teams/${team.slug}?lang=de`)).body.topSpecies[0].commonName, 'Rotkehlchen');
    const en = await api.get(`/public/teams/${team.slug}?lang=en`);
    assert.equal(en.body.topSpecies[0].commonName, 'European Robin');
    const unknown = await api.get(`/public/teams/${team.slug}?lang=xx`);
    assert.equal(unknown.body.lang, 'en');
    assert.equal((await api.get(`/public/teams/${team.slug}?lang=%3Cscript%3E`)).status, 400);
  });

  test('towns only when the team opts in, as names of the satellites towns; a join hint when joinable', async () => {
    const { owner, team, sat } = await published();
    const res = await api.patch(`/settings/effective?tenantId=${team.id}&satelliteId=${sat.id}`, { values: { town: 'Potsdam' } }, owner);
    assert.equal(res.status, 200, res.text);
    assert.equal((await api.get(`/public/teams/${team.slug}`)).body.towns, null);
    await teamSettings(team, owner, { town_opt_in: true, join_policy: 'open' });
    let p = (await api.get(`/public/teams/${team.slug}`)).body;
    assert.deepEqual(p.towns, ['Potsdam']);
    assert.equal(p.join, null, 'the hub does not list teams');
    await hubSwitch({ allow_public_teams: true });
    p = (await api.get(`/public/teams/${team.slug}`)).body;
    assert.deepEqual(p.join, { policy: 'open', teamId: team.id });
    await hubSwitch({ allow_public_teams: false });
  });

  test('cached 10 minutes on the injected clock; any settings save (team or hub) drops it', async () => {
    const { owner, team, sat } = await published();
    await makeDetection(hub, { satellite: sat });
    const count = async () => (await api.get(`/public/teams/${team.slug}`)).body.counts.detections as number;
    assert.equal(await count(), 1);
    await makeDetection(hub, { satellite: sat });
    assert.equal(await count(), 1, 'served from the cache');
    hub.clock.advanceMinutes(9);
    assert.equal(await count(), 1, 'still inside 10 minutes');
    hub.clock.advanceMinutes(1);
    assert.equal(await count(), 2, 'rebuilt after 10 minutes');

    await makeDetection(hub, { satellite: sat });
    assert.equal(await count(), 2);
    await teamSettings(team, owner, { town_opt_in: false });
    assert.equal(await count(), 3, 'a team settings save drops the page');

    await makeDetection(hub, { satellite: sat });
    assert.equal(await count(), 3);
    await hubSwitch({ allow_self_registration: true });
    assert.equal(await count(), 4, 'a hub settings save drops the page');

    // Turning the page off takes effect at once, through the cache.
    await teamSettings(team, owner, { public_page: false });
    assertError(await api.get(`/public/teams/${team.slug}`), 404, 'NOT_FOUND');
  });

  test('the link preview escapes every value: a team named <script>alert(1)</script>', async () => {
    const { team } = await published('<script>alert(1)</script>', '"><img src=x onerror=alert(2)>');
    const res = await api.get(`/public/teams/${team.slug}/og`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = res.text;
    assert.ok(!html.includes('<script>'), html);
    assert.ok(!html.includes('<img'), html);
    assert.match(html, /content="&quot;&gt;&lt;img src=x onerror=alert\(2\)&gt;/);
    assert.match(html, /<meta property="og:title" content="&lt;script&gt;alert\(1\)&lt;\/script&gt;">/);
    assert.match(html, /<title>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/title>/);
    assert.match(html, /<meta name="twitter:card" content="summary">/);
    assert.match(html, new RegExp(`<meta property="og:url" content="[^"]*/t/${team.slug}">`));
  });

  test('/t/:slug: a link-preview bot gets the Open Graph HTML; a browser gets the dashboard; a page that is off gets no preview', async () => {
    const { owner, team } = await published('Meadow Listeners');
    const get = (path: string, ua: string) => fetch(`${hub.url}${path}`, { headers: { 'user-agent': ua } });
    for (const ua of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'TelegramBot (like TwitterBot)',
      'WhatsApp/2.23.20.0',
      'facebookexternalhit/1.1',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
    ]) {
      const res = await get(`/t/${team.slug}`, ua);
      assert.equal(res.status, 200, ua);
      const html = await res.text();
      assert.match(html, /<meta property="og:title" content="Meadow Listeners">/, ua);
      assert.ok(!html.includes('http-equiv="refresh"'), 'no redirect back to itself');
    }
    const browser = await get(`/t/${team.slug}`, 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36');
    assert.ok(!(await browser.text()).includes('og:title'), 'a browser gets the dashboard');
    await teamSettings(team, owner, { public_page: false });
    const off = await get(`/t/${team.slug}`, 'Slackbot-LinkExpanding 1.0');
    assert.ok(!(await off.text()).includes('og:title'), 'no preview of a page that is off');
  });
});
