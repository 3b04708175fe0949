/**
 * Home Assistant over MQTT (issue 38 point 2): a team's mqtt_home_assistant channel sends each
 * detection to the team's own broker — here a Mosquitto of our own with a login — with MQTT
 * discovery (three retained sensor configs per satellite) and a retained state JSON. Detections
 * come from the reference soundscape through the real pipeline; a subscriber reads what the
 * broker keeps. A wrong password is a recorded delivery failure; bad settings are a clear 400.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { ALERT_ENV } from './helpers/alerts.ts';
import { queueSettled, waitFor } from './helpers/wait.ts';
import { RawSatellite } from './helpers/raw-satellite.ts';
import { MOSQUITTO, MOSQUITTO_SKIP, startMosquitto, type RunningMosquitto } from './helpers/mosquitto.ts';
import { SPECIES } from '../src/satellite/soundscape.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { ALERT_DELIVERY_QUEUE } from '../src/modules/alerts/dispatch.ts';

const species = SPECIES[4]!; // the robin of the reference soundscape
const robin = speciesCatalog().byLabel(species.label)!;

describe('Home Assistant over MQTT', { skip: MOSQUITTO ? false : MOSQUITTO_SKIP }, () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let broker: RunningMosquitto;
  let owner: TestUser;
  let team: TestTeam;
  let sub: MqttClient;
  /** Every message the subscriber saw, newest last, with its retain flag. */
  const seen: Array<{ topic: string; payload: string; retain: boolean }> = [];
  /** Every response body of the channel routes, searched for the password at the end. */
  const bodies: string[] = [];

  const channel = async (config: Record<string, unknown>, name = 'Home') => {
    const res = await api.post('/alert-rules/channels', { tenantId: team.id, type: 'mqtt_home_assistant', name, config }, owner);
    bodies.push(res.text ?? '');
    return res;
  };

  before(async () => {
    broker = await startMosquitto();
    hub = await startHub({ env: ALERT_ENV });
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    sub = await mqtt.connectAsync(broker.url, { username: broker.adminUsername, password: broker.adminPassword, protocolVersion: 4 });
    sub.on('message', (topic, payload, packet) => seen.push({ topic, payload: payload.toString(), retain: packet.retain }));
    await sub.subscribeAsync(['homeassistant/#', 'chorus/#', 'garden/#', 'ha/#'], { qos: 1 });
  });
  after(async () => {
    await sub?.endAsync();
    await hub?.close();
    await broker?.stop();
  });

  test('bad settings are refused with a clear code; the password is never shown', async () => {
    assertError(await channel({ brokerUrl: 'http://127.0.0.1:1883' }), 400, 'INVALID_CHANNEL_CONFIG');
    assertError(await channel({ brokerUrl: 'mqtt://user:pw@127.0.0.1:1883' }), 400, 'INVALID_CHANNEL_CONFIG');
    assertError(await channel({ username: 'x' }), 400, 'INVALID_CHANNEL_CONFIG');
    assertError(await channel({ brokerUrl: broker.url, stationToken: 'abc' }), 400, 'INVALID_CHANNEL_CONFIG');
    assertError(await channel({ brokerUrl: broker.url, topicPrefix: 'a/#' }), 400, 'VALIDATION_FAILED');
    assertError(await channel({ brokerUrl: 'mqtt://10.1.2.3:1883' }), 400, 'URL_NOT_ALLOWED');
    const ok = await channel({ brokerUrl: broker.url, username: broker.adminUsername, password: 'one-off-password-123' }, 'Shown');
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.hasSecret, true);
    assert.deepEqual(ok.body.config, {
      brokerUrl: `${broker.url}`,
      username: broker.adminUsername,
      topicPrefix: 'chorus',
      discoveryPrefix: 'homeassistant',
    });
    const list = await api.get(`/alert-rules/channels?tenantId=${team.id}`, owner);
    bodies.push(list.text ?? '');
    assert.ok(!list.text?.includes('one-off-password-123'));
    const stored = await hub.sql.one<{ secrets: string }>('SELECT secrets FROM alert_channels WHERE id = $1', [ok.body.id]);
    assert.ok(!stored.secrets.includes('one-off-password-123'), 'sealed at rest');
    assert.equal((await api.del(`/alert-rules/channels/${ok.body.id}`, owner)).status, 204);
  });

  test('a rule cannot send alerts to a stream channel', async () => {
    const ch = await channel({ brokerUrl: broker.url, username: broker.adminUsername, password: broker.adminPassword }, 'Not for rules');
    assert.equal(ch.status, 201, ch.text);
    const res = await api.post('/alert-rules/rules', { tenantId: team.id, name: 'x', type: 'detection', channelIds: [ch.body.id] }, owner);
    assertError(res, 400, 'CHANNEL_IS_STREAM');
    assert.equal((await api.del(`/alert-rules/channels/${ch.body.id}`, owner)).status, 204);
  });

  test('the test button publishes discovery and a sample state, nothing retained', async () => {
    const ch = await channel(
      {
        brokerUrl: broker.url,
        username: broker.adminUsername,
        password: broker.adminPassword,
        topicPrefix: 'ha',
        discoveryPrefix: 'ha/disc',
      },
      'Tested',
    );
    assert.equal(ch.status, 201, ch.text);
    const res = await api.post(`/alert-rules/channels/${ch.body.id}/test`, {}, owner);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.delivered, true, res.text);
    const state = await waitFor('the sample state', () => seen.find((m) => m.topic === 'ha/test/state'));
    assert.equal(state.retain, false);
    assert.equal(JSON.parse(state.payload).species, 'Eurasian Wren');
    const configs = seen.filter((m) => m.topic.startsWith('ha/disc/sensor/chorus_test/'));
    assert.deepEqual(configs.map((m) => m.topic).sort(), [
      'ha/disc/sensor/chorus_test/confidence/config',
      'ha/disc/sensor/chorus_test/count_today/config',
      'ha/disc/sensor/chorus_test/last_species/config',
    ]);
    assert.ok(configs.every((m) => !m.retain));
    assert.equal((await api.del(`/alert-rules/channels/${ch.body.id}`, owner)).status, 204);
  });

  describe('detections reach Home Assistant', () => {
    let sat: RawSatellite;
    let good: string;
    let bad: string;

    before(async () => {
      const g = await channel({ brokerUrl: broker.url, username: broker.adminUsername, password: broker.adminPassword }, 'Good');
      assert.equal(g.status, 201, g.text);
      good = g.body.id;
      const b = await channel({ brokerUrl: broker.url, username: broker.adminUsername, password: 'wrong-password-456' }, 'Wrong password');
      assert.equal(b.status, 201, b.text);
      bad = b.body.id;
      sat = await RawSatellite.register(hub, owner, team, 'Garden');
    });
    after(() => sat.close());

    /** Reads what the broker keeps: a fresh subscriber gets the retained messages only. */
    async function retained(filter: string): Promise<Map<string, string>> {
      const c = await mqtt.connectAsync(broker.url, { username: broker.adminUsername, password: broker.adminPassword, protocolVersion: 4 });
      const got = new Map<string, string>();
      c.on('message', (topic, payload, packet) => {
        if (packet.retain) got.set(topic, payload.toString());
      });
      await c.subscribeAsync(filter, { qos: 1 });
      // Retained messages come right after SUBACK; a round trip through the broker marks their end.
      await c.publishAsync('chorus-test/marker', 'x', { qos: 1 });
      await c.endAsync();
      return got;
    }

    async function chunk(seed: number, agoMs: number) {
      const { ack } = await sat.publishChunk({ species: [species.label], seed, recordedAt: new Date(hub.clock.now().getTime() - agoMs) });
      assert.equal(ack.status, 'stored');
      await queueSettled(hub.infra.queue, INFERENCE_QUEUE);
      await queueSettled(hub.infra.queue, ALERT_DELIVERY_QUEUE);
    }

    test('retained discovery configs for the satellite and its state JSON', async () => {
      await chunk(77, 120_000);
      const node = `chorus_${sat.id}`;
      const kept = await waitFor('the retained state', async () => {
        const r = await retained('#');
        return r.has(`chorus/${sat.id}/state`) && r;
      });
      for (const object of ['last_species', 'confidence', 'count_today']) {
        const raw = kept.get(`homeassistant/sensor/${node}/${object}/config`);
        assert.ok(raw, `${object} config is retained`);
        const config = JSON.parse(raw!);
        assert.equal(config.unique_id, `${node}_${object}`);
        assert.equal(config.state_topic, `chorus/${sat.id}/state`);
        assert.ok(config.value_template.includes('value_json'));
        assert.deepEqual(config.device, { identifiers: [node], name: 'Garden', manufacturer: 'Chorus', model: 'Chorus satellite' });
      }
      assert.equal(
        JSON.parse(kept.get(`homeassistant/sensor/${node}/last_species/config`)!).json_attributes_topic,
        `chorus/${sat.id}/state`,
      );
      const state = JSON.parse(kept.get(`chorus/${sat.id}/state`)!);
      assert.deepEqual(Object.keys(state).sort(), ['confidence', 'countToday', 'detectedAt', 'scientificName', 'species']);
      const listed = await hub.sql.query<{ common_name: string; n: number }>(
        `SELECT common_name, count(*) OVER ()::int AS n FROM detections WHERE satellite_id = $1 AND call_id IS NULL AND NOT tentative
         ORDER BY detected_at DESC LIMIT 1`,
        [sat.id],
      );
      assert.equal(state.species, listed[0]!.common_name);
      assert.equal(state.countToday, listed[0]!.n);
      assert.ok(state.countToday >= 1);
      assert.ok(state.confidence > 0 && state.confidence <= 1);
      assert.ok(!Number.isNaN(Date.parse(state.detectedAt)));
      assert.ok(listed.length > 0 && robin.code);
    });

    test('count today goes up with the next detection', async () => {
      const before = JSON.parse((await retained(`chorus/${sat.id}/state`)).get(`chorus/${sat.id}/state`)!);
      await chunk(78, 60_000);
      const after = await waitFor('a higher count', async () => {
        const s = JSON.parse((await retained(`chorus/${sat.id}/state`)).get(`chorus/${sat.id}/state`)!);
        return s.countToday > before.countToday && s;
      });
      const n = await hub.sql.one<{ n: number }>(
        'SELECT count(*)::int AS n FROM detections WHERE satellite_id = $1 AND call_id IS NULL AND NOT tentative',
        [sat.id],
      );
      assert.equal(after.countToday, n.n);
    });

    test('each detection is one delivery per channel, delivered; the wrong password fails without retries, the hub keeps serving', async () => {
      const rows = await hub.sql.query<{ channel_id: string; status: string; attempts: number; error: string | null }>(
        "SELECT channel_id, status, attempts, error FROM alert_deliveries WHERE channel_id = ANY($1::uuid[]) AND event = 'detection'",
        [[good, bad]],
      );
      const detections = await hub.sql.one<{ n: number }>(
        'SELECT count(*)::int AS n FROM detections WHERE satellite_id = $1 AND call_id IS NULL AND NOT tentative',
        [sat.id],
      );
      const ofGood = rows.filter((r) => r.channel_id === good);
      const ofBad = rows.filter((r) => r.channel_id === bad);
      assert.equal(ofGood.length, detections.n);
      assert.ok(ofGood.every((r) => r.status === 'delivered' && r.attempts === 1));
      assert.equal(ofBad.length, detections.n);
      for (const r of ofBad) {
        assert.equal(r.status, 'failed');
        assert.equal(r.attempts, 1, 'a refused login is not retried');
        assert.match(r.error ?? '', /refused the login/);
        assert.ok(!(r.error ?? '').includes('wrong-password-456'));
      }
      const list = await api.get(`/alert-rules/channels?tenantId=${team.id}`, owner);
      bodies.push(list.text ?? '');
      const shown = list.body.channels.find((c: { id: string }) => c.id === bad);
      assert.equal(shown.lastDelivery.status, 'failed');
      assert.equal((await api.get('/health')).status, 200);
    });

    test('no response ever carried a password', () => {
      for (const b of bodies) {
        assert.ok(!b.includes(broker.adminPassword));
        assert.ok(!b.includes('wrong-password-456'));
      }
    });
  });
});
