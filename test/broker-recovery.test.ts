/**
 * Issue 21 items 5 and 7 on a real Mosquitto 2 with dynamic security, started by this file.
 *
 * Item 5: ingest resumes after the process holding the broker (dispatcher, or a full hub)
 * restarts and after the broker restarts. Chunks published while the dispatcher is down and right
 * after the broker is back are each stored once and acknowledged once. The hub's ingest session
 * is persistent (client id per hub, clean session off), so the broker queues for it; a broker
 * without persistence forgets the session and the hub re-subscribes before anything else.
 * Waits are on acks, handled messages and log lines; timings are the bench's business
 * (`npm run bench -- recovery`).
 *
 * Item 7: one broker per hub. A second hub's dispatcher refuses to start on a broker the first
 * hub claimed, with a clear log line, and the first keeps serving.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import mqtt from 'mqtt';
import { startHub, type Hub } from './helpers/hub.ts';
import { makeTeam } from './helpers/factories.ts';
import { RawSatellite, audioBody, TIMEOUT } from './helpers/raw-satellite.ts';
import { logText } from './helpers/log-lines.ts';
import { MOSQUITTO, MOSQUITTO_SKIP, startMosquitto, type RunningMosquitto } from './helpers/mosquitto.ts';
import { createServices } from '../src/services.ts';
import type { Config } from '../src/config.ts';
import type { Db } from '../src/infra/db/index.ts';
import type { Infra } from '../src/infra/types.ts';
import { closeInfra, createInfra } from '../src/infra/index.ts';
import { createBroker, hubIdOf, OWNER_TOPIC, type Broker, type BrokerLog } from '../src/infra/broker/index.ts';
import { startRuntime, type Runtime } from '../src/runtime.ts';
import { topicOf } from '../src/protocol/topics.ts';
import { ManualClock } from '../src/core/clock.ts';
import { Satellite } from '../src/satellite/client.ts';
import { Outbox } from '../src/satellite/outbox.ts';
import { syntheticSource } from '../src/satellite/sources.ts';
import { sqlOf } from './helpers/sql.ts';

const root = path.resolve(import.meta.dirname, '..');

/** Log lines as events, so a test waits for "re-subscribed" instead of sleeping. */
class LogTap extends EventEmitter implements BrokerLog {
  readonly lines: Array<{ level: string; msg: string; obj: object }> = [];
  private push(level: string, obj: object, msg: string) {
    this.lines.push({ level, msg, obj });
    this.emit('line', { level, msg, obj });
  }
  info(obj: object, msg: string) {
    this.push('info', obj, msg);
  }
  warn(obj: object, msg: string) {
    this.push('warn', obj, msg);
  }
  error(obj: object, msg: string) {
    this.push('error', obj, msg);
  }
  /** The first line from `since` on whose message matches. */
  next(re: RegExp, since = 0): Promise<{ level: string; msg: string; obj: object }> {
    const seen = this.lines.slice(since).find((l) => re.test(l.msg));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('line', on);
        reject(new Error(`no log line ${re} within ${TIMEOUT} ms; got:\n${this.lines.map((l) => l.msg).join('\n')}`));
      }, TIMEOUT);
      const on = (l: { level: string; msg: string; obj: object }) => {
        if (!re.test(l.msg)) return;
        clearTimeout(timer);
        this.off('line', on);
        resolve(l);
      };
      this.on('line', on);
    });
  }
}

