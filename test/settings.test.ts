/**
 * Layered settings (spec §2 "Setting entry", §4 "Settings"): the resolution walk and its locks,
 * the all-or-nothing writer, config history and "config changed" events.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeSatellite, makeSatelliteKey, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import type { BusEvents } from '../src/infra/bus/index.ts';
import { SETTINGS } from '../src/modules/settings/registry.ts';
import { SETTING_VALUES, type SettingKey, settingValue } from '../src/modules/settings/values.ts';

const KEY = 'heartbeat_interval_sec';
const DEFAULT = 30;

describe('settings', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let root: TestUser;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    root = await f.user({ admin: true });
  });
  after(() => hub.close());

  const entry = (body: any, key: string) => body.settings.find((e: any) => e.key === key);

  describe('resolution walk: satellite, else team, else hub, else default; a lock ends the walk', () => {
    // Every combination of a stored value and a lock at hub and team, and a satellite value.
    const combos: Array<{ hubVal: number | null; hubLock: boolean; teamVal: number | null; teamLock: boolean; satVal: number | null }> = [];
    for (const hubVal of [null, 120])
      for (const hubLock of [false, true])
        for (const teamVal of [null, 180])
          for (const teamLock of [false, true])
            for (const satVal of [null, 240]) {
              combos.push({ hubVal, hubLock, teamVal, teamLock, satVal });
            }

    for (const c of combos) {
      const name = `hub ${c.hubVal ?? '-'}${c.hubLock ? ' locked' : ''}, team ${c.teamVal ?? '-'}${c.teamLock ? ' locked' : ''}, satellite ${c.satVal ?? '-'}`;
      test(name, async () => {
        const owner = await f.user();
        const team = await f.team(owner);
        const sat = await makeSatellite(hub, team, owner);
        // Values first (no lock yet), then the locks: stored values stay under a lock.
        await patch(root, 'level=hub', { values: { [KEY]: c.hubVal }, mayOverride: { [KEY]: true } });
        if (c.satVal !== null) await patch(owner, `satelliteId=${sat.id}`, { values: { [KEY]: c.satVal } });
        if (c.teamVal !== null) await patch(owner, `tenantId=${team.id}`, { values: { [KEY]: c.teamVal } });
        if (c.teamLock) await patch(owner, `tenantId=${team.id}`, { mayOverride: { [KEY]: false } });
        if (c.hubLock) await patch(root, 'level=hub', { mayOverride: { [KEY]: false } });

        const hubPart = { value: c.hubVal ?? DEFAULT, from: c.hubVal !== null ? 'hub' : 'default' };
        const teamInherited = hubPart;
        const teamResolved = c.hubLock ? hubPart : c.teamVal !== null ? { value: c.teamVal, from: 'team' } : hubPart;
        const satInherited = teamResolved;
        const satResolved = c.hubLock
          ? hubPart
          : c.teamLock
            ? teamResolved
            : c.satVal !== null
              ? { value: c.satVal, from: 'satellite' }
              : teamResolved;

        const s = entry((await api.get(`/settings/effective?satelliteId=${sat.id}`, owner)).body, KEY);
        assert.deepEqual(
          {
            value: s.value,
            source: s.source,
            inherited: s.inherited,
            lockedBy: s.lockedBy,
            own: s.own,
            hasMayOverride: 'mayOverride' in s,
          },
          {
            value: satResolved.value,
            source: satResolved.from,
            inherited: satInherited,
            lockedBy: c.hubLock ? 'hub' : c.teamLock ? 'team' : null,
            own: c.satVal,
            hasMayOverride: false,
          },
        );
        const t = entry((await api.get(`/settings/effective?tenantId=${team.id}`, owner)).body, KEY);
        assert.deepEqual(
          { value: t.value, source: t.source, inherited: t.inherited, lockedBy: t.lockedBy, own: t.own, mayOverride: t.mayOverride },
          {
            value: teamResolved.value,
            source: teamResolved.from,
            inherited: teamInherited,
            lockedBy: c.hubLock ? 'hub' : null,
            own: c.teamVal,
            mayOverride: !c.teamLock,
          },
        );
        const h = entry((await api.get('/settings/effective?level=hub', root)).body, KEY);
        assert.deepEqual(
          { value: h.value, source: h.source, inherited: h.inherited, lockedBy: h.lockedBy, own: h.own, mayOverride: h.mayOverride },
          {
            value: hubPart.value,
            source: hubPart.from,
            inherited: { value: DEFAULT, from: 'default' },
            lockedBy: null,
            own: c.hubVal,
            mayOverride: !c.hubLock,
          },
        );
        // The config push reads the same walk.
        const config = await hub.services.settings.satelliteConfig(team.id, sat.id);
        assert.equal(config.heartbeatIntervalSec, satResolved.value);
      });
    }

    after(async () => {
      await patch(root, 'level=hub', { values: { [KEY]: null }, mayOverride: { [KEY]: true } });
    });
  });

  async function patch(as: TestUser, selector: string, body: unknown, expectStatus = 200) {
    const res = await api.patch(`/settings/effective?${selector}`, body, as);
    assert.equal(res.status, expectStatus, `PATCH ${selector}: ${res.text}`);
    return res;
  }

  test('entries come in registry order and only for the levels that can hold them', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const sat = await makeSatellite(hub, team, owner);
    const satKeys = (await api.get(`/settings/effective?satelliteId=${sat.id}`, owner)).body.settings.map((e: any) => e.key);
    assert.ok(satKeys.includes('filter_min_rms') && satKeys.includes('device_inference'));
    assert.ok(!satKeys.includes('allow_self_registration') && !satKeys.includes('join_policy'));
    assert.ok(satKeys.indexOf('device_inference') < satKeys.indexOf('heartbeat_interval_sec'));
    const hubBody = (await api.get('/settings/effective?level=hub', root)).body;
    assert.equal(hubBody.level, 'hub');
    assert.equal(hubBody.settings[0].key, 'allow_self_registration');
    const teamBody = (await api.get(`/settings/effective?tenantId=${team.id}`, owner)).body;
    assert.equal(teamBody.level, 'team');
    assert.equal(teamBody.tenantId, team.id);
    assert.ok(teamBody.settings.some((e: any) => e.key === 'join_policy'));
  });

  test('PATCH refuses every bad entry at once and stores nothing (400)', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const res = await api.patch(
      `/settings/effective?tenantId=${team.id}`,
      {
        values: {
          offline_threshold_minutes: 7, // valid, but must not be stored since others are refused
          no_such_setting: 1,
          allow_self_registration: false, // hub only
          heartbeat_interval_sec: 'fast',
          filter_min_rms: 2,
          recording_schedule: [{ start: '25:00', end: '06:00', reference: 'absolute' }],
        },
        mayOverride: { join_policy: false },
      },
      owner,
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'VALIDATION_FAILED');
    const refused = res.body.error.details.refusals.map((r: any) => r.key).sort();
    assert.deepEqual(refused, [
      'allow_self_registration',
      'filter_min_rms',
      'heartbeat_interval_sec',
      'join_policy',
      'no_such_setting',
      'recording_schedule',
    ]);
    const t = entry((await api.get(`/settings/effective?tenantId=${team.id}`, owner)).body, 'offline_threshold_minutes');
    assert.equal(t.own, null);
    assert.equal(t.value, 5, 'the team offline threshold defaults to 5 minutes');
  });

  test('a new value under a lock is refused (403); re-sending or clearing the stored one is allowed', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const sat = await makeSatellite(hub, team, owner);
    await patch(owner, `tenantId=${team.id}`, { values: { filter_min_rms: 0.01 } });
    await patch(owner, `satelliteId=${sat.id}`, { values: { filter_min_rms: 0.02 } });
    await patch(root, 'level=hub', { mayOverride: { filter_min_rms: false } });
    try {
      const refused = await api.patch(`/settings/effective?tenantId=${team.id}`, { values: { filter_min_rms: 0.05 } }, owner);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'LOCKED_BY_PLATFORM');
      await patch(owner, `tenantId=${team.id}`, { values: { filter_min_rms: 0.01 } });
      await patch(owner, `tenantId=${team.id}`, { values: { filter_min_rms: null } });
    } finally {
      await patch(root, 'level=hub', { mayOverride: { filter_min_rms: true } });
    }
    await patch(owner, `tenantId=${team.id}`, { mayOverride: { filter_min_rms: false } });
    const byTeam = await api.patch(`/settings/effective?satelliteId=${sat.id}`, { values: { filter_min_rms: 0.03 } }, owner);
    assert.equal(byTeam.status, 403);
    assert.equal(byTeam.body.error.code, 'LOCKED_BY_TEAM');
    await patch(owner, `satelliteId=${sat.id}`, { values: { filter_min_rms: 0.02 } });
    await patch(owner, `satelliteId=${sat.id}`, { values: { filter_min_rms: null } });
  });

  test('writes history for each satellite reached and "config changed" for those whose config changed', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const plain = await makeSatellite(hub, team, owner);
    const shadowed = await makeSatellite(hub, team, owner);
    await patch(owner, `satelliteId=${shadowed.id}`, { values: { heartbeat_interval_sec: 45 } });
    const other = await makeSatellite(hub, await f.team(await f.user()), null);

    const events: BusEvents['satellite.config_changed'][] = [];
    let arrived: () => void = () => {};
    const got = new Promise<void>((r) => (arrived = r));
    const stop = hub.infra.bus.subscribe('satellite.config_changed', (e) => {
      if (e.tenantId !== team.id) return;
      events.push(e);
      arrived();
    });
    try {
      await patch(owner, `tenantId=${team.id}`, { values: { heartbeat_interval_sec: 90 } });
      await got;
    } finally {
      stop();
    }
    assert.deepEqual(
      events.map((e) => e.satelliteId),
      [plain.id],
    );
    assert.equal(events[0].config.heartbeatIntervalSec, 90);
    assert.deepEqual((events[0].config.recordingProfile as any).sampleRate, 48000);

    const rows = await hub.sql.query<any>(
      `SELECT satellite_id AS "satelliteId", source, changes FROM satellite_config_history WHERE tenant_id = $1 AND source = 'team'`,
      [team.id],
    );
    assert.deepEqual(rows.map((r) => r.satelliteId).sort(), [plain.id, shadowed.id].sort());
    assert.deepEqual(rows.find((r) => r.satelliteId === plain.id).changes.heartbeatIntervalSec, { from: 30, to: 90 });
    assert.deepEqual(rows.find((r) => r.satelliteId === shadowed.id).changes, {});
    const otherRows = await hub.sql.query(`SELECT 1 FROM satellite_config_history WHERE satellite_id = $1`, [other.id]);
    assert.equal(otherRows.length, 0, 'a team change does not reach another team');
    const audit = await hub.sql.query<any>(
      `SELECT action, tenant_id AS "tenantId" FROM audit_log WHERE action = 'admin.tenant_settings_updated' AND tenant_id = $1`,
      [team.id],
    );
    assert.ok(audit.length >= 1);
  });

  test('a hub change reaches the satellites of every team', async () => {
    const a = await makeSatellite(hub, await f.team(await f.user()), null);
    const b = await makeSatellite(hub, await f.team(await f.user()), null);
    await patch(root, 'level=hub', { values: { outbox_max_age_hours: 24 } });
    try {
      for (const s of [a, b]) {
        const [row] = await hub.sql.query<any>(`SELECT source, changes FROM satellite_config_history WHERE satellite_id = $1`, [s.id]);
        assert.equal(row.source, 'hub');
        assert.deepEqual(row.changes.outboxMaxAgeHours, { from: 168, to: 24 });
      }
    } finally {
      await patch(root, 'level=hub', { values: { outbox_max_age_hours: null } });
    }
  });

  test('on a satellite: the registrant may change its own, admin-only settings need an admin, satellite keys get 403', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const registrant = await f.member(team, 'member');
    const otherMember = await f.member(team, 'member');
    const viewer = await f.member(team, 'viewer');
    const sat = await makeSatellite(hub, team, registrant);
    await patch(registrant, `satelliteId=${sat.id}`, { values: { heartbeat_interval_sec: 45 } });
    const adminOnly = await api.patch(`/settings/effective?satelliteId=${sat.id}`, { values: { device_inference: true } }, registrant);
    assert.equal(adminOnly.status, 403);
    assert.equal(adminOnly.body.error.code, 'ADMIN_ONLY_SETTING');
    await patch(owner, `satelliteId=${sat.id}`, { values: { device_inference: true } });
    assert.equal((await api.patch(`/settings/effective?satelliteId=${sat.id}`, { values: {} }, otherMember)).status, 403);
    assert.equal((await api.patch(`/settings/effective?satelliteId=${sat.id}`, { values: {} }, viewer)).status, 403);
    assert.equal((await api.get(`/settings/effective?satelliteId=${sat.id}`, viewer)).status, 200);
    const key = await makeSatelliteKey(hub, sat);
    const bySatellite = await api.get(`/settings/effective?satelliteId=${sat.id}`, { token: key });
    assert.equal(bySatellite.status, 403);
    // Under the admins policy the registrant loses the device rule.
    await api.put(`/settings/tenant?tenantId=${team.id}`, { device_policy: 'admins' }, owner);
    assert.equal(
      (await api.patch(`/settings/effective?satelliteId=${sat.id}`, { values: { heartbeat_interval_sec: 50 } }, registrant)).status,
      403,
    );
  });

  test('GET/PUT /settings/tenant change only the fields sent, accept the lock alias and the aggregation object', async () => {
    const owner = await f.user();
    const team: TestTeam = await f.team(owner);
    const viewer = await f.member(team, 'viewer');
    const initial = (await api.get(`/settings/tenant?tenantId=${team.id}`, viewer)).body;
    assert.equal(initial.device_policy, 'members');
    assert.equal(initial.default_join_role, 'viewer');
    assert.equal(initial.join_policy, 'invite_only');
    assert.equal(initial.offline_threshold_minutes, 5);
    assert.deepEqual(initial.visible_categories, ['bird', 'amphibian', 'insect', 'other_animal']);
    assert.equal(initial.device_inference_devices_may_override, true);

    const put = await api.put(
      `/settings/tenant?tenantId=${team.id}`,
      { join_policy: 'open', device_inference_devices_may_override: false, aggregation: { enabled: true, count: 4 } },
      owner,
    );
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.join_policy, 'open');
    assert.equal(put.body.device_inference_devices_may_override, false);
    assert.deepEqual(put.body.aggregation, { enabled: true, count: 4, windowMinutes: 15, confidenceHigh: 0.85, retentionHours: 48 });
    assert.equal(put.body.device_policy, 'members', 'fields not sent are unchanged');
    const lock = entry((await api.get(`/settings/effective?tenantId=${team.id}`, owner)).body, 'device_inference');
    assert.equal(lock.mayOverride, false);

    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { default_join_role: 'admin' }, owner)).status, 400);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { join_policy: 'open' }, viewer)).status, 403);

    // Hub retention off: the rule's retentionHours reads null.
    await api.put('/settings/platform', { retention_enabled: false }, root);
    try {
      assert.equal((await api.get(`/settings/tenant?tenantId=${team.id}`, owner)).body.aggregation.retentionHours, null);
    } finally {
      await api.put('/settings/platform', { retention_enabled: null }, root);
    }
  });

  test('GET/PUT /settings/platform: hub switches, the teams lock alias, refusals', async () => {
    const res = await api.put('/settings/platform', { device_inference_teams_may_override: false }, root);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.settings.device_inference_teams_may_override, false);
    const owner = await f.user();
    const team = await f.team(owner);
    const locked = await api.put(`/settings/tenant?tenantId=${team.id}`, { device_inference: true }, owner);
    assert.equal(locked.status, 403);
    assert.equal(locked.body.error.code, 'LOCKED_BY_PLATFORM');
    await api.put('/settings/platform', { device_inference_teams_may_override: true }, root);
    const bad = await api.put('/settings/platform', { allow_public_pages: 'yes', join_policy: 'open' }, root);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.error.details.refusals.map((r: any) => r.key).sort(), ['allow_public_pages', 'join_policy']);
    assert.equal((await api.get('/settings/platform', owner)).status, 403);
    const audit = await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'admin.platform_settings_updated' AND actor_user_id = $1`, [
      root.id,
    ]);
    assert.ok(audit.length > 0);
  });

  test('level=account is the same data as PUT /auth/me/preferences', async () => {
    const person = await f.user();
    await patch(person, 'level=account', { values: { timeFormat: '12h' } });
    const me = await api.get('/auth/me', person);
    assert.equal(me.body.preferences.timeFormat, '12h');
    await api.put('/auth/me/preferences', { startOfWeek: 'sunday' }, person);
    const acc = (await api.get('/settings/effective?level=account', person)).body;
    assert.equal(acc.level, 'account');
    const sow = entry(acc, 'startOfWeek');
    assert.deepEqual({ value: sow.value, source: sow.source, own: sow.own }, { value: 'sunday', source: 'account', own: 'sunday' });
    const lang = entry(acc, 'primaryLanguage');
    assert.deepEqual({ value: lang.value, source: lang.source }, { value: 'en', source: 'default' });
    const refused = await api.patch(
      '/settings/effective?level=account',
      { values: { timeFormat: 'x', heartbeat_interval_sec: 30 } },
      person,
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.details.refusals.length, 2);
    assert.equal((await api.get('/settings/effective?level=hub', person)).status, 403);
    assert.equal((await api.get('/settings/effective', person)).body.error.code, 'SCOPE_REQUIRED');
  });
  test('GET /settings/definitions lists every setting with its type, range or options, unit and description', async () => {
    const person = await f.user();
    const res = await api.get('/settings/definitions', person);
    assert.equal(res.status, 200, res.text);
    const byKey = new Map(res.body.settings.map((d: any) => [d.key, d]));
    assert.deepEqual(byKey.get('heartbeat_interval_sec'), {
      key: 'heartbeat_interval_sec',
      type: 'integer',
      levels: ['hub', 'team', 'satellite'],
      default: 30,
      description: 'Seconds between heartbeats',
      unit: 's',
      min: 10,
      max: 3600,
    });
    const profile: any = byKey.get('recording_profile');
    assert.deepEqual(profile.options, ['continuous', 'scheduled', 'dawn_dusk']);
    assert.equal((byKey.get('recording_schedule') as any).maxItems, 12);
    assert.equal((byKey.get('drop_anthropogenic_at_satellite') as any).type, 'boolean');
    for (const d of res.body.settings) assert.ok(d.description.length > 0, `${d.key} has a description`);
    assert.equal((await api.get('/settings/definitions')).status, 401);
  });
});

describe('setting value types (settings/values.ts)', () => {
  test('every registry key has a value type, every value type a registry key, and every default passes its type', () => {
    const keys = SETTINGS.map((s) => s.key);
    assert.deepEqual(Object.keys(SETTING_VALUES).sort(), [...keys].sort());
    const isKey = (k: string): k is SettingKey => Object.hasOwn(SETTING_VALUES, k);
    for (const s of SETTINGS) {
      assert.ok(isKey(s.key), s.key);
      assert.deepEqual(settingValue(s.key, s.default), s.default, s.key);
    }
  });

  test('a stored value of the wrong type reads as the default', () => {
    assert.equal(settingValue('heartbeat_interval_sec', 60), 60);
    assert.equal(settingValue('heartbeat_interval_sec', '60'), 30);
    assert.equal(settingValue('default_join_role', 'owner'), 'viewer');
    assert.deepEqual(settingValue('recording_schedule', [{ start: '05:00', end: '07:00', reference: 'absolute' }]), [
      { start: '05:00', end: '07:00', reference: 'absolute' },
    ]);
    assert.deepEqual(settingValue('recording_schedule', [{ start: '05:00' }]), []);
    assert.equal(settingValue('public_place_name', null), null);
    assert.equal(settingValue('hub_name', null), 'Chorus');
  });
});
