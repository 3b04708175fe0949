/**
 * What the broker keeps for a client (issue 33 items 5 and 6), against a hub on its embedded
 * broker and a hub on Mosquitto with deploy/mosquitto/mosquitto.conf's caps (skipped only when the
 * mosquitto binary is absent): a packet above the cap closes the connection before it is buffered,
 * a retained publish on a satellite topic is refused, and a flood of bad logins for one client id
 * does not lock out the other satellites behind the same address or proxy. Every wait is on an
 * event (a close, a CONNACK, a handled message), with a timeout as a safety net.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import mqtt from 'mqtt';
import type { IClientOptions, MqttClient } from 'mqtt';
import os from 'node:os';
import { startHub, type Hub } from './helpers/hub.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { createBroker } from '../src/infra/broker/index.ts';
import { makeTeam } from './helpers/factories.ts';
import type { TestTeam, TestUser } from './helpers/factories.ts';
import { RawSatellite, TIMEOUT, waitHandled } from './helpers/raw-satellite.ts';
import { MOSQUITTO, MOSQUITTO_SKIP, startMosquitto, type RunningMosquitto } from './helpers/mosquitto.ts';
import { topicOf } from '../src/protocol/topics.ts';
import { AUDIO_PACKET_MAX_BYTES, MQTT_MAX_PACKET_BYTES } from '../src/protocol/limits.ts';

const MiB = 1024 * 1024;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;
/** Far below the 10 s Aedes gives a client to finish its CONNECT: a close within it is the cap's. */
const PROMPT_MS = 3000;

/** MQTT's variable-length "remaining length". */
function remainingLength(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}