/** The database outlives each instance: the next one opens on it, as a restarted dispatcher does. */
function keepOpen(db: Db): Db {
  return new Proxy(db, {
    get(target, key) {
      if (key === 'close') return async () => {};
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

interface Instance {
  infra: Infra;
  runtime: Runtime;
  broker: Broker;
  close(): Promise<void>;
}

/** The part of a hub that holds the broker (ingest), started on an existing database: a dispatcher. */
async function startInstance(config: Config, db: Db, hub: Hub, log: BrokerLog): Promise<Instance> {
  const base = await createInfra(config, { db: keepOpen(db), clock: hub.clock, broker: false });
  const broker = await createBroker(config, async () => null, { log });
  const infra: Infra = { ...base, broker };
  const services = createServices(infra, { strictAudit: true });
  const runtime = startRuntime(infra, services, { error: () => {} }, { timers: false });
  await runtime.ready;
  return {
    infra,
    runtime,
    broker,
    async close() {
      await runtime();
      await closeInfra(infra);
    },
  };
}

/** Every chunk id's row, once, and its acks as the satellite received them. */
async function stored(db: Db, ids: string[]): Promise<string[]> {
  const rows = await sqlOf(db).query<{ id: string }>('SELECT id FROM chunks WHERE id = ANY($1::uuid[]) ORDER BY id', [ids]);
  return rows.map((r) => r.id);
}

describe('ingest across restarts on Mosquitto (issue 21 item 5)', { skip: MOSQUITTO ? false : MOSQUITTO_SKIP }, () => {
  let mosq: RunningMosquitto;
  let hub: Hub;
  let config: Config;
  let sat: RawSatellite;
  let current: Instance | null = null;
  let satPassword = '';
  const log = new LogTap();

  before(async () => {
    mosq = await startMosquitto({ persistence: true });
    const env = { MQTT_URL: mosq.url, MQTT_ADMIN_USERNAME: mosq.adminUsername, MQTT_ADMIN_PASSWORD: mosq.adminPassword };
    hub = await startHub({ env });
    config = hub.infra.config;
    const team = await makeTeam(hub);
    sat = await RawSatellite.register(hub, team.owner, team);
    satPassword = sat.password;
  });

  after(async () => {
    await sat?.close().catch(() => {});
    await current?.close();
    await hub?.app.close();
    if (hub) await closeInfra(hub.infra);
    if (config) fs.rmSync(config.dataDir, { recursive: true, force: true });
    await mosq?.stop();
  });

  test('chunks published while the dispatcher is down are delivered to the next one: each stored once and acked once', async () => {
    const first = await sat.publishChunk({ seed: 1 });
    assert.equal(first.ack.status, 'stored');
    // The dispatcher stops: ingest first (its session stops taking messages), then the broker connection.
    await hub.runtime();
    await hub.infra.broker.close();
    const since = sat.received.length;
    const down = [audioBody(sat), audioBody(sat), audioBody(sat)];
    for (const body of down) await sat.send('audio', body); // PUBACK from the broker: queued in the hub's session
    assert.deepEqual(
      await stored(
        hub.infra.db,
        down.map((b) => b.chunkId),
      ),
      [],
      'nothing is stored while no dispatcher runs',
    );

    current = await startInstance(config, hub.infra.db, hub, log);
    const acks = await Promise.all(down.map((b) => sat.waitFor('ack', (a) => a.chunkId === b.chunkId, `ack of ${b.chunkId}`, since)));
    assert.deepEqual(
      acks.map((a) => a.status),
      ['stored', 'stored', 'stored'],
    );
    const after = await sat.publishChunk({ seed: 2 });
    assert.equal(after.ack.status, 'stored', 'and new chunks flow');
    const ids = [...down.map((b) => b.chunkId), after.chunkId];
    assert.deepEqual(await stored(hub.infra.db, ids), [...ids].sort(), 'one row each');
    for (const id of ids) assert.equal(sat.acksOf(id).length, 1, `one ack for ${id}`);
    const resumed = await log.next(/ingest session (resumed|started)/);
    assert.equal((resumed.obj as { sessionPresent: boolean }).sessionPresent, true, 'the broker kept the session');
    assert.equal((resumed.obj as { clientId: string }).clientId, `chorus-hub-${hubIdOf(config.secret)}`, 'a stable client id per hub');
  });

  test('chunks published right after a broker restart (persistence on) are stored once and acked once', async () => {
    assert.ok(current, 'a dispatcher runs');
    const since = log.lines.length;
    await sat.close();
    await mosq.restart();
    // The satellite is back before the hub (which retries every second): the broker kept the hub's session.
    const back = await reconnectSatellite(mosq.url, sat, satPassword);
    const bodies = [audioBody(sat), audioBody(sat)];
    for (const b of bodies) await back.publish(b);
    const again = await log.next(/ingest session reconnected/, since);
    assert.equal(
      (again.obj as { sessionPresent: boolean }).sessionPresent,
      true,
      'the broker restored the session from its persistence file',
    );
    await Promise.all(bodies.map((b) => back.ack(b.chunkId)));
    const ids = bodies.map((b) => b.chunkId);
    assert.deepEqual(await stored(hub.infra.db, ids), [...ids].sort());
    for (const id of ids) assert.deepEqual(back.acksOf(id), [{ chunkId: id, status: 'stored' }]);
    await back.close();
  });
});

/** A satellite's fresh connection after the broker restarted (RawSatellite does not reconnect). */
async function reconnectSatellite(url: string, sat: { id: string; tenantId: string }, password: string) {
  const c = await mqtt.connectAsync(url, {
    clientId: `satellite-${sat.id}`,
    username: sat.id,
    password,
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: TIMEOUT,
  });
  const acks: Array<{ chunkId: string; status: string }> = [];
  const ee = new EventEmitter();
  c.on('message', (_t, p) => {
    const a = JSON.parse(p.toString());
    acks.push(a);
    ee.emit('ack', a);
  });
  await c.subscribeAsync(topicOf(sat.tenantId, sat.id, 'ack'), { qos: 1 });
  return {
    publish: (body: object) => c.publishAsync(topicOf(sat.tenantId, sat.id, 'audio'), JSON.stringify(body), { qos: 1 }),
    acksOf: (id: string) => acks.filter((a) => a.chunkId === id),
    ack: (id: string) =>
      new Promise<void>((resolve, reject) => {
        if (acks.some((a) => a.chunkId === id)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no ack for ${id} within ${TIMEOUT} ms`)), TIMEOUT);
        const on = (a: { chunkId: string }) => {
          if (a.chunkId !== id) return;
          clearTimeout(timer);
          ee.off('ack', on);
          resolve();
        };
        ee.on('ack', on);
      }),
    close: () => c.endAsync(true),
  };
}

describe(
  'a broker restarted without persistence, and a second hub on it (issue 21 items 5 and 7)',
  { skip: MOSQUITTO ? false : MOSQUITTO_SKIP },
  () => {
    let mosq: RunningMosquitto;
    let hub: Hub;
    let config: Config;
    let sat: RawSatellite;
    let current: Instance | null = null;
    const log = new LogTap();

    before(async () => {
      mosq = await startMosquitto({ persistence: false });
      const env = { MQTT_URL: mosq.url, MQTT_ADMIN_USERNAME: mosq.adminUsername, MQTT_ADMIN_PASSWORD: mosq.adminPassword };
      hub = await startHub({ env });
      config = hub.infra.config;
      const team = await makeTeam(hub);
      sat = await RawSatellite.register(hub, team.owner, team);
      // The dispatcher under test logs to the tap.
      await hub.runtime();
      await hub.infra.broker.close();
      current = await startInstance(config, hub.infra.db, hub, log);
    });

    after(async () => {
      await sat?.close().catch(() => {});
      await current?.close();
      await hub?.app.close();
      if (hub) await closeInfra(hub.infra);
      if (config) fs.rmSync(config.dataDir, { recursive: true, force: true });
      await mosq?.stop();
    });

    test('the broker forgot the session: the hub re-subscribes first, and chunks sent then are stored once and acked once', async () => {
      const since = log.lines.length;
      await sat.close();
      await mosq.restart();
      const again = await log.next(/ingest session reconnected/, since);
      assert.equal((again.obj as { sessionPresent: boolean }).sessionPresent, false, 'no persistence: no session');
      const resub = await log.next(/ingest session re-subscribed 7 filter/, since);
      assert.deepEqual([...(resub.obj as { filters: string[] }).filters].sort(), [
        'chorus/+/+/audio',
        'chorus/+/+/config-request',
        'chorus/+/+/goodbye',
        'chorus/+/+/heartbeat',
        'chorus/+/+/live-audio',
        'chorus/+/+/log-response',
        'chorus/+/+/telemetry',
      ]);
      await log.next(/hub connection back/, since);
      // Dynamic security lives in its own file: the satellite's login survived the restart.
      const back = await reconnectSatellite(mosq.url, sat, sat.password);
      const bodies = [audioBody(sat), audioBody(sat)];
      for (const b of bodies) await back.publish(b);
      await Promise.all(bodies.map((b) => back.ack(b.chunkId)));
      const ids = bodies.map((b) => b.chunkId);
      assert.deepEqual(await stored(hub.infra.db, ids), [...ids].sort());
      for (const id of ids) assert.deepEqual(back.acksOf(id), [{ chunkId: id, status: 'stored' }]);
      await back.close();
    });

    test('a second hub refuses the broker the first one claimed, with a clear line; the first keeps serving', async () => {
      const other = { ...config, secret: 'another-hub-secret-0123456789abcdef0123456789', publicUrl: 'https://other.example.org' };
      assert.notEqual(hubIdOf(other.secret), hubIdOf(config.secret));
      await assert.rejects(
        createBroker(other, async () => null),
        (err: Error) => {
          assert.match(
            err.message,
            /already serves another Chorus hub \(hub id [0-9a-f]{16} at http:\/\/chorus\.test\); one broker per hub/,
          );
          assert.match(err.message, new RegExp(`mosquitto_pub .* -t ${OWNER_TOPIC} -r -n`));
          return true;
        },
      );
      // `chorus serve` says the same and exits 1 before it migrates anything.
      const dataDir = fs.mkdtempSync(path.join(config.dataDir, 'other-'));
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
        cwd: root,
        env: {
          ...process.env,
          CHORUS_DATA_DIR: dataDir,
          CHORUS_SECRET: other.secret,
          CHORUS_MODE: 'full',
          DATABASE_URL: '',
          REDIS_URL: '',
          PORT: '0',
          MQTT_URL: mosq.url,
          MQTT_ADMIN_USERNAME: mosq.adminUsername,
          MQTT_ADMIN_PASSWORD: mosq.adminPassword,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // The hub logs JSON lines on stdout (src/core/log.ts); the refusal is the fatal line's msg.
      let out = '';
      child.stdout!.on('data', (c) => (out += c));
      child.stderr!.on('data', (c) => (out += c));
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      const stderr = logText(out);
      assert.equal(code, 1, stderr);
      assert.match(stderr, /already serves another Chorus hub \(hub id [0-9a-f]{16} at http:\/\/chorus\.test\); one broker per hub/);

      // The first hub never noticed: its satellites' chunks are stored and acked by it alone.
      const back = await reconnectSatellite(mosq.url, sat, sat.password);
      const body = audioBody(sat);
      await back.publish(body);
      await back.ack(body.chunkId);
      assert.deepEqual(back.acksOf(body.chunkId), [{ chunkId: body.chunkId, status: 'stored' }]);
      assert.deepEqual(await stored(hub.infra.db, [body.chunkId]), [body.chunkId]);
      assert.equal(log.lines.filter((l) => l.level === 'error').length, 0, 'no claim of another hub reached the first');
      await back.close();
    });

    test('a running hub reports another hub claiming its broker', async () => {
      const since = log.lines.length;
      const intruder = await mqtt.connectAsync(mosq.url, {
        username: mosq.adminUsername,
        password: mosq.adminPassword,
        reconnectPeriod: 0,
      });
      await intruder.publishAsync(OWNER_TOPIC, JSON.stringify({ hubId: 'feedfacefeedface', instance: 'x', publicUrl: null }), { qos: 1 });
      const line = await log.next(/another Chorus hub \(hub id feedfacefeedface\) claimed this broker/, since);
      assert.equal(line.level, 'error');
      await intruder.endAsync(true);
    });
    test('the reference satellite sends a chunk a restarted broker dropped again within seconds, not after its ack time-out', async () => {
      // The dispatcher is down when the broker restarts: the broker forgets the hub's session, and a
      // chunk sent before the dispatcher is back reaches no subscriber.
      await current!.close();
      current = null;
      await mosq.restart();
      const clock = new ManualClock();
      const dir = fs.mkdtempSync(path.join(config.dataDir, 'sat-'));
      const satellite = new Satellite({
        credentials: { satelliteId: sat.id, tenantId: sat.tenantId, username: sat.id, password: sat.password, brokerUrl: mosq.url },
        source: syntheticSource({ seed: 3, silenceProbability: 0 }),
        outbox: await Outbox.open(path.join(dir, 'outbox')),
        dataDir: dir,
        clock,
        chunkIntervalMs: 0,
        heartbeatIntervalMs: 600_000,
        telemetryIntervalMs: 600_000,
        ackTimeoutMs: 30_000,
        reconnectAckTimeoutMs: 2000,
      });
      const sent: string[] = [];
      satellite.on('sent', (r: { chunkId: string }) => sent.push(r.chunkId));
      try {
        const connected = once(satellite, 'connected', { signal: AbortSignal.timeout(TIMEOUT) });
        await satellite.start();
        await connected;
        const firstSend = once(satellite, 'sent', { signal: AbortSignal.timeout(TIMEOUT) });
        assert.equal(await satellite.record(), 'recorded');
        const [row] = (await firstSend) as [{ chunkId: string }];
        current = await startInstance(config, hub.infra.db, hub, log);
        assert.equal(satellite.ackedCount, 0, 'the chunk was lost with the broker session');
        const acked = once(satellite, 'acked', { signal: AbortSignal.timeout(TIMEOUT) });
        clock.advance(2000); // well inside the 30 s ack time-out
        await acked;
        assert.deepEqual(sent, [row.chunkId, row.chunkId], 'sent twice');
        assert.deepEqual(await stored(hub.infra.db, [row.chunkId]), [row.chunkId]);
        assert.equal(satellite.ackedCount, 1);
      } finally {
        await satellite.stop();
      }
    });
  },
);
