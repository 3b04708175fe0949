/**
 * Hub modes (DESIGN.md §3, satellite protocol §4): `dispatcher` holds the broker, `api` serves
 * HTTP and the WebSocket and sends its broker commands over the event bus. Two real processes
 * (`node --import tsx src/main.ts serve`) share a fresh PostgreSQL schema and one Redis; a
 * satellite registered through the api's HTTP connects to the dispatcher's embedded broker and
 * receives what the api asks for. Needs DATABASE_URL and REDIS_URL (CI sets both); without them
 * the two-process suite is skipped. The configuration refusal and the bus adapter run always.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import mqtt, { type MqttClient } from 'mqtt';
import WebSocket from 'ws';
import http_ from 'node:http';
import { makeWav } from '../src/protocol/wav.ts';
import { logLines, logText } from './helpers/log-lines.ts';
import { waitFor } from './helpers/wait.ts';
import { verifySignature } from '../src/modules/alerts/delivery/signature.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { renderChunk, SPECIES } from '../src/satellite/soundscape.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { createMemoryBus } from '../src/infra/bus/index.ts';
import { createMemoryKv } from '../src/infra/kv/index.ts';
import { systemClock } from '../src/core/clock.ts';
import type { Broker } from '../src/infra/broker/index.ts';
import {
  BrokerUnavailableError,
  advertisedBrokerUrls,
  createBusBroker,
  startBrokerCommandExecutor,
} from '../src/infra/broker/bus-broker.ts';

const root = path.resolve(import.meta.dirname, '..');
const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const WAIT_MS = 10_000;

describe('split mode configuration', () => {
  const base = { CHORUS_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-split-cfg-')), CHORUS_SECRET: 's'.repeat(32) };
  after(() => fs.rmSync(base.CHORUS_DATA_DIR, { recursive: true, force: true }));

  test('api and dispatcher refuse to start without REDIS_URL and DATABASE_URL', () => {
    for (const mode of ['api', 'dispatcher']) {
      assert.throws(
        () => loadConfig({ ...base, CHORUS_MODE: mode }),
        (e: unknown) =>
          e instanceof ConfigError &&
          new RegExp(`^CHORUS_MODE=${mode} is split mode and needs REDIS_URL and DATABASE_URL`).test((e as Error).message),
      );
      assert.throws(() => loadConfig({ ...base, CHORUS_MODE: mode, DATABASE_URL: 'postgres://db/x' }), /needs REDIS_URL:/);
      assert.throws(() => loadConfig({ ...base, CHORUS_MODE: mode, REDIS_URL: 'redis://cache' }), /needs DATABASE_URL:/);
      assert.equal(loadConfig({ ...base, CHORUS_MODE: mode, REDIS_URL: 'redis://cache', DATABASE_URL: 'postgres://db/x' }).mode, mode);
    }
    assert.equal(loadConfig({ ...base }).mode, 'full', 'full mode needs neither');
  });

  test('chorus serve in api mode without them exits 1 with a configuration error', async () => {
    const env = { ...process.env, ...base, CHORUS_MODE: 'api', REDIS_URL: '', DATABASE_URL: '' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout!.on('data', (c) => (stdout += c));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 1);
    // The hub's one fatal log line (JSON on stdout), its msg the configuration error.
    const [line] = logLines(stdout);
    assert.equal(line?.level, 60, stdout);
    assert.match(line.msg, /^Configuration error: CHORUS_MODE=api is split mode and needs REDIS_URL and DATABASE_URL/);
  });

  test('the api computes where satellites dial: the dispatcher embedded broker, or MQTT_URL', () => {
    const c = loadConfig({ ...base, CHORUS_PUBLIC_URL: 'https://hub.example.org', MQTT_PORT: '1999', MQTT_WS_PORT: '8999' });
    assert.deepEqual(advertisedBrokerUrls(c), { brokerUrl: 'mqtt://hub.example.org:1999', wsUrl: 'ws://hub.example.org:8999/mqtt' });
    const m = loadConfig({
      ...base,
      MQTT_URL: 'wss://admin:pw@broker.example.org/mqtt',
      MQTT_ADMIN_USERNAME: 'admin',
      MQTT_ADMIN_PASSWORD: 'pw',
    });
    assert.deepEqual(advertisedBrokerUrls(m), { brokerUrl: 'wss://broker.example.org/mqtt', wsUrl: 'wss://broker.example.org/mqtt' });
  });
});

describe('broker commands over the bus', () => {
  const config = loadConfig({
    CHORUS_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-split-bus-')),
    CHORUS_SECRET: 's'.repeat(32),
    CHORUS_PUBLIC_URL: 'http://hub.test',
    MQTT_PORT: '1884',
    MQTT_WS_PORT: '8084',
  });
  after(() => fs.rmSync(config.dataDir, { recursive: true, force: true }));

  function fakeBroker(fail = false) {
    const calls: unknown[] = [];
    const broker: Broker = {
      kind: 'embedded',
      brokerUrl: '',
      wsUrl: null,
      provisionSatellite: async (s) => void calls.push(['provision', s]),
      revokeSatellite: async (id) => void calls.push(['revoke', id]),
      publish: async (topic, payload, o) => {
        if (fail) throw new Error('broker down');
        calls.push(['publish', topic, Buffer.isBuffer(payload) ? `buffer:${payload.toString('hex')}` : payload, o?.qos]);
      },
      subscribe: async () => {},
      close: async () => {},
    };
    return { broker, calls };
  }

  test('the dispatcher runs publish, provision and revoke and the api waits for its answer', async () => {
    const bus = createMemoryBus();
    const { broker, calls } = fakeBroker();
    const stop = startBrokerCommandExecutor({ bus, broker, kv: createMemoryKv(systemClock, 't:'), onError: () => {} });
    const api = createBusBroker(config, bus);
    assert.equal(api.kind, 'bus');
    assert.equal(api.brokerUrl, 'mqtt://hub.test:1884');
    await api.publish('chorus/t/s/update', '{"a":1}', { qos: 1 });
    await api.publish('chorus/t/s/config', Buffer.from([1, 2]), { qos: 2 });
    await api.provisionSatellite({ satelliteId: 's', tenantId: 't', password: 'pw' });
    await api.revokeSatellite('s');
    assert.deepEqual(calls, [
      ['publish', 'chorus/t/s/update', '{"a":1}', 1],
      ['publish', 'chorus/t/s/config', 'buffer:0102', 2],
      ['provision', { satelliteId: 's', tenantId: 't', password: 'pw' }],
      ['revoke', 's'],
    ]);
    await assert.rejects(
      api.subscribe('chorus/+/+/audio', () => {}),
      /no broker subscriptions/,
    );
    stop();
    await api.close();
  });

  test('with two dispatchers each command runs once (the one that claims it)', async () => {
    const bus = createMemoryBus();
    const kv = createMemoryKv(systemClock, 't:');
    const one = fakeBroker();
    const two = fakeBroker();
    const stops = [one, two].map(({ broker }) => startBrokerCommandExecutor({ bus, broker, kv, onError: () => {} }));
    const api = createBusBroker(config, bus);
    for (let i = 0; i < 6; i++) await api.publish(`chorus/t/s${i}/update`, '{}', { qos: 1 });
    await api.provisionSatellite({ satelliteId: 's', tenantId: 't', password: 'pw' });
    assert.equal(one.calls.length + two.calls.length, 7, 'seven commands, seven runs');
    for (const s of stops) s();
    await api.close();
  });

  test("a topic outside chorus/ is refused; a broker failure reaches the api's caller", async () => {
    const bus = createMemoryBus();
    const { broker, calls } = fakeBroker();
    const stop = startBrokerCommandExecutor({ bus, broker, kv: createMemoryKv(systemClock, 't:'), onError: () => {} });
    const api = createBusBroker(config, bus);
    await assert.rejects(api.publish('$CONTROL/dynamic-security/v1', '{}', { qos: 1 }), /refused topic/);
    assert.deepEqual(calls, []);
    stop();
    const down = fakeBroker(true);
    const stop2 = startBrokerCommandExecutor({ bus, broker: down.broker, kv: createMemoryKv(systemClock, 't:'), onError: () => {} });
    await assert.rejects(api.publish('chorus/t/s/update', '{}', { qos: 1 }), /dispatcher: broker down/);
    stop2();
    await api.close();
  });

  test('without a dispatcher a command fails with 503 BROKER_UNAVAILABLE', async () => {
    const api = createBusBroker(config, createMemoryBus(), { timeoutMs: 50 });
    const err = await api.publish('chorus/t/s/update', '{}', { qos: 1 }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof BrokerUnavailableError);
    assert.equal(err.status, 503);
    assert.equal(err.code, 'BROKER_UNAVAILABLE');
    await api.publish('chorus/t/s/live-audio', '{}', { qos: 0 }); // QoS 0 does not wait
    await api.close();
  });
});

interface Proc {
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts `chorus serve`; resolves once it printed its start-up line. */
function serve(env: Record<string, string>, ready: RegExp): Promise<Proc> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const proc: Proc = {
    child,
    // The start-up sentences, one per line (the hub logs JSON lines; their msg is the sentence).
    output: () => logText(out),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${env.CHORUS_MODE} did not start within 60 s:\n${out}`)), 60_000);
    const onData = (c: Buffer) => {
      out += c.toString();
      if (ready.test(logText(out))) {
        clearTimeout(timer);
        resolve(proc);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${env.CHORUS_MODE} exited with ${code}:\n${out}`));
    });
  });
}

