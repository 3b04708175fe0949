/**
 * Satellites over HTTP (spec §4 "Satellites", §5 "Device rule", §3 satellite rows): registration,
 * re-registration and replacement, the device rule, satellite keys, config, archive, deletion.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { checkBrokerLogin } from './helpers/broker-login.ts';
import { HUB_VERSION } from '../src/modules/system/version.ts';

describe('satellites', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
  });
  after(() => hub.close());

  async function teamOf() {
    const owner = await f.user();
    const team: TestTeam = await f.team(owner);
    const admin = await f.member(team, 'admin');
    const member = await f.member(team, 'member');
    const viewer = await f.member(team, 'viewer');
    return { owner, team, admin, member, viewer };
  }

  async function register(as: TestUser, team: TestTeam, extra: Record<string, unknown> = {}) {
    const res = await api.post('/satellites', { tenantId: team.id, name: 'Garden', ...extra }, as);
    assert.ok(res.status === 201 || res.status === 200, `register: ${res.status} ${res.text}`);
    return res;
  }

  /** The audit entries of one action about one target, oldest first. */
  const audits = (action: string, targetId: string) =>
    hub.sql.query<any>(
      `SELECT actor_type, actor_user_id, tenant_id, details FROM audit_log WHERE action = $1 AND target_id = $2 ORDER BY id`,
      [action, targetId],
    );

  /** Waits for one message on a hub-side broker subscription. */
  function nextMessage(topic: string): Promise<any> {
    return new Promise((resolve) => {
      void hub.infra.broker.subscribe(topic, (_t, payload) => resolve(JSON.parse(payload.toString())), { qos: 1 });
    });
  }

  describe('registration', () => {
    test('201 with MQTT credentials and an API key shown once; registered_by stamped; audited', async () => {
      const t = await teamOf();
      const res = await register(t.member, t.team, { deviceId: 'pi-001', latitude: 52.1, longitude: 5.1 });
      assert.equal(res.status, 201);
      assert.equal(res.body.mqtt.username, res.body.id);
      assert.match(res.body.mqtt.password, /^[0-9a-f]{64}$/);
      assert.equal(res.body.mqtt.brokerUrl, hub.infra.broker.brokerUrl);
      assert.match(res.body.apiKey, /^[0-9a-f]{64}$/);
      const detail = await api.get(`/satellites/${res.body.id}`, t.member);
      assert.equal(detail.status, 200);
      assert.deepEqual(
        {
          registered_by: detail.body.registered_by,
          registered_by_me: detail.body.registered_by_me,
          can_manage: detail.body.can_manage,
          deviceId: detail.body.deviceId,
          online: detail.body.online,
        },
        { registered_by: t.member.id, registered_by_me: true, can_manage: true, deviceId: 'pi-001', online: false },
      );
      assert.equal(JSON.stringify(detail.body).includes(res.body.mqtt.password), false, 'the password is never shown again');
      const byViewer = await api.get(`/satellites/${res.body.id}`, t.viewer);
      assert.equal(byViewer.body.can_manage, false);
      assert.equal(byViewer.body.registered_by_me, false);
      const [row] = await hub.sql.query<any>(`SELECT action FROM audit_log WHERE target_id = $1`, [res.body.id]);
      assert.equal(row.action, 'device.satellite_registered');
      assert.equal((await checkBrokerLogin(hub, res.body.id, res.body.mqtt.password))?.tenantId, t.team.id);
    });

    test('a member under the admins policy gets 403 DEVICE_POLICY_ADMINS; an admin may', async () => {
      const t = await teamOf();
      await api.put(`/settings/tenant?tenantId=${t.team.id}`, { device_policy: 'admins' }, t.owner);
      const res = await api.post('/satellites', { tenantId: t.team.id, name: 'x' }, t.member);
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'DEVICE_POLICY_ADMINS');
      assert.equal((await api.post('/satellites', { tenantId: t.team.id, name: 'x' }, t.admin)).status, 201);
      assert.equal((await api.post('/satellites', { tenantId: t.team.id, name: 'x' }, t.viewer)).status, 403);
    });

    test('re-registration by deviceId rotates credentials and keeps the entry; others may not take it', async () => {
      const t = await teamOf();
      const first = await register(t.member, t.team, { deviceId: 'pi-rr' });
      const again = await register(t.member, t.team, { deviceId: 'pi-rr' });
      assert.equal(again.status, 200);
      assert.equal(again.body.id, first.body.id);
      assert.notEqual(again.body.mqtt.password, first.body.mqtt.password);
      assert.equal(await checkBrokerLogin(hub, first.body.id, first.body.mqtt.password), null, 'the old password stops');
      assert.equal((await api.get('/auth/me', { token: first.body.apiKey })).status, 401, 'the old key stops');
      const [rereg] = await audits('device.satellite_reregistered', first.body.id);
      assert.equal(rereg.actor_user_id, t.member.id);
      assert.deepEqual(rereg.details, { deviceId: 'pi-rr' });
      const other = await f.member(t.team, 'member');
      assert.equal((await api.post('/satellites', { tenantId: t.team.id, name: 'x', deviceId: 'pi-rr' }, other)).status, 403);
      assert.equal((await api.post('/satellites', { tenantId: t.team.id, name: 'x', deviceId: 'pi-rr' }, t.admin)).status, 200);
    });

    test('a member may claim a team-owned device; an archived entry comes back by re-registration', async () => {
      const t = await teamOf();
      const first = await register(t.member, t.team, { deviceId: 'pi-owned' });
      await hub.sql.query('UPDATE satellites SET registered_by = NULL WHERE id = $1', [first.body.id]);
      const other = await f.member(t.team, 'member');
      const claimed = await register(other, t.team, { deviceId: 'pi-owned' });
      assert.equal(claimed.status, 200);
      assert.equal((await api.get(`/satellites/${first.body.id}`, other)).body.registered_by, other.id);
      await api.post(`/satellites/${first.body.id}/archive`, undefined, other);
      const back = await register(other, t.team, { deviceId: 'pi-owned' });
      assert.equal(back.body.id, first.body.id);
      assert.equal((await api.get(`/satellites/${first.body.id}`, other)).body.archived, false);
      const audit = await hub.sql.query(
        `SELECT 1 FROM audit_log WHERE action = 'device.satellite_unarchived_by_heartbeat' AND target_id = $1`,
        [first.body.id],
      );
      assert.equal(audit.length, 1);
    });

    test('replaceSatelliteId: the device takes over the target entry, its old entry is archived and loses its credentials', async () => {
      const t = await teamOf();
      const old = await register(t.member, t.team, { name: 'Old board' });
      await api.patch(`/settings/effective?satelliteId=${old.body.id}`, { values: { heartbeat_interval_sec: 77 } }, t.member);
      const fresh = await register(t.member, t.team, { name: 'New board', deviceId: 'pi-new' });
      const res = await register(t.member, t.team, { name: 'New board', deviceId: 'pi-new', replaceSatelliteId: old.body.id });
      assert.equal(res.status, 200);
      assert.equal(res.body.id, old.body.id, 'keeps the target id');
      const target = (await api.get(`/satellites/${old.body.id}`, t.member)).body;
      assert.equal(target.deviceId, 'pi-new');
      const cfg = (await api.get(`/satellites/${old.body.id}/config`, t.member)).body;
      assert.equal(cfg.overrides.heartbeat_interval_sec, 77, 'keeps the settings');
      const previous = (await api.get(`/satellites/${fresh.body.id}`, t.member)).body;
      assert.equal(previous.archived, true);
      assert.equal(await checkBrokerLogin(hub, fresh.body.id, fresh.body.mqtt.password), null);
      const audit = await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'device.satellite_replaced' AND target_id = $1`, [
        old.body.id,
      ]);
      assert.equal(audit.length, 1);
      assert.equal(
        (await api.post('/satellites', { tenantId: t.team.id, name: 'x', replaceSatelliteId: old.body.id }, t.member)).status,
        400,
        'needs a deviceId',
      );
    });

    test('replaceSatelliteId: an unknown target answers 404, one the caller may not administer 403', async () => {
      const t = await teamOf();
      const unknown = await api.post(
        '/satellites',
        { tenantId: t.team.id, name: 'x', deviceId: 'pi-x', replaceSatelliteId: '00000000-0000-4000-8000-000000000000' },
        t.member,
      );
      assert.equal(unknown.status, 404);
      const outsider = await f.user();
      const elsewhere = (await register(outsider, await f.team(outsider), { name: 'Not in this team' })).body;
      assert.equal(
        (await api.post('/satellites', { tenantId: t.team.id, name: 'x', deviceId: 'pi-x', replaceSatelliteId: elsewhere.id }, t.member))
          .status,
        404,
        "another team's entry is unknown here",
      );
      const admins = (await register(t.admin, t.team, { name: 'Admin board' })).body;
      const refused = await api.post(
        '/satellites',
        { tenantId: t.team.id, name: 'x', deviceId: 'pi-x', replaceSatelliteId: admins.id },
        t.member,
      );
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'FORBIDDEN');
      assert.equal((await api.get(`/satellites/${admins.id}`, t.admin)).body.deviceId, null, 'the target is untouched');
      assert.equal((await hub.sql.query('SELECT 1 FROM satellites WHERE device_id = $1', ['pi-x'])).length, 0, 'no entry was made');
    });

    test('adoption by name: a device naming its id for the first time takes over the nameless entry of its name, for the registrant or an admin; without a device id nothing is taken over', async () => {
      const t = await teamOf();
      const first = (await register(t.member, t.team, { name: 'Hedge' })).body;
      const twin = await register(t.member, t.team, { name: 'Hedge' });
      assert.equal(twin.status, 201, 'a second satellite of the same name without a device id is a new entry');
      assert.notEqual(twin.body.id, first.id);
      assert.notEqual(await checkBrokerLogin(hub, first.id, first.mqtt.password), null, "the first entry's credentials are untouched");
      await hub.sql.query('DELETE FROM satellites WHERE id = $1', [twin.body.id]);

      const again = await register(t.member, t.team, { name: 'Hedge', deviceId: 'pi-hedge', latitude: 51.5, longitude: 4.5 });
      assert.equal(again.status, 200, 'the registrant adopts');
      assert.equal(again.body.id, first.id);
      assert.equal(await checkBrokerLogin(hub, first.id, first.mqtt.password), null, 'credentials rotated');
      assert.notEqual(await checkBrokerLogin(hub, first.id, again.body.mqtt.password), null);
      const detail = (await api.get(`/satellites/${first.id}`, t.member)).body;
      assert.deepEqual([detail.latitude, detail.longitude, detail.registered_by], [51.5, 4.5, t.member.id]);
      const [adopted] = await audits('device.satellite_reregistered', first.id);
      assert.deepEqual(adopted.details, { adoptedByName: true, name: 'Hedge', deviceId: 'pi-hedge' });
      assert.equal(
        (await register(t.member, t.team, { name: 'Other name', deviceId: 'pi-hedge' })).body.id,
        first.id,
        'from now on the device id finds it',
      );

      const nameless = (await register(t.member, t.team, { name: 'Gate' })).body;
      const byAdmin = await register(t.admin, t.team, { name: 'Gate', deviceId: 'pi-gate' });
      assert.equal(byAdmin.status, 200, 'an admin adopts');
      assert.equal(byAdmin.body.id, nameless.id);
      assert.equal((await api.get(`/satellites/${nameless.id}`, t.admin)).body.registered_by, t.member.id, 'the registrant stays');

      const post = (await register(t.member, t.team, { name: 'Post' })).body;
      const other = await f.member(t.team, 'member');
      const own = await register(other, t.team, { name: 'Post', deviceId: 'pi-post-other' });
      assert.equal(own.status, 201, 'another member registers a new entry');
      assert.notEqual(own.body.id, post.id);
      assert.notEqual(await checkBrokerLogin(hub, post.id, post.mqtt.password), null, "the first entry's credentials are untouched");

      assert.equal((await register(t.member, t.team, { name: 'post', deviceId: 'pi-post-2' })).status, 201, 'the name must match exactly');
      await hub.sql.query('UPDATE satellites SET registered_by = NULL WHERE id = $1', [post.id]);
      const teamOwned = await register(t.member, t.team, { name: 'Post', deviceId: 'pi-post-3' });
      assert.equal(teamOwned.status, 201, 'a member does not adopt a team-owned entry by name');
      const withDevice = (await register(t.member, t.team, { name: 'Board', deviceId: 'pi-board' })).body;
      assert.notEqual(
        (await register(t.member, t.team, { name: 'Board', deviceId: 'pi-board-2' })).body.id,
        withDevice.id,
        'an entry holding a device id is re-registered by that id only',
      );
      const archived = (await register(t.member, t.team, { name: 'Shelf' })).body;
      await api.post(`/satellites/${archived.id}/archive`, undefined, t.member);
      const fresh = await register(t.member, t.team, { name: 'Shelf', deviceId: 'pi-shelf' });
      assert.equal(fresh.status, 201, 'archived entries are not adopted');
      assert.equal((await api.get(`/satellites/${archived.id}`, t.member)).body.archived, true);
    });

    test('bad bodies are refused', async () => {
      const t = await teamOf();
      assert.equal((await api.post('/satellites', { tenantId: t.team.id, name: '' }, t.member)).status, 400);
      assert.equal((await api.post('/satellites', { tenantId: t.team.id, name: 'x', latitude: 91 }, t.member)).status, 400);
      assert.equal((await api.post('/satellites', { name: 'x' }, t.member)).body.error.code, 'TENANT_REQUIRED');
    });
  });

  describe('device rule', () => {
    test('admins and the registrant manage; viewers and other members get 403; other teams and unknown ids 404', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team)).body;
      const other = await f.member(t.team, 'member');
      const outsider = await f.user();
      await f.team(outsider);
      const rename = (as: TestUser, name: string) => api.patch(`/satellites/${sat.id}`, { name }, as);
      assert.equal((await rename(t.member, 'By registrant')).status, 200);
      assert.equal((await rename(t.admin, 'By admin')).status, 200);
      assert.equal((await rename(t.owner, 'By owner')).status, 200);
      assert.equal((await rename(other, 'No')).status, 403);
      assert.equal((await rename(t.viewer, 'No')).status, 403);
      assert.equal((await rename(outsider, 'No')).status, 404);
      assert.equal((await api.patch('/satellites/00000000-0000-4000-8000-000000000000', { name: 'x' }, t.admin)).status, 404);
      await api.put(`/settings/tenant?tenantId=${t.team.id}`, { device_policy: 'admins' }, t.owner);
      assert.equal((await rename(t.member, 'No longer')).status, 403, 'under the admins policy the registrant loses the right');
      assert.equal((await api.get(`/satellites/${sat.id}`, t.member)).body.can_manage, false);
    });

    test("a satellite's own key may rename, rotate its key and push its config, and nothing else", async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team)).body;
      const second = (await register(t.member, t.team, { name: 'Second' })).body;
      const key = { token: sat.apiKey };
      assert.equal((await api.patch(`/satellites/${sat.id}`, { name: 'Renamed by itself' }, key)).status, 200);
      assert.equal((await api.post(`/satellites/${sat.id}/profile`, undefined, key)).status, 200);
      assert.equal((await api.post(`/satellites/${sat.id}/archive`, undefined, key)).status, 403);
      assert.equal((await api.get(`/satellites/${sat.id}`, key)).status, 403);
      assert.equal((await api.get('/auth/me', key)).status, 403);
      assert.equal((await api.patch(`/satellites/${second.id}`, { name: 'Not mine' }, key)).status, 403);
      const rotated = await api.post(`/satellites/${sat.id}/rotate-api-key`, undefined, key);
      assert.equal(rotated.status, 200);
      const [renamed] = await audits('admin.satellite_renamed', sat.id);
      assert.equal(renamed.actor_type, 'api_key');
      assert.deepEqual(renamed.details, { from: 'Garden', to: 'Renamed by itself' });
      const [rotation] = await audits('admin.satellite_api_key_rotated', sat.id);
      assert.equal(rotation.actor_type, 'api_key');
      assert.equal(rotation.tenant_id, t.team.id);
      assert.equal((await audits('admin.satellite_profile_changed', sat.id)).length, 1);
      assert.equal((await api.patch(`/satellites/${sat.id}`, { name: 'Old key' }, key)).status, 401);
      assert.equal((await api.patch(`/satellites/${sat.id}`, { name: 'New key' }, { token: rotated.body.apiKey })).status, 200);
    });
  });

  describe('list, archive and config', () => {
    test('archived satellites are hidden unless ?includeArchived=1; filters and sorting', async () => {
      const t = await teamOf();
      const a = (await register(t.member, t.team, { name: 'Alder' })).body;
      const b = (await register(t.admin, t.team, { name: 'Birch' })).body;
      await api.post(`/satellites/${b.id}/archive`, undefined, t.admin);
      const list = await api.get(`/satellites?tenantId=${t.team.id}`, t.viewer);
      assert.deepEqual(
        list.body.satellites.map((s: any) => s.id),
        [a.id],
      );
      assert.equal(list.body.total, 1);
      const all = await api.get(`/satellites?tenantId=${t.team.id}&includeArchived=1&sortBy=name&sortDir=desc`, t.viewer);
      assert.deepEqual(
        all.body.satellites.map((s: any) => s.name),
        ['Birch', 'Alder'],
      );
      const mine = await api.get(`/satellites?tenantId=${t.team.id}&registeredByMe=true`, t.member);
      assert.deepEqual(
        mine.body.satellites.map((s: any) => s.id),
        [a.id],
      );
      assert.equal((await api.post(`/satellites/${b.id}/unarchive`, undefined, t.admin)).body.archived, false);
      const actions = (await hub.sql.query<any>(`SELECT action FROM audit_log WHERE target_id = $1 ORDER BY id`, [b.id])).map(
        (r) => r.action,
      );
      assert.deepEqual(actions, ['device.satellite_registered', 'admin.satellite_archived', 'admin.satellite_unarchived']);
    });

    test('PUT config replaces the override row through the settings writer; configLocked is for admins; history newest first', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team)).body;
      const first = await api.put(
        `/satellites/${sat.id}/config`,
        { overrides: { heartbeat_interval_sec: 45, filter_min_rms: 0.01 } },
        t.member,
      );
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.effective.heartbeat_interval_sec, 45);
      assert.equal(first.body.recordingProfile.sampleRate, 48000);
      const second = await api.put(`/satellites/${sat.id}/config`, { overrides: { filter_min_rms: 0.02 } }, t.member);
      assert.equal(second.body.overrides.heartbeat_interval_sec, null, 'a field left out is cleared');
      assert.equal(second.body.effective.heartbeat_interval_sec, 30);
      const bad = await api.put(
        `/satellites/${sat.id}/config`,
        { overrides: { filter_min_rms: 5, nope: 1, heartbeat_interval_sec: 'often' } },
        t.member,
      );
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
      assert.deepEqual(
        bad.body.error.details.refusals.map((r: any) => r.key).sort(),
        ['filter_min_rms', 'heartbeat_interval_sec', 'nope'],
        'every refusal is listed',
      );
      const badValues = await api.put(
        `/satellites/${sat.id}/config`,
        { overrides: { filter_min_rms: 5, heartbeat_interval_sec: 1 } },
        t.member,
      );
      assert.equal(badValues.status, 400);
      assert.deepEqual(badValues.body.error.details.refusals.map((r: any) => r.key).sort(), ['filter_min_rms', 'heartbeat_interval_sec']);
      assert.equal(
        (await api.get(`/satellites/${sat.id}/config`, t.member)).body.overrides.filter_min_rms,
        0.02,
        'a refused PUT changes nothing',
      );
      const locked = await api.put(`/satellites/${sat.id}/config`, { configLocked: true }, t.member);
      assert.equal(locked.status, 403);
      assert.equal(locked.body.error.code, 'ADMIN_ONLY_SETTING');
      assert.equal(
        (await api.put(`/satellites/${sat.id}/config`, { configLocked: true, overrides: { filter_min_rms: 0.02 } }, t.admin)).body
          .configLocked,
        true,
      );
      const configEntries = await audits('admin.satellite_config_changed', sat.id);
      assert.equal(configEntries[0].actor_user_id, t.member.id);
      assert.equal(configEntries[0].details.values.heartbeat_interval_sec, 45, 'an override write is audited with its values');
      const lockEntries = configEntries.filter((e: any) => 'configLocked' in e.details);
      assert.equal(lockEntries.length, 1);
      assert.equal(lockEntries[0].actor_user_id, t.admin.id);
      assert.deepEqual(lockEntries[0].details, { configLocked: true });
      await api.patch(`/settings/effective?tenantId=${t.team.id}`, { mayOverride: { filter_min_rms: false } }, t.admin);
      const underLock = await api.put(`/satellites/${sat.id}/config`, { overrides: { filter_min_rms: 0.03 } }, t.admin);
      assert.equal(underLock.status, 403);
      assert.equal(underLock.body.error.code, 'LOCKED_BY_TEAM');
      const history = await api.get(`/satellites/${sat.id}/config/history`, t.viewer);
      assert.equal(history.status, 200);
      assert.ok(history.body.history.length >= 2);
      assert.equal(history.body.history[0].source, 'team', 'the team lock came last');
      assert.ok(history.body.history.slice(1).every((h: any) => h.source === 'web'));
      const times = history.body.history.map((h: any) => h.changedAt);
      assert.deepEqual([...times].sort().reverse(), times);
    });

    test('schedule resolves sun-relative windows at the satellite position', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team, { latitude: 52.0, longitude: 5.0 })).body;
      await api.put(`/satellites/${sat.id}/config`, { overrides: {} }, t.member);
      await api.patch(
        `/settings/effective?satelliteId=${sat.id}`,
        {
          values: {
            recording_profile: 'scheduled',
            recording_schedule: [
              { start: -30, end: 90, reference: 'sunrise' },
              { start: '21:00', end: '02:00', reference: 'absolute' },
            ],
          },
        },
        t.member,
      );
      const res = await api.get(`/satellites/${sat.id}/schedule?date=2026-06-21`, t.viewer);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.profile, 'scheduled');
      const sunrise = new Date(res.body.sun.sunrise);
      assert.ok(
        sunrise.getUTCHours() >= 3 && sunrise.getUTCHours() <= 4,
        `sunrise in the Netherlands at midsummer is about 03:20 UTC, got ${res.body.sun.sunrise}`,
      );
      assert.equal(new Date(res.body.windows[0].startsAt).getTime(), sunrise.getTime() - 30 * 60_000);
      assert.equal(res.body.windows[1].startsAt, '2026-06-21T21:00:00.000Z');
      assert.equal(res.body.windows[1].endsAt, '2026-06-22T02:00:00.000Z');
      const nowhere = (await register(t.member, t.team, { name: 'No GPS' })).body;
      assert.equal((await api.get(`/satellites/${nowhere.id}/schedule`, t.viewer)).body.sun, null);
    });

    test('a sunset-relative window runs from minutes before to minutes after sunset', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team, { latitude: 52.0, longitude: 5.0 })).body;
      const set = await api.patch(
        `/settings/effective?satelliteId=${sat.id}`,
        { values: { recording_profile: 'scheduled', recording_schedule: [{ start: -60, end: 45, reference: 'sunset' }] } },
        t.member,
      );
      assert.equal(set.status, 200, set.text);
      const res = await api.get(`/satellites/${sat.id}/schedule?date=2026-12-21`, t.viewer);
      assert.equal(res.status, 200, res.text);
      const sunset = new Date(res.body.sun.sunset);
      assert.ok(
        sunset.getUTCHours() >= 15 && sunset.getUTCHours() < 16,
        `sunset in the Netherlands at midwinter is about 15:30 UTC, got ${res.body.sun.sunset}`,
      );
      assert.deepEqual(res.body.windows, [
        {
          start: -60,
          end: 45,
          reference: 'sunset',
          startsAt: new Date(sunset.getTime() - 60 * 60_000).toISOString(),
          endsAt: new Date(sunset.getTime() + 45 * 60_000).toISOString(),
        },
      ]);
      const refused = await api.patch(
        `/settings/effective?satelliteId=${sat.id}`,
        { values: { recording_schedule: [{ start: 30, end: -30, reference: 'sunset' }] } },
        t.member,
      );
      assert.equal(refused.status, 400, 'a sun-relative window must start before it ends');
    });

    test('PUT config under a hub lock: a new value 403 LOCKED_BY_PLATFORM; re-sending or clearing the stored value is allowed', async () => {
      const t = await teamOf();
      const root = await f.user({ admin: true });
      const sat = (await register(t.member, t.team)).body;
      assert.equal((await api.put(`/satellites/${sat.id}/config`, { overrides: { outbox_max_age_hours: 100 } }, t.member)).status, 200);
      assert.equal((await api.patch('/settings/effective?level=hub', { mayOverride: { outbox_max_age_hours: false } }, root)).status, 200);
      try {
        const changed = await api.put(`/satellites/${sat.id}/config`, { overrides: { outbox_max_age_hours: 200 } }, t.admin);
        assert.equal(changed.status, 403);
        assert.equal(changed.body.error.code, 'LOCKED_BY_PLATFORM');
        const resent = await api.put(`/satellites/${sat.id}/config`, { overrides: { outbox_max_age_hours: 100 } }, t.member);
        assert.equal(resent.status, 200, resent.text);
        assert.equal(resent.body.overrides.outbox_max_age_hours, 100, 'the stored value stays, shown as own');
        assert.equal(resent.body.effective.outbox_max_age_hours, 168, 'the lock ends the walk at the hub');
        const cleared = await api.put(`/satellites/${sat.id}/config`, { overrides: {} }, t.member);
        assert.equal(cleared.status, 200, cleared.text);
        assert.equal(cleared.body.overrides.outbox_max_age_hours, null);
        const entries = await audits('admin.satellite_config_changed', sat.id);
        assert.deepEqual(
          entries.map((e: any) => e.details.values.outbox_max_age_hours),
          [100, 100, null],
          'the first write, the re-send and the clear; the refused change left none',
        );
      } finally {
        await api.patch('/settings/effective?level=hub', { mayOverride: { outbox_max_age_hours: true } }, root);
      }
    });
  });

  describe('broker commands', () => {
    test('update sets update_status and sends targetVersion; logs request sends log-request', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team)).body;
      const update = nextMessage(`chorus/${t.team.id}/${sat.id}/update`);
      const res = await api.post(`/satellites/${sat.id}/update`, undefined, t.member);
      assert.equal(res.status, 200);
      assert.equal(res.body.targetVersion, HUB_VERSION);
      assert.deepEqual(await update, { satelliteId: sat.id, tenantId: t.team.id, targetVersion: HUB_VERSION });
      assert.equal((await api.get(`/satellites/${sat.id}`, t.viewer)).body.update_status, 'updating');
      const [updateEntry] = await audits('admin.satellite_update_requested', sat.id);
      assert.equal(updateEntry.actor_user_id, t.member.id);
      assert.deepEqual(updateEntry.details, { targetVersion: HUB_VERSION });

      const logs = nextMessage(`chorus/${t.team.id}/${sat.id}/log-request`);
      const req = await api.post(`/satellites/${sat.id}/logs/request`, { tail: 50 }, t.member);
      assert.equal(req.status, 202);
      assert.deepEqual(await logs, { requestId: req.body.requestId, tail: 50 });
      assert.equal((await api.get(`/satellites/${sat.id}/logs`, t.member)).body.logs.requestId, req.body.requestId);
      const [logsEntry] = await audits('admin.satellite_logs_requested', sat.id);
      assert.equal(logsEntry.actor_user_id, t.member.id);
      assert.deepEqual(logsEntry.details, { tail: 50 });
    });

    test("satellite_releases (hub setting): update names the release of the satellite's stream, else the hub version; /system/versions names the highest", async () => {
      const t = await teamOf();
      const root = await f.user({ admin: true });
      const versions = () => api.get(`/system/versions?tenantId=${t.team.id}`, t.viewer);
      assert.deepEqual((await versions()).body, { hub: HUB_VERSION, satellite: null, mobile: null }, 'no releases recorded');

      const refused = await api.put('/settings/platform', { satellite_releases: { satellite: '1.4', beta: '1.0.0' } }, root);
      assert.equal(refused.status, 400);
      assert.deepEqual(
        refused.body.error.details.refusals.map((r: any) => r.key),
        ['satellite_releases'],
      );
      for (const bad of [['1.4.0'], '1.4.0', { satellite: 'v1.4.0' }, { satellite: '01.4.0' }, { mobile: 140 }]) {
        assert.equal((await api.put('/settings/platform', { satellite_releases: bad }, root)).status, 400, JSON.stringify(bad));
      }
      const byTeam = await api.patch(
        `/settings/effective?tenantId=${t.team.id}`,
        { values: { satellite_releases: { satellite: '9.0.0' } } },
        t.owner,
      );
      assert.equal(byTeam.status, 400, 'a hub setting only');
      assert.equal((await api.put('/settings/platform', { satellite_releases: { satellite: '9.0.0' } }, t.owner)).status, 403);

      const set = await api.put('/settings/platform', { satellite_releases: { satellite: '1.10.0', mobile: '1.10.0-rc.1+build.7' } }, root);
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(set.body.settings.satellite_releases, { satellite: '1.10.0', mobile: '1.10.0-rc.1+build.7' });
      try {
        assert.deepEqual(
          (await versions()).body,
          { hub: HUB_VERSION, satellite: '1.10.0', mobile: null },
          'a release outranks its release candidate',
        );
        const board = (await register(t.member, t.team, { name: 'Board' })).body;
        const phone = (await register(t.member, t.team, { name: 'Phone' })).body;
        const old = (await register(t.member, t.team, { name: 'Old build' })).body;
        await hub.sql.query(`UPDATE satellites SET stream = 'satellite' WHERE id = $1`, [board.id]);
        await hub.sql.query(`UPDATE satellites SET stream = 'mobile' WHERE id = $1`, [phone.id]);
        const update = nextMessage(`chorus/${t.team.id}/${board.id}/update`);
        const res = await api.post(`/satellites/${board.id}/update`, undefined, t.member);
        assert.deepEqual(res.body, { targetVersion: '1.10.0', update_status: 'updating' });
        assert.equal((await update).targetVersion, '1.10.0');
        assert.equal((await api.get(`/satellites/${board.id}`, t.viewer)).body.targetVersion, '1.10.0');
        assert.deepEqual((await audits('admin.satellite_update_requested', board.id))[0].details, { targetVersion: '1.10.0' });
        assert.equal((await api.post(`/satellites/${phone.id}/update`, undefined, t.member)).body.targetVersion, '1.10.0-rc.1+build.7');
        assert.equal(
          (await api.post(`/satellites/${old.id}/update`, undefined, t.member)).body.targetVersion,
          HUB_VERSION,
          'no stream reported: the hub version',
        );

        await api.put('/settings/platform', { satellite_releases: { mobile: '2.0.0' } }, root);
        assert.equal(
          (await api.post(`/satellites/${board.id}/update`, undefined, t.member)).body.targetVersion,
          HUB_VERSION,
          'no release recorded for its stream: the hub version',
        );
        assert.equal((await versions()).body.satellite, '2.0.0');
      } finally {
        await api.put('/settings/platform', { satellite_releases: null }, root);
      }
      assert.equal((await versions()).body.satellite, null);
    });

    test('a settings change pushes config to each satellite whose effective config changed', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team)).body;
      const config = nextMessage(`chorus/${t.team.id}/${sat.id}/config`);
      const res = await api.put(`/settings/tenant?tenantId=${t.team.id}`, { filter_min_rms: 0.02 }, t.owner);
      assert.equal(res.status, 200);
      const body = await config;
      assert.equal(body.filterMinRms, 0.02);
      assert.equal(body.tenantId, t.team.id);
    });

    test('profile pushes the effective config on the config channel', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team)).body;
      const config = nextMessage(`chorus/${t.team.id}/${sat.id}/config`);
      await api.post(`/satellites/${sat.id}/profile`, undefined, t.member);
      const body = await config;
      assert.equal(body.satelliteId, sat.id);
      assert.equal(body.heartbeatIntervalSec, 30);
      assert.deepEqual(body.excludedClassifierCategories, ['anthropogenic', 'human_voice', 'amphibian', 'insect', 'other_animal']);
    });
  });

  describe('deletion', () => {
    test('preview counts, CONFIRM_NAME_MISMATCH, then objects, rows and keys go and the counts are audited', async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team, { name: 'Doomed' })).body;
      const keys: string[] = [];
      for (let i = 0; i < 2; i++) {
        const key = `audio/${t.team.id}/${sat.id}/2026/11/22/${i}.wav`;
        await makeChunk(hub, {
          satellite: { id: sat.id, tenantId: t.team.id },
          key,
          audio: Buffer.alloc(1000 + i),
          contentType: 'audio/wav',
        });
        keys.push(key);
      }
      // Detections: two promoted (one a stitched continuation), one tentative; another satellite's row is not counted.
      const neighbour = (await register(t.member, t.team, { name: 'Neighbour' })).body;
      const detection = (satelliteId: string, tentative: boolean) =>
        makeDetection(hub, {
          satellite: { id: satelliteId, tenantId: t.team.id },
          confidence: 0.8,
          modelId: 'test',
          tentative,
          promoted: !tentative,
        });
      await detection(sat.id, false);
      await detection(sat.id, false);
      await detection(sat.id, true);
      await detection(neighbour.id, false);
      const preview = await api.get(`/satellites/${sat.id}/deletion-preview`, t.viewer);
      assert.deepEqual(preview.body, { detections: 3, promoted: 2, chunks: 2, audioBytes: 2001, alerts: 0, fieldNotes: 0 });
      const wrong = await api.del(`/satellites/${sat.id}`, t.member, { confirmName: 'doomed' });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.error.code, 'CONFIRM_NAME_MISMATCH');
      assert.equal((await api.del(`/satellites/${sat.id}`, t.viewer, { confirmName: 'Doomed' })).status, 403);
      assert.equal((await api.del(`/satellites/${sat.id}`, t.member, { confirmName: 'Doomed' })).status, 204);
      for (const k of keys) assert.equal(await hub.infra.storage.stat(k), null, 'audio objects removed');
      assert.equal((await hub.sql.query('SELECT 1 FROM chunks WHERE satellite_id = $1', [sat.id])).length, 0);
      assert.equal((await api.get(`/satellites/${sat.id}`, t.member)).status, 404);
      assert.equal((await api.patch(`/satellites/${sat.id}`, { name: 'x' }, { token: sat.apiKey })).status, 401);
      assert.equal(await checkBrokerLogin(hub, sat.id, sat.mqtt.password), null);
      const [audit] = await hub.sql.query<any>(
        `SELECT details FROM audit_log WHERE action = 'admin.satellite_deleted' AND target_id = $1`,
        [sat.id],
      );
      assert.deepEqual(audit.details, {
        name: 'Doomed',
        chunks: 2,
        audioBytes: 2001,
        detections: 3,
        promoted: 2,
        alerts: 0,
        fieldNotes: 0,
      });
      assert.equal((await hub.sql.query('SELECT 1 FROM detections WHERE satellite_id = $1', [sat.id])).length, 0, 'detections cascade');
      assert.equal((await api.get(`/satellites/${neighbour.id}/deletion-preview`, t.viewer)).body.detections, 1);
    });
  });

  describe('when people leave', () => {
    test("the leaver's devices become team-owned and are disconnected; ?devices=keep leaves them running", async () => {
      const t = await teamOf();
      const sat = (await register(t.member, t.team)).body;
      assert.equal((await api.post(`/tenants/${t.team.id}/leave`, undefined, t.member)).status, 204);
      const after = (await api.get(`/satellites/${sat.id}`, t.admin)).body;
      assert.equal(after.registered_by, null);
      assert.equal((await api.patch(`/satellites/${sat.id}`, { name: 'x' }, { token: sat.apiKey })).status, 401);
      assert.equal(await checkBrokerLogin(hub, sat.id, sat.mqtt.password), null);
      const [moved] = await audits('admin.satellite_transferred', sat.id);
      assert.deepEqual(
        { actor: moved.actor_type, tenant: moved.tenant_id, details: moved.details },
        { actor: 'internal', tenant: t.team.id, details: { from: t.member.id, to: null, disconnected: true } },
      );

      const keeper = await f.member(t.team, 'member');
      const kept = (await register(keeper, t.team, { name: 'Kept' })).body;
      const root = await f.user({ admin: true });
      assert.equal((await api.del(`/admin/users/${keeper.id}/tenants/${t.team.id}?devices=keep`, root)).status, 204);
      assert.equal((await api.get(`/satellites/${kept.id}`, t.admin)).body.registered_by, null);
      assert.equal((await api.patch(`/satellites/${kept.id}`, { name: 'still mine' }, { token: kept.apiKey })).status, 200);
      assert.notEqual(await checkBrokerLogin(hub, kept.id, kept.mqtt.password), null);
      assert.deepEqual(
        (await audits('admin.satellite_transferred', kept.id)).map((e: any) => e.details),
        [{ from: keeper.id, to: null, disconnected: false }],
      );
    });

    test("a deleted person's devices become team-owned, audited admin.satellite_transferred; devices of others are not touched", async () => {
      const t = await teamOf();
      const leaver = await f.member(t.team, 'member');
      const a = (await register(leaver, t.team, { name: 'A' })).body;
      const b = (await register(leaver, t.team, { name: 'B' })).body;
      const stays = (await register(t.member, t.team, { name: 'Stays' })).body;
      const root = await f.user({ admin: true });
      assert.equal((await api.del(`/admin/users/${leaver.id}`, root)).status, 204);
      for (const id of [a.id, b.id]) {
        assert.equal((await api.get(`/satellites/${id}`, t.admin)).body.registered_by, null);
        const entries = await audits('admin.satellite_transferred', id);
        assert.equal(entries.length, 1);
        assert.deepEqual(entries[0].details, { from: leaver.id, to: null, disconnected: true });
      }
      assert.equal((await audits('admin.satellite_transferred', stays.id)).length, 0);
      assert.equal((await api.get(`/satellites/${stays.id}`, t.admin)).body.registered_by, t.member.id);
    });
  });
});
