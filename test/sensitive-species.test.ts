/**
 * Sensitive species (issue 20): the hub's list seeded from assets/sensitive-species and edited by
 * hub admins (audited), the team's additions, and every view that leaves the team — the public
 * page, share links and their preview, scheduled exports sent through a channel, alert
 * deliveries — with no position finer than the 0.1° grid and no satellite name. The team's own
 * views (its full export, its alert list) keep both.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { ALERT_ENV } from './helpers/alerts.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver, type Receiver } from './helpers/receivers.ts';
import { SENSITIVE_SEED } from '../src/modules/settings/sensitive-seed.ts';
import { toGrid } from '../src/modules/sensitive/service.ts';

const LAT = 52.51634;
const LON = 13.37771;
const SATELLITE = 'Eyrie Ledge North';
const EAGLE = { code: 'goleag', scientificName: 'Aquila chrysaetos', commonName: 'Golden Eagle' };

describe('sensitive species', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let hubAdmin: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  let sat: { id: string; tenantId: string; name: string };
  let receiver: Receiver;
  let eagleId: string;
  let robinId: string;

  before(async () => {
    hub = await startHub({ env: { ...ALERT_ENV, IMAGES_PROVIDERS: 'off' } });
    api = client(hub.url);
    f = factories(hub);
    hubAdmin = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    sat = await makeSatellite(hub, team, owner, SATELLITE);
    await hub.sql.query('UPDATE satellites SET latitude = $2, longitude = $3 WHERE id = $1', [sat.id, LAT, LON]);
    receiver = await startReceiver();
    eagleId = await makeDetection(hub, { satellite: sat, ...EAGLE });
    robinId = await makeDetection(hub, { satellite: sat });
  });
  after(async () => {
    await receiver.close();
    await hub.close();
  });

  /** No exact coordinate and no satellite name anywhere in `text`. */
  function assertGeneralised(text: string, what: string) {
    assert.ok(!text.includes(SATELLITE), `${what}: no satellite name`);
    assert.ok(!text.includes('52.516') && !text.includes('13.377'), `${what}: no position finer than 0.1°`);
  }

  test('the 0.1° grid', () => {
    assert.equal(toGrid(LAT), 52.5);
    assert.equal(toGrid(LON), 13.4);
    assert.equal(toGrid(-0.04), 0);
    assert.equal(toGrid(-33.8688), -33.9);
    assert.equal(toGrid(null), null);
  });

  test('the hub list is seeded from the documented data file; hub admins edit it (audited); entries are checked', async () => {
    assert.ok(SENSITIVE_SEED.includes('goleag') && SENSITIVE_SEED.length >= 10);
    const got = await api.get('/settings/platform', hubAdmin);
    assert.deepEqual(got.body.settings.sensitive_species, [...SENSITIVE_SEED]);
    assertError(await api.put('/settings/platform', { sensitive_species: ['goleag', 'not a code!'] }, hubAdmin), 400, 'VALIDATION_FAILED');
    assertError(await api.put('/settings/platform', { sensitive_species: ['goleag'] }, owner), 403, 'FORBIDDEN');
    const put = await api.put('/settings/platform', { sensitive_species: [...SENSITIVE_SEED, 'eurwre'] }, hubAdmin);
    assert.equal(put.status, 200, put.text);
    assert.ok(put.body.settings.sensitive_species.includes('eurwre'));
    const audit = await hub.sql.query<{ details: any }>(
      `SELECT details FROM audit_log WHERE action = 'admin.platform_settings_updated' ORDER BY at DESC LIMIT 1`,
    );
    assert.ok(audit[0]!.details.values.sensitive_species.includes('eurwre'), 'the change is in the audit log');
    assert.equal(
      (await api.put('/settings/platform', { sensitive_species: null }, hubAdmin)).body.settings.sensitive_species.length,
      SENSITIVE_SEED.length,
    );
    assert.equal(await hub.services.sensitive.isSensitive(team.id, 'GOLEAG'), true);
    assert.equal(await hub.services.sensitive.isSensitive(team.id, 'eurrob1'), false);
  });

  test('a team adds species of its own; other teams are not affected', async () => {
    const other = await f.team(await f.user());
    const res = await api.put(`/settings/tenant?tenantId=${team.id}`, { sensitive_species_extra: ['eurwre'] }, owner);
    assert.equal(res.status, 200, res.text);
    assert.equal(await hub.services.sensitive.isSensitive(team.id, 'eurwre'), true);
    assert.equal(await hub.services.sensitive.isSensitive(other.id, 'eurwre'), false);
    assertError(
      await api.put(`/settings/tenant?tenantId=${team.id}`, { sensitive_species_extra: 'eurwre' }, owner),
      400,
      'VALIDATION_FAILED',
    );
  });

  test('public page: sensitive species left out unless the team opts in, and then never with a position or satellite', async () => {
    await api.put('/settings/platform', { allow_public_pages: true }, hubAdmin);
    await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page: true, town_opt_in: true }, owner);
    let p = (await api.get(`/public/teams/${team.slug}`)).body;
    assert.deepEqual(
      p.topSpecies.map((s: any) => s.code),
      ['eurrob1'],
    );
    assert.equal(p.counts.species, 1);
    assert.ok(!JSON.stringify(p).includes('Golden Eagle'), 'not in firsts either');
    assert.ok(!(await api.get(`/public/teams/${team.slug}/og`)).text.includes('Golden Eagle'));

    await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page_show_sensitive: true }, owner);
    p = (await api.get(`/public/teams/${team.slug}`)).body;
    assert.deepEqual(p.topSpecies.map((s: any) => s.code).sort(), ['eurrob1', 'goleag']);
    assertGeneralised(JSON.stringify(p), 'public page');
    assertGeneralised((await api.get(`/public/teams/${team.slug}/og`)).text, 'public page preview');
    await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page_show_sensitive: false }, owner);
  });

  test('share link: the view and its preview give no satellite and no position', async () => {
    const issued = await api.get(`/detections/${eagleId}/share`, owner);
    assert.equal(issued.status, 200, issued.text);
    const path = new URL(issued.body.shareUrl).pathname.replace(/^\/share/, '/share');
    const view = await api.get(path);
    assert.equal(view.status, 200, view.text);
    assert.equal(view.body.speciesCode, 'goleag');
    assertGeneralised(view.text, 'share view');
    assertGeneralised((await api.get(`${path}/og`)).text, 'share preview');
  });

  test("exports: the team's own full export keeps the position; a scheduled export sent through a channel is generalised", async () => {
    const own = await fetch(`${hub.url}/api/export/detections?tenantId=${team.id}&format=csv`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    assert.equal(own.status, 200);
    const ownRows: Record<string, string>[] = parse(await own.text(), { columns: true });
    const ownEagle = ownRows.find((r) => r.species_code === 'goleag')!;
    assert.equal(ownEagle.satellite_name, SATELLITE, 'the team sees its own data in full');
    assert.ok(ownEagle.latitude!.startsWith('52.516'), `exact position in the team's own export: ${ownEagle.latitude}`);

    const ch = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'webhook', name: 'Archive', config: { url: `${receiver.url}/exports` } },
      owner,
    );
    assert.equal(ch.status, 201, ch.text);
    const sched = await api.post(
      '/exports/scheduled',
      { tenantId: team.id, name: 'Hourly', format: 'csv', schedule: '0 * * * *', channelId: ch.body.id },
      owner,
    );
    assert.equal(sched.status, 201, sched.text);
    hub.clock.advance(new Date(sched.body.nextRunAt).getTime() - hub.clock.now().getTime() + 1000);
    assert.equal(await hub.services.scheduledExports.tick(), 1);
    const got = await waitFor('the export webhook', async () => receiver.received.find((r) => r.path === '/exports'));
    const body = JSON.parse(got.body.toString());
    const rows: Record<string, string>[] = parse(body.data.content, { columns: true });
    const eagle = rows.find((r) => r.species_code === 'goleag')!;
    const robin = rows.find((r) => r.species_code === 'eurrob1')!;
    assert.ok(eagle && robin, body.data.content);
    assert.equal(Number(eagle.latitude), 52.5);
    assert.equal(Number(eagle.longitude), 13.4);
    assert.equal(eagle.satellite_name, 'withheld');
    assert.equal(eagle.satellite_id, 'withheld', 'the id would place it beside the robin of the same satellite');
    assert.equal(eagle.chunk_id, '');
    assertGeneralised(Object.values(eagle).join(','), 'scheduled export row');
    assert.equal(robin.satellite_name, SATELLITE, 'other species are unchanged');

    // The other formats a schedule sends, which name the place in their own words, are generalised too.
    for (const kind of ['json', 'checklist', 'inaturalist'] as const) {
      const out = await hub.services.exports.toFile(
        team.id,
        { kind, filters: { species: 'goleag' }, options: {} } as any,
        () => {},
        'outside',
      );
      const fs = await import('node:fs/promises');
      const bytes = await fs.readFile(out.file);
      await fs.rm(out.file, { force: true });
      assert.match(bytes.toString('utf8'), /Aquila chrysaetos|Golden Eagle/, `${kind}: the eagle is there`);
      assertGeneralised(bytes.toString('utf8'), `${kind} export`);
    }
  });

  test("alert deliveries name no satellite for a sensitive species; the team's own alert list keeps it", async () => {
    const ch = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'webhook', name: 'Hook', config: { url: `${receiver.url}/alerts` } },
      owner,
    );
    assert.equal(ch.status, 201, ch.text);
    const rule = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'Everything', type: 'detection', channelIds: [ch.body.id] },
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
        detectedAt: hub.clock.now().toISOString(),
        ...d,
      });
    assert.equal(
      (await announce(eagleId, { speciesCode: EAGLE.code, scientificName: EAGLE.scientificName, commonName: EAGLE.commonName })).length,
      1,
    );
    assert.equal(
      (await announce(robinId, { speciesCode: 'eurrob1', scientificName: 'Erithacus rubecula', commonName: 'European Robin' })).length,
      1,
    );
    const hooks = await waitFor('both alert webhooks', async () => {
      const got = receiver.received.filter((r) => r.path === '/alerts');
      return got.length >= 2 && got.map((r) => JSON.parse(r.body.toString()));
    });
    const eagle = hooks.find((h: any) => h.data.species === EAGLE.scientificName)!;
    const robin = hooks.find((h: any) => h.data.species === 'Erithacus rubecula')!;
    assert.equal(eagle.data.satelliteName, null);
    assertGeneralised(JSON.stringify(eagle), 'alert webhook');
    assert.equal(robin.data.satelliteName, SATELLITE, 'other species keep their satellite');

    const deliveries = await hub.sql.query<{ payload: any }>('SELECT payload FROM alert_deliveries WHERE tenant_id = $1', [team.id]);
    const stored = deliveries.map((d) => d.payload).find((p) => p.species === EAGLE.scientificName)!;
    assert.equal(stored.satelliteName, null);
    assert.doesNotMatch(stored.message, new RegExp(SATELLITE), 'the message (chat and mail bodies) names no satellite');
    assert.match(stored.message, /Golden Eagle/);

    const own = await api.get(`/alerts?tenantId=${team.id}&limit=50`, owner);
    assert.equal(
      own.body.alerts.find((a: any) => a.speciesCode === 'goleag').satelliteName,
      SATELLITE,
      'inside the team the alert keeps it',
    );
  });
});