/** Resolves with true once `socket` closes, false if it is still open after `ms`. */
function closesWithin(socket: net.Socket | MqttClient, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Connects expecting a refusal; returns the CONNACK return code. */
async function refusal(url: string, opts: IClientOptions): Promise<number> {
  let c: MqttClient;
  try {
    c = await mqtt.connectAsync(url, { protocolVersion: 4, clean: true, reconnectPeriod: 0, connectTimeout: TIMEOUT, ...opts }, false);
  } catch (err) {
    const code = (err as { code?: number }).code;
    assert.equal(typeof code, 'number', `expected a CONNACK refusal, got: ${(err as Error).message}`);
    return code!;
  }
  await c.endAsync(true);
  assert.fail(`login ${opts.clientId} was accepted`);
}

async function login(url: string, opts: IClientOptions): Promise<MqttClient> {
  return mqtt.connectAsync(url, { protocolVersion: 4, clean: true, reconnectPeriod: 0, connectTimeout: TIMEOUT, ...opts }, false);
}

const satLogin = (sat: RawSatellite, password = sat.password): IClientOptions => ({
  clientId: `satellite-${sat.id}`,
  username: sat.id,
  password,
});

interface Ctx {
  kind: 'embedded' | 'mosquitto';
  hub: Hub;
  team: TestTeam;
  owner: TestUser;
}

/** Items 5: the same promises from either broker. */
function sizeAndRetainContract(getCtx: () => Ctx) {
  test('the largest legal audio chunk fits the default cap, with margin', () => {
    assert.ok(AUDIO_PACKET_MAX_BYTES < MQTT_MAX_PACKET_BYTES, `${AUDIO_PACKET_MAX_BYTES} < ${MQTT_MAX_PACKET_BYTES}`);
    assert.ok(MQTT_MAX_PACKET_BYTES <= AUDIO_PACKET_MAX_BYTES * 1.25, 'the margin stays a margin');
  });

  test('a CONNECT declaring 150 MiB is closed after a few KB, and the hub keeps serving satellites', async () => {
    const { hub, team, owner } = getCtx();
    const url = new URL(hub.infra.broker.brokerUrl);
    const socket = net.connect(Number(url.port), url.hostname);
    socket.on('error', () => {}); // the broker resets it
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const closed = closesWithin(socket, PROMPT_MS);
    // CONNECT, MQTT 3.1.1, a client id; the rest of the declared 150 MiB is 4 KB of filler, then nothing.
    const head = Buffer.from([0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 2, 0, 60, 0, 4, 0x61, 0x62, 0x63, 0x64]);
    socket.write(Buffer.concat([Buffer.from([0x10]), remainingLength(150 * MiB), head, Buffer.alloc(4096, 0x61)]));
    assert.equal(await closed, true, `the broker still held the connection ${PROMPT_MS} ms after a 150 MiB CONNECT header`);
    assert.ok(socket.bytesWritten < 8192, `sent ${socket.bytesWritten} bytes`);

    const sat = await RawSatellite.register(hub, owner, team);
    try {
      const { ack } = await sat.publishChunk({ species: [] });
      assert.equal(ack.status, 'stored');
    } finally {
      await sat.close();
    }
  });

  test('a logged-in satellite publishing above the cap is disconnected and nothing of it is stored', async () => {
    const { hub, team, owner } = getCtx();
    const sat = await RawSatellite.register(hub, owner, team);
    const telemetry = (extra: Record<string, unknown>) =>
      JSON.stringify({ satelliteId: sat.id, tenantId: team.id, uptimeSeconds: 5, timestamp: new Date().toISOString(), ...extra });
    const rows = () => hub.sql.query<{ uptime_seconds: number }>('SELECT uptime_seconds FROM telemetry WHERE satellite_id = $1', [sat.id]);

    const closed = closesWithin(sat.mqtt, TIMEOUT);
    let acked = false;
    // Telemetry with a padding field the ingester ignores: had the broker passed it on, a row would be stored.
    sat.mqtt
      .publishAsync(sat.topic('telemetry'), telemetry({ uptimeSeconds: 1, padding: 'x'.repeat(MQTT_MAX_PACKET_BYTES + 1) }), { qos: 1 })
      .then(
        () => (acked = true),
        () => {},
      );
    assert.equal(await closed, true, 'the oversized publish did not close the connection');
    assert.equal(acked, false, 'the oversized publish was acknowledged');

    // The same satellite again: one telemetry message within the cap is handled, and is the only row.
    const again = await login(hub.infra.broker.brokerUrl, satLogin(sat));
    try {
      const handled = waitHandled(hub, (m) => m.channel === 'telemetry' && m.satelliteId === sat.id);
      await again.publishAsync(sat.topic('telemetry'), telemetry({ uptimeSeconds: 2 }), { qos: 1 });
      await handled;
      assert.deepEqual(
        (await rows()).map((r) => r.uptime_seconds),
        [2],
      );
    } finally {
      await again.endAsync(true);
    }
  });

  test('a retained publish on a satellite topic is refused: the connection closes and no later subscriber gets it', async (t) => {
    const { kind, hub, team, owner } = getCtx();
    if (kind === 'mosquitto') {
      t.skip('Mosquitto 2 turns retain off only broker-wide (retain_available), and the hub claim is retained: see docs/security.md');
      return;
    }
    const sat = await RawSatellite.register(hub, owner, team);
    const closed = closesWithin(sat.mqtt, TIMEOUT);
    const marker = `retained-${crypto.randomUUID()}`;
    sat.mqtt.publishAsync(sat.topic('heartbeat'), marker, { qos: 1, retain: true }).catch(() => {});
    assert.equal(await closed, true, 'the retained publish did not close the connection');

    // A new subscriber on the satellite's prefix: a retained message would come right after the SUBACK,
    // before the config the hub publishes afterwards.
    const c = await login(hub.infra.broker.brokerUrl, satLogin(sat));
    try {
      const seen: Array<{ topic: string; payload: string; retain: boolean }> = [];
      const config = new Promise<void>((resolve) =>
        c.on('message', (topic, payload, packet) => {
          seen.push({ topic, payload: payload.toString(), retain: packet.retain });
          if (topic.endsWith('/config')) resolve();
        }),
      );
      await c.subscribeAsync(topicOf(team.id, sat.id, '#'), { qos: 1 });
      await hub.infra.broker.publish(topicOf(team.id, sat.id, 'config'), '{}', { qos: 1 });
      await config;
      assert.deepEqual(
        seen.filter((m) => m.retain || m.payload === marker),
        [],
      );
    } finally {
      await c.endAsync(true);
    }
  });
}

describe('broker limits on the embedded broker (issue 33 items 5 and 6)', () => {
  let hub: Hub;
  let team: TestTeam & { owner: TestUser };

  before(async () => {
    hub = await startHub();
    team = await makeTeam(hub);
  });
  after(() => hub?.close());

  sizeAndRetainContract(() => ({ kind: 'embedded', hub, team, owner: team.owner }));

  test('a CONNECT declaring a little over the cap before login is closed too (the small pre-login cap)', async () => {
    const url = new URL(hub.infra.broker.brokerUrl);
    const socket = net.connect(Number(url.port), url.hostname);
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const closed = closesWithin(socket, PROMPT_MS);
    socket.write(Buffer.concat([Buffer.from([0x10]), remainingLength(64 * 1024), Buffer.from([0, 4, 0x4d, 0x51, 0x54, 0x54])]));
    assert.equal(await closed, true, 'a 64 KiB CONNECT is no login');
  });

  test('over WebSocket, a CONNECT declaring 150 MiB split into small frames is closed too', async () => {
    const ws = new (await import('ws')).WebSocket(hub.infra.broker.wsUrl!, ['mqtt']);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const closed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), PROMPT_MS);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    ws.send(Buffer.concat([Buffer.from([0x10]), remainingLength(150 * MiB)]));
    ws.send(Buffer.alloc(4096, 0x61));
    assert.equal(await closed, true);
  });

  describe('refused logins (item 6)', () => {
    const XFF = (address: string): IClientOptions => ({ wsOptions: { headers: { 'x-forwarded-for': address } } });

    async function spend(url: string, sat: RawSatellite, extra: IClientOptions = {}) {
      // LIMIT_MQTT_FAILURES' default budget: 20 refused logins per 10 minutes.
      for (let i = 0; i < 20; i++) {
        assert.equal(await refusal(url, { ...satLogin(sat, crypto.randomBytes(32).toString('hex')), ...extra }), BAD_USERNAME_OR_PASSWORD);
      }
      assert.equal(await refusal(url, { ...satLogin(sat, 'wrong'), ...extra }), NOT_AUTHORIZED, 'the 21st is refused unchecked');
    }

    test('20+ bad logins for one client id do not stop another satellite from the same address', async () => {
      const url = hub.infra.broker.brokerUrl;
      const target = await RawSatellite.register(hub, team.owner, team);
      const neighbour = await RawSatellite.register(hub, team.owner, team);
      await target.close();
      await neighbour.close();
      await spend(url, target);
      const c = await login(url, satLogin(neighbour));
      assert.equal(c.connected, true);
      await c.endAsync(true);
      // The flooded pair itself waits out the window, even with the right password (docs/security.md).
      assert.equal(await refusal(url, satLogin(target)), NOT_AUTHORIZED);
      // The mobile client id of that satellite is its own pair.
      const mobile = await login(url, { ...satLogin(target), clientId: `mobile-${target.id}` });
      await mobile.endAsync(true);
    });

    test('over WebSocket from a trusted proxy, the forwarded address is the key', async () => {
      const wsUrl = hub.infra.broker.wsUrl!;
      const sat = await RawSatellite.register(hub, team.owner, team);
      await sat.close();
      await spend(wsUrl, sat, XFF('203.0.113.7'));
      // The same client id from another client behind the proxy, and directly from the proxy's own address.
      const other = await login(wsUrl, { ...satLogin(sat), ...XFF('203.0.113.8') });
      await other.endAsync(true);
      const direct = await login(hub.infra.broker.brokerUrl, satLogin(sat));
      await direct.endAsync(true);
      assert.equal(await refusal(wsUrl, { ...satLogin(sat), ...XFF('203.0.113.7') }), NOT_AUTHORIZED);
      // A multi-hop header: the proxy (loopback, trusted) appended the client; what the client wrote is ignored.
      assert.equal(await refusal(wsUrl, { ...satLogin(sat), ...XFF('198.51.100.1, 203.0.113.7') }), NOT_AUTHORIZED);
    });
  });
});

