/**
 * The statistics map's tile server (issue 19): map_tile_url is empty by default (the map stays
 * offline), takes only an http(s) template with {z}, {x} and {y}, is readable by every member
 * of a team through the team's effective settings, and once the hub sets it the dashboard's
 * Content-Security-Policy lets images load from that origin — and from no other.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';

const imgSrc = (csp: string) => /img-src([^;]*)/.exec(csp)?.[1] ?? '';

describe('map tile setting', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let admin: TestUser;
  let viewer: TestUser;
  let team: TestTeam;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    admin = await f.user({ admin: true, name: 'Hub Admin' });
    const owner = await f.user();
    team = await f.team(owner);
    viewer = await f.member(team, 'viewer');
  });
  after(async () => hub?.close());

  const tileSetting = async () => {
    const res = await api.get(`/settings/effective?tenantId=${team.id}`, viewer);
    assert.equal(res.status, 200);
    return res.body.settings.find((s: { key: string }) => s.key === 'map_tile_url');
  };
  const dashboardCsp = async () => {
    const page = await fetch(hub.url + '/stats/map');
    await page.text();
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    return page.headers.get('content-security-policy') ?? '';
  };

  test('empty by default: a viewer reads it, and images come from the hub alone', async () => {
    const entry = await tileSetting();
    assert.equal(entry.value, '');
    assert.equal(imgSrc(await dashboardCsp()).trim(), "'self' data: blob:");
  });

  test('refuses a template without http(s) or without one of its placeholders', async () => {
    for (const bad of ['ftp://tiles.example.org/{z}/{x}/{y}.png', 'https://tiles.example.org/{z}/{x}.png', 'tiles/{z}/{x}/{y}', 42]) {
      const res = await api.patch('/settings/effective?level=hub', { values: { map_tile_url: bad } }, admin);
      assert.equal(res.status, 400, `refuses ${JSON.stringify(bad)}`);
    }
    assert.equal((await tileSetting()).value, '');
  });

  test('the hub value reaches the team and the dashboard may load images from its origin only', async () => {
    const url = 'https://tiles.example.org/osm/{z}/{x}/{y}.png';
    assert.equal((await api.patch('/settings/effective?level=hub', { values: { map_tile_url: url } }, admin)).status, 200);
    const entry = await tileSetting();
    assert.equal(entry.value, url);
    assert.equal(entry.source, 'hub');
    const img = imgSrc(await dashboardCsp());
    assert.match(img, / https:\/\/tiles\.example\.org$/);
    // API answers are no documents: their policy stays as it was.
    const health = await api.get('/health');
    assert.equal(imgSrc(health.headers.get('content-security-policy') ?? '').trim(), "'self' data: blob:");

    // Back to offline.
    assert.equal((await api.patch('/settings/effective?level=hub', { values: { map_tile_url: '' } }, admin)).status, 200);
    assert.equal(imgSrc(await dashboardCsp()).trim(), "'self' data: blob:");
  });
});