const skip =
  !DATABASE_URL || !REDIS_URL
    ? 'split mode needs DATABASE_URL and REDIS_URL (PostgreSQL shared by both processes, Redis for the bus); CI sets both'
    : false;

describe('split mode: an api and a dispatcher process', { skip }, () => {
  const schema = `split_${crypto.randomBytes(6).toString('hex')}`;
  const dirs: string[] = [];
  let dispatcher: Proc | null = null;
  let apiProc: Proc | null = null;
  /** A second api instance: both evaluate alert rules and take delivery jobs (issue 17). */
  let apiProc2: Proc | null = null;
  let apiUrl2 = '';
  let workerProc: Proc | null = null;
  let apiUrl = '';
  let dispatcherUrl = '';
  let brokerPort = 0;
  let token = '';
  let tenantId = '';
  let sat: { id: string; mqtt: MqttClient; next(channel: string, pred?: (m: any) => boolean): Promise<any> } | null = null;
  const admin = { email: 'split-admin@example.org', password: 'split-admin-password-1' };

  const http = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(apiUrl + '/api' + url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  };
  /** The samples of one metric on a process's GET /metrics (read as the hub admin), those with `labels` only. */
  const metricSamples = async (url: string, name: string, labels: Record<string, string> = {}) => {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, `GET ${url}/metrics`);
    const out: Array<{ labels: Record<string, string>; value: number }> = [];
    for (const line of (await res.text()).split('\n')) {
      const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const l = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      if (Object.entries(labels).every(([k, v]) => l[k] === v)) out.push({ labels: l, value: Number(m[3]) });
    }
    return out;
  };
  /** The alert rule findings a process has judged so far (chorus_alert_findings_total): in all, and stored. */
  const findings = async (url: string) => {
    const all = await metricSamples(url, 'chorus_alert_findings_total');
    const sum = (xs: typeof all) => xs.reduce((n, x) => n + x.value, 0);
    return { total: sum(all), stored: sum(all.filter((x) => x.labels.outcome === 'stored')) };
  };

  before(async () => {
    const c = new pg.Client({ connectionString: DATABASE_URL });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
    const dir = () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-split-'));
      dirs.push(d);
      return d;
    };
    const common = {
      DATABASE_URL: DATABASE_URL!,
      DATABASE_SCHEMA: schema,
      REDIS_URL: REDIS_URL!,
      CHORUS_KV_PREFIX: `chorus-split:${crypto.randomBytes(4).toString('hex')}:`,
      CHORUS_SECRET: 'split-secret-0123456789abcdef0123456789abcdef',
      CHORUS_PUBLIC_URL: 'http://127.0.0.1',
      HOST: '127.0.0.1',
      MQTT_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    };
    // Every port is chosen by the process itself (port 0) and read from its start-up lines: a port
    // probed free here could be taken by an outgoing connection before the child binds it.
    // The dispatcher first: it migrates the schema and opens the broker.
    // Audio objects live in the dispatcher's data dir; the worker reads them from there (without S3_URL
    // the object store is a folder both processes must reach).
    const dispatcherDir = dir();
    dispatcher = await serve(
      { ...common, CHORUS_MODE: 'dispatcher', PORT: '0', MQTT_PORT: '0', MQTT_WS_PORT: '0', CHORUS_DATA_DIR: dispatcherDir },
      /dispatcher is running[^\n]*\nMQTT: [^\n]*\n/,
    );
    const d =
      /health at (http:\/\/[^/\s]+)\/api\/health[\s\S]*embedded broker at mqtt:\/\/127\.0\.0\.1:(\d+) and ws:\/\/127\.0\.0\.1:(\d+)\/mqtt/.exec(
        dispatcher.output(),
      );
    assert.ok(d, `dispatcher start-up lines: ${dispatcher.output()}`);
    dispatcherUrl = d[1];
    brokerPort = Number(d[2]);
    // The api dials nothing itself; it names the dispatcher's broker to satellites.
    apiProc = await serve(
      {
        ...common,
        CHORUS_MODE: 'api',
        PORT: '0',
        MQTT_PORT: d[2],
        MQTT_WS_PORT: d[3],
        CHORUS_DATA_DIR: dir(),
        CHORUS_ADMIN_EMAIL: admin.email,
        CHORUS_ADMIN_PASSWORD: admin.password,
      },
      /is listening on[^\n]*\n/,
    );
    workerProc = await serve(
      { ...common, CHORUS_MODE: 'worker', PORT: '0', CHORUS_DATA_DIR: dispatcherDir },
      /inference worker is running[^\n]*\n/,
    );
    const a = /is listening on (http:\/\/[^\s]+) /.exec(apiProc.output());
    assert.ok(a, `api start-up lines: ${apiProc.output()}`);
    apiUrl = a[1];
    apiProc2 = await serve(
      { ...common, CHORUS_MODE: 'api', PORT: '0', MQTT_PORT: d[2], MQTT_WS_PORT: d[3], CHORUS_DATA_DIR: dir() },
      /is listening on[^\n]*\n/,
    );
    const a2 = /is listening on (http:\/\/[^\s]+) /.exec(apiProc2.output());
    assert.ok(a2, `second api start-up lines: ${apiProc2.output()}`);
    apiUrl2 = a2[1];

    const login = await fetch(`${apiUrl}/api/auth/login?returnToken=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(admin),
    });
    assert.equal(login.status, 200, await login.clone().text());
    token = (await login.json()).token;
    const team = await http('POST', '/auth/create-tenant', { name: 'Split team' });
    assert.equal(team.status, 201, team.text);
    tenantId = team.body.id;
  });

  after(async () => {
    await sat?.mqtt.endAsync(true).catch(() => {});
    await workerProc?.stop();
    await apiProc?.stop();
    await apiProc2?.stop();
    await dispatcher?.stop();
    const c = new pg.Client({ connectionString: DATABASE_URL });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('the dispatcher serves only its health endpoint; the api serves the API', async () => {
    const health = await fetch(`${dispatcherUrl}/api/health`);
    assert.equal(health.status, 200);
    assert.equal((await health.json()).status, 'ok');
    assert.equal((await fetch(`${dispatcherUrl}/api/auth/me`)).status, 404);
    assert.equal((await fetch(`${dispatcherUrl}/ws/events?tenantId=${tenantId}`)).status, 404);
    assert.equal((await fetch(`${apiUrl}/api/health`)).status, 200);
    assert.equal((await http('GET', '/auth/me')).status, 200);
  });

  test("a satellite registered through the api connects to the dispatcher's broker", async () => {
    const reg = await http('POST', '/satellites', { tenantId, name: 'Split garden' });
    assert.equal(reg.status, 201, reg.text);
    const { id, mqtt: creds } = reg.body;
    assert.equal(creds.brokerUrl, `mqtt://127.0.0.1:${brokerPort}`, "the dispatcher's embedded broker");
    const client = await mqtt.connectAsync(
      creds.brokerUrl,
      { clientId: `satellite-${id}`, username: creds.username, password: creds.password, protocolVersion: 4, reconnectPeriod: 0 },
      false,
    );
    const waiters: Array<{ channel: string; pred: (m: any) => boolean; resolve: (m: any) => void }> = [];
    client.on('message', (topic, payload) => {
      const channel = topic.split('/')[3];
      let body: any = payload.toString();
      try {
        body = JSON.parse(body);
      } catch {
        // not JSON
      }
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].channel === channel && waiters[i].pred(body)) waiters.splice(i, 1)[0].resolve(body);
      }
    });
    await client.subscribeAsync(`chorus/${tenantId}/${id}/+`, { qos: 1 });
    sat = {
      id,
      mqtt: client,
      next: (channel, pred = () => true) =>
        new Promise((resolve, reject) => {
          waiters.push({ channel, pred, resolve });
          setTimeout(() => reject(new Error(`satellite: no ${channel} within ${WAIT_MS} ms`)), WAIT_MS).unref();
        }),
    };
  });

  test('update, log request and a settings change reach the satellite through the dispatcher', async () => {
    assert.ok(sat, 'the satellite is connected');
    const update = sat.next('update');
    const upd = await http('POST', `/satellites/${sat.id}/update`, {});
    assert.equal(upd.status, 200, upd.text);
    assert.deepEqual(await update, { satelliteId: sat.id, tenantId, targetVersion: upd.body.targetVersion });

    const logReq = sat.next('log-request');
    const logs = await http('POST', `/satellites/${sat.id}/logs/request`, { tail: 25 });
    assert.equal(logs.status, 202, logs.text);
    assert.deepEqual(await logReq, { requestId: logs.body.requestId, tail: 25 });

    const config = sat.next('config', (m) => m.heartbeatIntervalSec === 45);
    const patch = await http('PATCH', `/settings/effective?satelliteId=${sat.id}`, { values: { heartbeat_interval_sec: 45 } });
    assert.equal(patch.status, 200, patch.text);
    const pushed = await config;
    assert.equal(pushed.satelliteId, sat.id);
    assert.equal(pushed.tenantId, tenantId);
  });

  test('a chunk acked by the dispatcher is classified by the worker process: the api lists the detection, its WebSocket and the satellite hear of it', async () => {
    assert.ok(sat, 'the satellite is connected');
    const ws = new WebSocket(`${apiUrl.replace(/^http/, 'ws')}/ws/events?tenantId=${tenantId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const event = new Promise<any>((resolve, reject) => {
      ws.on('message', (d) => {
        const fr = JSON.parse(d.toString());
        if (fr.type === 'detection') resolve(fr);
      });
      setTimeout(() => reject(new Error(`no detection event within ${WAIT_MS} ms`)), WAIT_MS).unref();
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      const label = SPECIES[0].label;
      const chunkId = crypto.randomUUID();
      const body = {
        chunkId,
        satelliteId: sat.id,
        tenantId,
        recordedAt: new Date().toISOString(),
        durationMs: 3000,
        sampleRate: 48000,
        audio: makeWav(renderChunk({ species: [label], seed: 41 })).toString('base64'),
      };
      const ack = sat.next('ack', (m) => m.chunkId === chunkId);
      const message = sat.next('detection');
      sat.mqtt.publish(`chorus/${tenantId}/${sat.id}/audio`, JSON.stringify(body), { qos: 1 });
      assert.deepEqual(await ack, { chunkId, status: 'stored' });
      const code = speciesCatalog().byLabel(label)!.code;
      const msg = await message;
      assert.deepEqual(
        [msg.speciesCode, msg.audioChunkId, msg.satelliteId],
        [code, chunkId, sat.id],
        'the detection message, through the dispatcher',
      );
      const frame = await event;
      assert.deepEqual(
        [frame.speciesCode, frame.tenantId, frame.satelliteId],
        [code, tenantId, sat.id],
        'the WebSocket event, through the bus',
      );
      const list = await http('GET', `/detections?tenantId=${tenantId}`);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(
        list.body.detections.map((d: any) => [d.audioChunkId, d.speciesCode]),
        [[chunkId, code]],
      );
      const workers = await http('GET', `/workers?tenantId=${tenantId}`);
      assert.equal(workers.status, 200, workers.text);
      assert.ok(JSON.stringify(workers.body).includes('"jobsSucceeded":1'), `the worker process reports its job: ${workers.text}`);
    } finally {
      ws.close();
    }
  });

  test('an alert rule fires once across two api processes: one stored alert, one signed webhook, one frame per socket', async () => {
    assert.ok(sat, 'the satellite is connected');
    const secret = 'split-webhook-secret-0123456789';
    const received: Array<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> = [];
    const receiver = http_.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        received.push({ headers: req.headers, body });
        const ok = verifySignature(secret, body, req.headers['x-service-signature'] as string | undefined);
        res.writeHead(ok ? 200 : 401).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as { port: number }).port;
    const sockets = [apiUrl, apiUrl2].map((u) => {
      const ws = new WebSocket(`${u.replace(/^http/, 'ws')}/ws/events?tenantId=${tenantId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const frames: any[] = [];
      ws.on('message', (m) => frames.push(JSON.parse(m.toString())));
      return { ws, frames, open: new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject)) };
    });
    try {
      await Promise.all(sockets.map((s) => s.open));
      const label = SPECIES[2].label;
      const code = speciesCatalog().byLabel(label)!.code;
      const ch = await http('POST', '/alert-rules/channels', {
        tenantId,
        type: 'webhook',
        name: 'Split hook',
        config: { url: `http://127.0.0.1:${port}/hook`, secret },
      });
      assert.equal(ch.status, 201, ch.text);
      const rule = await http('POST', '/alert-rules/rules', {
        tenantId,
        name: 'Split rule',
        type: 'detection',
        conditions: { species: [code] },
        channelIds: [ch.body.id],
      });
      assert.equal(rule.status, 201, rule.text);
      const chunkId = crypto.randomUUID();
      const body = {
        chunkId,
        satelliteId: sat.id,
        tenantId,
        recordedAt: new Date().toISOString(),
        durationMs: 3000,
        sampleRate: 48000,
        audio: makeWav(renderChunk({ species: [label], seed: 43 })).toString('base64'),
      };
      const judgedBefore = await Promise.all([apiUrl, apiUrl2].map((u) => findings(u)));
      const ack = sat.next('ack', (m) => m.chunkId === chunkId);
      sat.mqtt.publish(`chorus/${tenantId}/${sat.id}/audio`, JSON.stringify(body), { qos: 1 });
      assert.deepEqual(await ack, { chunkId, status: 'stored' });
      await waitFor('the webhook', () => received.length > 0, { timeoutMs: WAIT_MS });
      // Both api processes judge the detection (GET /metrics counts each process's findings): one
      // stores the alert, the other finds it stored. Then every delivery job has run: a duplicate
      // delivery would have been sent by now.
      const judged = await waitFor(
        'both api processes to judge the detection',
        async () => {
          const now = await Promise.all([apiUrl, apiUrl2].map((u) => findings(u)));
          return now.every((n, i) => n.total > judgedBefore[i].total) && now;
        },
        { timeoutMs: WAIT_MS },
      );
      assert.equal(
        judged.reduce((n, j, i) => n + j.stored - judgedBefore[i].stored, 0),
        1,
        `one process stored the alert: ${JSON.stringify({ judgedBefore, judged })}`,
      );
      await waitFor(
        'the alert-delivery queue to settle',
        async () => {
          // The queue's depth is reported once per deployment, by the dispatcher (sum() counts it once).
          const q = await metricSamples(dispatcherUrl, 'chorus_queue_jobs', { queue: 'alert-delivery' });
          const n = (state: string) => q.filter((x) => x.labels.state === state).reduce((t, x) => t + x.value, 0);
          return n('waiting') + n('active') + n('delayed') === 0 && n('completed') >= 1;
        },
        { timeoutMs: WAIT_MS },
      );
      assert.deepEqual(await metricSamples(apiUrl, 'chorus_queue_jobs'), [], 'an api process does not report the shared queue');
      assert.equal(received.length, 1, 'one webhook delivery');
      assert.equal(JSON.parse(received[0].body.toString()).event, 'custom_rule');
      for (const u of [apiUrl, apiUrl2]) {
        const res = await fetch(`${u}/api/alerts?tenantId=${tenantId}`, { headers: { authorization: `Bearer ${token}` } });
        const list = await res.json();
        assert.equal(list.alerts.filter((x: any) => x.ruleId === rule.body.id).length, 1, `one alert listed by ${u}`);
      }
      for (const s of sockets) assert.equal(s.frames.filter((fr) => fr.type === 'alert').length, 1, 'one alert frame per socket');
    } finally {
      for (const s of sockets) s.ws.close();
      await new Promise((r) => receiver.close(r));
    }
  });

  test("live listening on the api's WebSocket: live-start through the dispatcher, live audio relayed back", async () => {
    assert.ok(sat, 'the satellite is connected');
    const started = sat.next('live-start');
    const ws = new WebSocket(`${apiUrl.replace(/^http/, 'ws')}/ws/events?tenantId=${tenantId}&listenSatelliteId=${sat.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const frames: any[] = [];
    const waiting: Array<{ type: string; resolve: (f: any) => void }> = [];
    ws.on('message', (d) => {
      const fr = JSON.parse(d.toString());
      frames.push(fr);
      for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i].type === fr.type) waiting.splice(i, 1)[0].resolve(fr);
    });
    const next = (type: string) =>
      new Promise<any>((resolve, reject) => {
        const hit = frames.find((x) => x.type === type);
        if (hit) return resolve(hit);
        waiting.push({ type, resolve });
        setTimeout(() => reject(new Error(`no ${type} frame; got ${JSON.stringify(frames.map((x) => x.type))}`)), WAIT_MS).unref();
      });
    const { sessionId } = await next('live-started');
    assert.deepEqual(await started, { sessionId });
    const audio = Buffer.from('RIFF-split-live-audio').toString('base64');
    await sat.mqtt.publishAsync(`chorus/${tenantId}/${sat.id}/live-audio`, audio, { qos: 0 });
    const frame = await next('live-audio');
    assert.equal(frame.audio, audio);
    assert.equal(frame.satelliteId, sat.id);
    const stopped = sat.next('live-stop');
    ws.close();
    assert.deepEqual(await stopped, { sessionId });
  });
});

describe('split mode: two api processes share one abuse limit through Redis', { skip }, () => {
  const schema = `split_limit_${crypto.randomBytes(6).toString('hex')}`;
  const dirs: string[] = [];
  const procs: Proc[] = [];
  const urls: string[] = [];

  before(async () => {
    const c = new pg.Client({ connectionString: DATABASE_URL });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
    const common = {
      DATABASE_URL: DATABASE_URL!,
      DATABASE_SCHEMA: schema,
      REDIS_URL: REDIS_URL!,
      CHORUS_KV_PREFIX: `chorus-split-limit:${crypto.randomBytes(4).toString('hex')}:`,
      CHORUS_SECRET: 'split-secret-0123456789abcdef0123456789abcdef',
      CHORUS_PUBLIC_URL: 'http://127.0.0.1',
      CHORUS_MODE: 'api',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      LIMIT_TOKEN_GUESSES: '3/15m',
    };
    // One after the other: the first migrates the shared schema.
    for (let i = 0; i < 2; i++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-split-limit-'));
      dirs.push(dir);
      const proc = await serve({ ...common, CHORUS_DATA_DIR: dir }, /Proxy trust: [^\n]*\n/);
      procs.push(proc);
      const a = /is listening on (http:\/\/[^\s]+) /.exec(proc.output());
      assert.ok(a, `api start-up lines: ${proc.output()}`);
      urls.push(a[1]);
    }
  });

  after(async () => {
    for (const p of procs) await p.stop();
    const c = new pg.Client({ connectionString: DATABASE_URL });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('forged share links counted on either process exhaust one budget: the fourth gets 429 wherever it lands', async () => {
    const guess = (url: string) => fetch(`${url}/api/share/detection/some-id/forged`, { headers: { 'x-forwarded-for': '192.0.2.201' } });
    const statuses: number[] = [];
    for (const url of [urls[0], urls[1], urls[0], urls[1]]) statuses.push((await guess(url)).status);
    assert.deepEqual(statuses, [403, 403, 403, 429]);
    const other = await fetch(`${urls[0]}/api/share/detection/some-id/forged`, { headers: { 'x-forwarded-for': '192.0.2.202' } });
    assert.equal(other.status, 403, 'another address has its own budget');
  });
});