describe('refused logins with TRUST_PROXY=false: X-Forwarded-For is not believed (item 6)', () => {
  let hub: Hub;
  before(async () => {
    hub = await startHub({ env: { TRUST_PROXY: 'false' } });
  });
  after(() => hub?.close());

  test('the socket peer is the key whatever the header says', async () => {
    const team = await makeTeam(hub);
    const sat = await RawSatellite.register(hub, team.owner, team);
    await sat.close();
    const wsUrl = hub.infra.broker.wsUrl!;
    for (let i = 0; i < 20; i++) {
      const forged = { wsOptions: { headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } } };
      assert.equal(await refusal(wsUrl, { ...satLogin(sat, 'wrong'), ...forged }), BAD_USERNAME_OR_PASSWORD);
    }
    assert.equal(await refusal(wsUrl, { ...satLogin(sat), wsOptions: { headers: { 'x-forwarded-for': '203.0.113.99' } } }), NOT_AUTHORIZED);
  });
});

describe('MQTT_MAX_PACKET_BYTES', () => {
  const base = { CHORUS_SECRET: 'x'.repeat(40), CHORUS_DATA_DIR: os.tmpdir(), MQTT_PORT: '0', MQTT_WS_PORT: '0', MQTT_HOST: '127.0.0.1' };

  test('defaults to the protocol cap; below the largest legal audio chunk it stops the hub naming the variable', () => {
    assert.equal(loadConfig(base).mqttMaxPacketBytes, MQTT_MAX_PACKET_BYTES);
    assert.equal(loadConfig({ ...base, MQTT_MAX_PACKET_BYTES: '1048576' }).mqttMaxPacketBytes, 1048576);
    for (const bad of [String(AUDIO_PACKET_MAX_BYTES - 1), '1k', '-1'])
      assert.throws(
        () => loadConfig({ ...base, MQTT_MAX_PACKET_BYTES: bad }),
        (e: Error) => e instanceof ConfigError && /MQTT_MAX_PACKET_BYTES/.test(e.message),
      );
  });

  test('sets the embedded cap: a publish above the default passes under a larger one, and one above it closes', async () => {
    const tenantId = crypto.randomUUID();
    const sat = { id: crypto.randomUUID(), password: crypto.randomBytes(32).toString('hex') };
    const broker = await createBroker(loadConfig({ ...base, MQTT_MAX_PACKET_BYTES: String(MQTT_MAX_PACKET_BYTES * 2) }), async (id, pw) =>
      id === sat.id && pw === sat.password ? { tenantId } : null,
    );
    const got: number[] = [];
    await broker.subscribe('chorus/+/+/+', (_t, payload) => void got.push(payload.length), { qos: 1 });
    const c = await login(broker.brokerUrl, { clientId: `satellite-${sat.id}`, username: sat.id, password: sat.password });
    try {
      await c.publishAsync(topicOf(tenantId, sat.id, 'log-response'), Buffer.alloc(MQTT_MAX_PACKET_BYTES + 1000, 0x61), { qos: 1 });
      assert.deepEqual(got, [MQTT_MAX_PACKET_BYTES + 1000]);
      const closed = closesWithin(c, TIMEOUT);
      c.publishAsync(topicOf(tenantId, sat.id, 'log-response'), Buffer.alloc(MQTT_MAX_PACKET_BYTES * 2, 0x61), { qos: 1 }).catch(() => {});
      assert.equal(await closed, true);
      assert.equal(got.length, 1);
    } finally {
      await c.endAsync(true);
      await broker.close();
    }
  });
});

describe('broker limits on Mosquitto (issue 33 item 5)', { skip: MOSQUITTO ? false : MOSQUITTO_SKIP }, () => {
  let mosq: RunningMosquitto;
  let hub: Hub;
  let team: TestTeam & { owner: TestUser };

  before(async () => {
    mosq = await startMosquitto();
    hub = await startHub({ env: { MQTT_URL: mosq.url, MQTT_ADMIN_USERNAME: mosq.adminUsername, MQTT_ADMIN_PASSWORD: mosq.adminPassword } });
    team = await makeTeam(hub);
  });
  after(async () => {
    await hub?.close();
    await mosq?.stop();
  });

  sizeAndRetainContract(() => ({ kind: 'mosquitto', hub, team, owner: team.owner }));
});
