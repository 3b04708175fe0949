/**
 * The broker port (DESIGN.md §2, issue 4 "Broker"): the same contract against the embedded Aedes
 * (TCP and WebSocket) and against a Mosquitto 2 with the dynamic-security plugin that this file
 * starts on a free port (skipped only when the mosquitto binary is absent). Satellites are real
 * mqtt.js clients speaking MQTT 3.1.1; nothing sleeps: every wait is on an event, with a timeout
 * as a safety net.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import mqtt from 'mqtt';
import type { MqttClient, IClientOptions } from 'mqtt';
import { ConfigError, loadConfig } from '../src/config.ts';
import { CHANNEL_QOS, isUnderPrefix, parseTopic, topicMatches, topicOf } from '../src/protocol/topics.ts';
import { createBroker, createMosquittoBroker, type Broker, type SatelliteCredentialCheck } from '../src/infra/broker/index.ts';
import { DYNSEC_ONLY, MOSQUITTO, startMosquitto, type RunningMosquitto } from './helpers/mosquitto.ts';

const TIMEOUT = 5000;

// ---------------------------------------------------------------------------------------------
// helpers

interface Sat {
  id: string;
  tenantId: string;
  password: string;
}

interface Received {
  topic: string;
  payload: string;
  qos: number;
}

/** Everything the hub client receives on `#`, with event-driven waits. */
class Inbox {
  readonly messages: Received[] = [];
  private readonly ee = new EventEmitter();
  push(m: Received) {
    this.messages.push(m);
    this.ee.emit('message', m);
  }
  waitFor(pred: (m: Received) => boolean, what: string, timeoutMs = TIMEOUT): Promise<Received> {
    const found = this.messages.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ee.off('message', on);
        reject(new Error(`hub did not receive ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const on = (m: Received) => {
        if (!pred(m)) return;
        clearTimeout(timer);
        this.ee.off('message', on);
        resolve(m);
      };
      this.ee.on('message', on);
    });
  }
  has(payload: string) {
    return this.messages.some((m) => m.payload === payload);
  }
}

function waitEvent<T = unknown>(
  emitter: { once(e: string, l: (...a: any[]) => void): unknown; off(e: string, l: (...a: any[]) => void): unknown },
  event: string,
  what: string,
  timeoutMs = TIMEOUT,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new Error(`${what}: no "${event}" within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (arg: T) => {
      clearTimeout(timer);
      resolve(arg);
    };
    emitter.once(event, on);
  });
}

/** Resolves with the next message a satellite client receives on `topic`. */
function nextMessage(c: MqttClient, topic: string, timeoutMs = TIMEOUT): Promise<{ payload: string; qos: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      c.off('message', on);
      reject(new Error(`satellite did not receive ${topic} within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (t: string, payload: Buffer, packet: { qos: number }) => {
      if (t !== topic) return;
      clearTimeout(timer);
      c.off('message', on);
      resolve({ payload: payload.toString(), qos: packet.qos });
    };
    c.on('message', on);
  });
}

const opened: MqttClient[] = [];

function satOptions(sat: Sat, o: { clientId?: string; password?: string; username?: string } = {}): IClientOptions {
  return {
    clientId: o.clientId ?? `satellite-${sat.id}`,
    username: o.username ?? sat.id,
    password: o.password ?? sat.password,
    protocolVersion: 4,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: TIMEOUT,
  };
}

async function connectSat(url: string, sat: Sat, o: { clientId?: string; password?: string; username?: string } = {}): Promise<MqttClient> {
  const c = await mqtt.connectAsync(url, satOptions(sat, o), false);
  opened.push(c);
  return c;
}

/** Connects expecting a refusal; returns the CONNACK return code. */
async function refusal(url: string, sat: Sat, o: { clientId?: string; password?: string; username?: string } = {}): Promise<number> {
  let c: MqttClient;
  try {
    c = await mqtt.connectAsync(url, satOptions(sat, o), false);
  } catch (err) {
    const code = (err as { code?: number }).code;
    assert.equal(typeof code, 'number', `expected a CONNACK refusal, got: ${(err as Error).message}`);
    return code!;
  }
  c.end(true);
  assert.fail(`login ${o.username ?? sat.id} / ${o.clientId ?? `satellite-${sat.id}`} was accepted`);
}

/** Subscribing must be refused with granted 128 (mqtt.js rejects and carries the SUBACK). */
async function assertSubscribeRefused(c: MqttClient, filter: string) {
  await assert.rejects(c.subscribeAsync(filter, { qos: 1 }), (err: { packet?: { granted?: number[] } }) => {
    assert.deepEqual(err.packet?.granted, [128], `granted for ${filter}`);
    return true;
  });
}

const uuid = () => crypto.randomUUID();

// ---------------------------------------------------------------------------------------------
// the contract both adapters keep

interface Ctx {
  kind: 'embedded' | 'mosquitto';
  broker: Broker;
  inbox: Inbox;
  /** The TCP address satellites dial in the test. */
  url: string;
  /** Registers a satellite (credentials + provisionSatellite). */
  newSatellite(tenantId?: string): Promise<Sat>;
  /** Re-registers it: a new password, provisionSatellite again. */
  rotate(sat: Sat): Promise<Sat>;
}

function brokerContract(getCtx: () => Ctx) {
  test('a satellite publishes under its prefix; the hub receives each message with the QoS it was sent at', async () => {
    const { url, inbox, newSatellite } = getCtx();
    const sat = await newSatellite();
    const c = await connectSat(url, sat);
    const hb = `hb-${uuid()}`;
    const live = `live-${uuid()}`;
    await c.publishAsync(topicOf(sat.tenantId, sat.id, 'heartbeat'), hb, { qos: CHANNEL_QOS.heartbeat });
    await c.publishAsync(topicOf(sat.tenantId, sat.id, 'live-audio'), live, { qos: CHANNEL_QOS['live-audio'] });
    const got1 = await inbox.waitFor((m) => m.payload === hb, 'the heartbeat');
    assert.equal(got1.topic, `chorus/${sat.tenantId}/${sat.id}/heartbeat`);
    assert.equal(got1.qos, 1);
    const got0 = await inbox.waitFor((m) => m.payload === live, 'the live-audio chunk');
    assert.equal(got0.qos, 0);
  });

  test('the hub reaches a satellite on its own topics with the channel QoS (config 2, ack 1); the satellite subscribes with wildcards inside its prefix', async () => {
    const { url, broker, newSatellite } = getCtx();
    const sat = await newSatellite();
    const c = await connectSat(url, sat);
    const granted = await c.subscribeAsync(`chorus/${sat.tenantId}/${sat.id}/#`, { qos: 2 });
    assert.deepEqual(
      granted.map((g) => g.qos),
      [2],
    );
    await c.subscribeAsync(`chorus/${sat.tenantId}/${sat.id}/+`, { qos: 1 }).then((g) =>
      assert.deepEqual(
        g.map((x) => x.qos),
        [1],
      ),
    );
    await c.unsubscribeAsync(`chorus/${sat.tenantId}/${sat.id}/+`);

    const configTopic = topicOf(sat.tenantId, sat.id, 'config');
    const config = nextMessage(c, configTopic);
    await broker.publish(configTopic, JSON.stringify({ heartbeatIntervalSec: 30 }), { qos: CHANNEL_QOS.config });
    assert.deepEqual(await config, { payload: '{"heartbeatIntervalSec":30}', qos: 2 });

    const ackTopic = topicOf(sat.tenantId, sat.id, 'ack');
    const ack = nextMessage(c, ackTopic);
    await broker.publish(ackTopic, Buffer.from('{"status":"stored"}'), { qos: 1 });
    assert.deepEqual(await ack, { payload: '{"status":"stored"}', qos: 1 });
  });

  test('subscriptions outside its prefix are refused (granted 128) and the satellite stays connected', async () => {
    const { url, inbox, newSatellite } = getCtx();
    const sat = await newSatellite();
    const other = await newSatellite(sat.tenantId);
    const c = await connectSat(url, sat);
    for (const filter of [
      `chorus/${sat.tenantId}/${other.id}/#`, // another satellite of the same team
      `chorus/${uuid()}/${sat.id}/#`, // another tenant
      '#',
      'chorus/#',
      `chorus/${sat.tenantId}/+/config`, // a wildcard on the satellite level
      'chorus/+/+/audio',
    ]) {
      await assertSubscribeRefused(c, filter);
    }
    assert.equal(c.connected, true);
    const still = `still-${uuid()}`;
    await c.publishAsync(topicOf(sat.tenantId, sat.id, 'telemetry'), still, { qos: 1 });
    await inbox.waitFor((m) => m.payload === still, 'a publish after the refusals');
  });

  test('publishes outside its prefix never reach anyone (Aedes closes the client; Mosquitto drops them silently)', async () => {
    const { kind, url, broker, inbox, newSatellite } = getCtx();
    const sat = await newSatellite();
    const other = await newSatellite(sat.tenantId);
    const spy = await connectSat(url, other);
    await spy.subscribeAsync(`chorus/${sat.tenantId}/${other.id}/#`, { qos: 1 });
    const spied: string[] = [];
    spy.on('message', (_t, p) => spied.push(p.toString()));

    const targets = [
      topicOf(sat.tenantId, other.id, 'config'), // another satellite's prefix
      topicOf(uuid(), sat.id, 'audio'), // another tenant
      'elsewhere/topic',
      '$SYS/broker/clients',
    ];
    for (const topic of targets) {
      const marker = `forbidden-${uuid()}`;
      const c = await connectSat(url, sat);
      if (kind === 'embedded') {
        const closed = waitEvent(c, 'close', `closing after a publish to ${topic}`);
        c.publishAsync(topic, marker, { qos: 1 }).catch(() => {});
        await closed;
        assert.equal(c.connected, false);
        // Round trip through the hub's own connection: had Aedes forwarded the marker, it came first.
        const sentinel = `sentinel-${uuid()}`;
        await broker.publish(topic.startsWith('$') ? 'elsewhere/sentinel' : topic, sentinel, { qos: 1 });
        await inbox.waitFor((m) => m.payload === sentinel, 'the sentinel');
      } else {
        await c.publishAsync(topic, marker, { qos: 1 }); // MQTT 3.1.1: acknowledged, then dropped
        // Mosquitto keeps one client's messages in order: once this arrives, the marker would have.
        const sentinel = `sentinel-${uuid()}`;
        await c.publishAsync(topicOf(sat.tenantId, sat.id, 'heartbeat'), sentinel, { qos: 1 });
        await inbox.waitFor((m) => m.payload === sentinel, 'the sentinel');
        assert.equal(c.connected, true);
        c.end(true);
      }
      assert.equal(inbox.has(marker), false, `the hub received a publish to ${topic}`);
      assert.equal(spied.includes(marker), false, `satellite ${other.id} received a publish to ${topic}`);
    }
  });

  test('a wrong password and an unknown satellite are refused', async () => {
    const { url, newSatellite } = getCtx();
    const sat = await newSatellite();
    assert.ok([4, 5].includes(await refusal(url, sat, { password: crypto.randomBytes(32).toString('hex') })));
    assert.ok([4, 5].includes(await refusal(url, sat, { password: '' })));
    const stranger = { id: uuid(), tenantId: sat.tenantId, password: sat.password };
    assert.ok([4, 5].includes(await refusal(url, stranger)));
    const c = await connectSat(url, sat); // the right credentials still work
    c.end(true);
  });

  test('after revokeSatellite the live connection is dropped and the satellite cannot connect again; provisioning restores access', async () => {
    const { url, broker, newSatellite, inbox } = getCtx();
    const sat = await newSatellite();
    const c = await connectSat(url, sat);
    const closed = waitEvent(c, 'close', 'the revoked satellite');
    await broker.revokeSatellite(sat.id);
    await closed;
    assert.ok([4, 5].includes(await refusal(url, sat)));
    await broker.revokeSatellite(sat.id); // idempotent

    await broker.provisionSatellite({ satelliteId: sat.id, tenantId: sat.tenantId, password: sat.password });
    const again = await connectSat(url, sat);
    const back = `back-${uuid()}`;
    await again.publishAsync(topicOf(sat.tenantId, sat.id, 'heartbeat'), back, { qos: 1 });
    await inbox.waitFor((m) => m.payload === back, 'a heartbeat after re-provisioning');
  });

  test('re-provisioning with a new password drops the session on the old one; the old password fails, the new one works', async () => {
    const { url, rotate, newSatellite, inbox } = getCtx();
    const sat = await newSatellite();
    const c = await connectSat(url, sat);
    const closed = waitEvent(c, 'close', 'the session on the old password');
    const rotated = await rotate(sat);
    await closed;
    assert.ok([4, 5].includes(await refusal(url, sat)), 'old password');
    const c2 = await connectSat(url, rotated);
    const fresh = `fresh-${uuid()}`;
    await c2.publishAsync(topicOf(sat.tenantId, sat.id, 'heartbeat'), fresh, { qos: 1 });
    await inbox.waitFor((m) => m.payload === fresh, 'a heartbeat on the new password');
  });

  test('the hub subscribes with wildcards on tenant and satellite; a refused hub subscription rejects', async () => {
    const { url, broker, newSatellite } = getCtx();
    const a = await newSatellite();
    const b = await newSatellite();
    const seen: Array<{ topic: string; qos: number }> = [];
    const ee = new EventEmitter();
    await broker.subscribe(
      'chorus/+/+/log-response',
      (topic, _payload, meta) => {
        seen.push({ topic, qos: meta.qos });
        ee.emit('m');
      },
      { qos: 1 },
    );
    for (const sat of [a, b]) {
      const c = await connectSat(url, sat);
      await c.publishAsync(topicOf(sat.tenantId, sat.id, 'log-response'), 'journal', { qos: 1 });
    }
    while (seen.length < 2) await waitEvent(ee, 'm', 'log responses');
    assert.deepEqual(
      seen.map((s) => s.topic).sort(),
      [topicOf(a.tenantId, a.id, 'log-response'), topicOf(b.tenantId, b.id, 'log-response')].sort(),
    );
    assert.deepEqual(
      seen.map((s) => s.qos),
      [1, 1],
    );
    await assert.rejects(
      broker.subscribe('chorus/#/bad', () => {}),
      /invalid topic filter/,
    );
  });

  test('provisioning refuses ids that are not single topic levels', async () => {
    const { broker } = getCtx();
    for (const bad of ['a/b', '+', '#', '', '$x']) {
      await assert.rejects(
        broker.provisionSatellite({ satelliteId: bad, tenantId: uuid(), password: 'x'.repeat(64) }),
        /single topic levels/,
      );
      await assert.rejects(
        broker.provisionSatellite({ satelliteId: uuid(), tenantId: bad, password: 'x'.repeat(64) }),
        /single topic levels/,
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------

describe('topics', () => {
  test('topicOf, parseTopic, filters and prefixes', () => {
    assert.equal(topicOf('t1', 's1', 'audio'), 'chorus/t1/s1/audio');
    assert.deepEqual(parseTopic('chorus/t1/s1/audio'), { tenantId: 't1', satelliteId: 's1', channel: 'audio' });
    assert.equal(parseTopic('chorus/t1/s1'), null);
    assert.equal(parseTopic('other/t1/s1/audio'), null);
    assert.equal(topicMatches('chorus/+/+/audio', 'chorus/t/s/audio'), true);
    assert.equal(topicMatches('chorus/+/+/audio', 'chorus/t/s/heartbeat'), false);
    assert.equal(topicMatches('chorus/#', 'chorus/t/s/audio'), true);
    assert.equal(topicMatches('#', '$SYS/x'), false);
    assert.equal(topicMatches('$CONTROL/dynamic-security/v1/response', '$CONTROL/dynamic-security/v1/response'), true);
    assert.equal(isUnderPrefix('chorus/t/s/', 'chorus/t/s/#'), true);
    assert.equal(isUnderPrefix('chorus/t/s/', 'chorus/t/s/'), false);
    assert.equal(isUnderPrefix('chorus/t/s/', 'chorus/t/s2/x'), false);
    assert.equal(CHANNEL_QOS.config, 2);
    assert.equal(CHANNEL_QOS['live-audio'], 0);
    assert.equal(CHANNEL_QOS.audio, 1);
  });
});

describe('broker configuration', () => {
  const base = { CHORUS_SECRET: 'x'.repeat(40), CHORUS_DATA_DIR: os.tmpdir() };
  test('defaults: embedded on 1884 and 8084 on all interfaces', () => {
    const c = loadConfig(base);
    assert.deepEqual(
      [c.mqttPort, c.mqttWsPort, c.mqttHost, c.mqttUrl, c.mqttAdminUsername, c.mqttAdminPassword],
      [1884, 8084, '0.0.0.0', null, null, null],
    );
  });
  test('MQTT_URL with its admin login', () => {
    const c = loadConfig({ ...base, MQTT_URL: 'mqtt://127.0.0.1:18830', MQTT_ADMIN_USERNAME: 'admin', MQTT_ADMIN_PASSWORD: 'pw' });
    assert.equal(c.mqttUrl, 'mqtt://127.0.0.1:18830');
    assert.equal(c.mqttAdminUsername, 'admin');
  });
  test('bad values stop the hub naming the variable', () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ MQTT_PORT: 'x' }, /MQTT_PORT/],
      [{ MQTT_PORT: '70000' }, /MQTT_PORT/],
      [{ MQTT_WS_PORT: '-1' }, /MQTT_WS_PORT/],
      [{ MQTT_PORT: '1999', MQTT_WS_PORT: '1999' }, /MQTT_PORT and MQTT_WS_PORT/],
      [{ MQTT_HOST: 'a b' }, /MQTT_HOST/],
      [{ MQTT_URL: 'http://broker' }, /MQTT_URL/],
      [{ MQTT_URL: 'not a url' }, /MQTT_URL/],
      [{ MQTT_URL: 'mqtt://broker:1883' }, /MQTT_ADMIN_USERNAME/],
      [{ MQTT_URL: 'mqtt://broker:1883', MQTT_ADMIN_USERNAME: 'admin' }, /MQTT_ADMIN_PASSWORD/],
    ];
    for (const [env, re] of bad)
      assert.throws(
        () => loadConfig({ ...base, ...env }),
        (e: Error) => e instanceof ConfigError && re.test(e.message),
      );
  });
});

describe('embedded broker (Aedes)', () => {
  const creds = new Map<string, { tenantId: string; password: string }>();
  const check: SatelliteCredentialCheck = async (id, password) => {
    const c = creds.get(id);
    return c && c.password === password ? { tenantId: c.tenantId } : null;
  };
  let broker: Broker;
  let url: string;
  let wsUrl: string;
  const inbox = new Inbox();

  before(async () => {
    const config = loadConfig({
      CHORUS_SECRET: 'x'.repeat(40),
      CHORUS_DATA_DIR: os.tmpdir(),
      MQTT_PORT: '0',
      MQTT_WS_PORT: '0',
      MQTT_HOST: '127.0.0.1',
    });
    broker = await createBroker(config, check);
    url = broker.brokerUrl;
    wsUrl = broker.wsUrl!;
    await broker.subscribe('#', (topic, payload, meta) => inbox.push({ topic, payload: payload.toString(), qos: meta.qos }), { qos: 1 });
  });
  after(async () => {
    for (const c of opened) c.end(true);
    await broker?.close();
  });

  const provision = async (sat: Sat) => {
    creds.set(sat.id, { tenantId: sat.tenantId, password: sat.password });
    await broker.provisionSatellite({ satelliteId: sat.id, tenantId: sat.tenantId, password: sat.password });
    return sat;
  };

  brokerContract(() => ({
    kind: 'embedded',
    broker,
    inbox,
    url,
    newSatellite: (tenantId = uuid()) => provision({ id: uuid(), tenantId, password: crypto.randomBytes(32).toString('hex') }),
    rotate: (sat) => provision({ ...sat, password: crypto.randomBytes(32).toString('hex') }),
  }));

  test('kind and the addresses satellites dial reflect the bound listeners', () => {
    assert.equal(broker.kind, 'embedded');
    assert.match(url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
    assert.match(wsUrl, /^ws:\/\/127\.0\.0\.1:\d+\/mqtt$/);
  });

  test('client ids: satellite-{id} and mobile-{id} of the username only', async () => {
    const sat = await provision({ id: uuid(), tenantId: uuid(), password: crypto.randomBytes(32).toString('hex') });
    const other = await provision({ id: uuid(), tenantId: sat.tenantId, password: crypto.randomBytes(32).toString('hex') });
    assert.equal(await refusal(url, sat, { clientId: `satellite-${other.id}` }), 2);
    assert.equal(await refusal(url, sat, { clientId: 'rogue' }), 2);
    assert.equal(await refusal(url, sat, { clientId: `satellite-${sat.id}-2` }), 2);
    const mobile = await connectSat(url, sat, { clientId: `mobile-${sat.id}` });
    const m = `mobile-${uuid()}`;
    await mobile.publishAsync(topicOf(sat.tenantId, sat.id, 'heartbeat'), m, { qos: 1 });
    await inbox.waitFor((x) => x.payload === m, 'the mobile heartbeat');
  });

  test("nobody else can log in as the hub's own client", async () => {
    const sat: Sat = { id: uuid(), tenantId: uuid(), password: 'x' };
    assert.ok(
      [4, 5].includes(
        await refusal(url, sat, { username: '$chorus-hub', clientId: 'chorus-hub-0000', password: crypto.randomBytes(32).toString('hex') }),
      ),
    );
  });

  test('WebSocket at /mqtt: same logins and the same prefix rule', async () => {
    const sat = await provision({ id: uuid(), tenantId: uuid(), password: crypto.randomBytes(32).toString('hex') });
    const c = await connectSat(wsUrl, sat);
    const hb = `ws-${uuid()}`;
    await c.publishAsync(topicOf(sat.tenantId, sat.id, 'heartbeat'), hb, { qos: 1 });
    assert.equal((await inbox.waitFor((m) => m.payload === hb, 'a heartbeat over WebSocket')).qos, 1);

    const config = nextMessage(c, topicOf(sat.tenantId, sat.id, 'config'));
    await c.subscribeAsync(`chorus/${sat.tenantId}/${sat.id}/#`, { qos: 2 });
    await assertSubscribeRefused(c, '#');
    await broker.publish(topicOf(sat.tenantId, sat.id, 'config'), '{}', { qos: 2 });
    assert.equal((await config).qos, 2);

    assert.ok([4, 5].includes(await refusal(wsUrl, sat, { password: 'wrong' })));

    const closed = waitEvent(c, 'close', 'the WebSocket client after a forbidden publish');
    const marker = `ws-forbidden-${uuid()}`;
    c.publishAsync(topicOf(uuid(), sat.id, 'audio'), marker, { qos: 1 }).catch(() => {});
    await closed;
    const sentinel = `ws-sentinel-${uuid()}`;
    await broker.publish('elsewhere/ws', sentinel, { qos: 1 });
    await inbox.waitFor((m) => m.payload === sentinel, 'the sentinel');
    assert.equal(inbox.has(marker), false);

    const wrongPath = wsUrl.replace(/\/mqtt$/, '/other');
    await assert.rejects(mqtt.connectAsync(wrongPath, satOptions(sat), false));
  });

  test('a failing credential check refuses the login (server unavailable) without crashing', async () => {
    const throwing = await createBroker(
      loadConfig({
        CHORUS_SECRET: 'x'.repeat(40),
        CHORUS_DATA_DIR: os.tmpdir(),
        MQTT_PORT: '0',
        MQTT_WS_PORT: '0',
        MQTT_HOST: '127.0.0.1',
      }),
      async () => {
        throw new Error('database down');
      },
    );
    try {
      const sat: Sat = { id: uuid(), tenantId: uuid(), password: 'p' };
      assert.equal(await refusal(throwing.brokerUrl, sat), 3);
    } finally {
      await throwing.close();
    }
  });

  test('a port in use fails with the variable named', async () => {
    const port = Number(new URL(url).port);
    await assert.rejects(
      createBroker(
        loadConfig({
          CHORUS_SECRET: 'x'.repeat(40),
          CHORUS_DATA_DIR: os.tmpdir(),
          MQTT_PORT: String(port),
          MQTT_WS_PORT: '0',
          MQTT_HOST: '127.0.0.1',
        }),
        check,
      ),
      /MQTT_PORT/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Mosquitto 2 with the dynamic-security plugin, started here on a free port.

describe(
  'Mosquitto 2 with dynamic security',
  { skip: MOSQUITTO ? false : 'the mosquitto binary is not installed (apt-get install -y mosquitto mosquitto-clients)' },
  () => {
    let mosq: RunningMosquitto;
    let broker: Broker;
    const inbox = new Inbox();

    before(async () => {
      mosq = await startMosquitto();
    });
    after(async () => {
      for (const c of opened) c.end(true);
      await broker?.close();
      await mosq?.stop();
    });

    test('start-up refuses a wrong admin password, and an admin that may not publish under chorus/', async () => {
      await assert.rejects(
        createMosquittoBroker({ url: mosq.url, adminUsername: mosq.adminUsername, adminPassword: 'wrong', hubId: 'test-hub' }),
        /Mosquitto at mqtt:\/\/127\.0\.0\.1:\d+ \(as admin\).*Not authorized/,
      );
      // What `mosquitto_ctrl dynsec init` gives an admin (dynsec rights only): the hub notices at start.
      await assert.rejects(
        createMosquittoBroker({
          url: mosq.url,
          adminUsername: DYNSEC_ONLY,
          adminPassword: mosq.adminPassword,
          commandTimeoutMs: 1000,
          hubId: 'test-hub',
        }),
        /cannot publish under chorus\/.*addRoleACL admin publishClientSend/,
      );
      const config = loadConfig({
        CHORUS_SECRET: 'x'.repeat(40),
        CHORUS_DATA_DIR: os.tmpdir(),
        MQTT_URL: mosq.url,
        MQTT_ADMIN_USERNAME: mosq.adminUsername,
        MQTT_ADMIN_PASSWORD: mosq.adminPassword,
      });
      broker = await createBroker(config, async () => {
        throw new Error('Mosquitto checks logins itself');
      });
      assert.equal(broker.kind, 'mosquitto');
      assert.equal(broker.brokerUrl, mosq.url);
      assert.equal(broker.wsUrl, null);
      await broker.subscribe('#', (topic, payload, meta) => inbox.push({ topic, payload: payload.toString(), qos: meta.qos }), { qos: 1 });
    });

    const provision = async (sat: Sat) => {
      await broker.provisionSatellite({ satelliteId: sat.id, tenantId: sat.tenantId, password: sat.password });
      return sat;
    };

    brokerContract(() => {
      assert.ok(broker, 'the broker started');
      return {
        kind: 'mosquitto',
        broker,
        inbox,
        url: mosq.url,
        newSatellite: (tenantId = uuid()) => provision({ id: uuid(), tenantId, password: crypto.randomBytes(32).toString('hex') }),
        rotate: (sat) => provision({ ...sat, password: crypto.randomBytes(32).toString('hex') }),
      };
    });

    test('each satellite holds its own role naming exactly its prefix; revoking removes client and role', async () => {
      const sat = await provision({ id: uuid(), tenantId: uuid(), password: crypto.randomBytes(32).toString('hex') });
      const out = await mosq.ctrl('dynsec', 'getRole', `sat-${sat.id}`);
      for (const type of ['publishClientSend', 'subscribePattern', 'publishClientReceive']) {
        assert.match(out, new RegExp(`${type}\\s*:?\\s*allow\\s*:?\\s*chorus/${sat.tenantId}/${sat.id}/#`), out);
      }
      assert.match(await mosq.ctrl('dynsec', 'getClient', sat.id), new RegExp(`sat-${sat.id}`));
      await broker.revokeSatellite(sat.id);
      assert.match(await mosq.ctrl('dynsec', 'getClient', sat.id), /Client not found/);
      assert.doesNotMatch(await mosq.ctrl('dynsec', 'listRoles'), new RegExp(`sat-${sat.id}`));
    });
  },
);
