/**
 * Figures for issue 4 ("Figures to reach"): chunks/s stored+acked by a hub, p50/p99
 * publish-to-ack latency and hub RSS, against the raw rate of a bare Aedes for the same payloads.
 *
 * - Raw: bench/raw-broker.ts in its own process (JSON-parses every message, nothing else);
 *   S clients here publish at QoS 1 and count a message done at its PUBACK.
 * - Hub: a hub in its own process (embedded parts, or PostgreSQL + Redis when DATABASE_URL and
 *   REDIS_URL are set); S satellites registered over HTTP log in over MQTT as the protocol says
 *   and count a chunk done when its ack {chunkId, status} arrives on chorus/{t}/{s}/ack.
 * Both publish the same bodies (3-second 48 kHz 16-bit mono WAV of the synthetic soundscape,
 * base64, a new chunkId each) with the same clients and window of in-flight chunks per client,
 * as fast as completions return. The measured time alternates between the two in BENCH_ROUNDS
 * slices each (raw, hub, raw, hub, …), so load from elsewhere on the machine hits both alike;
 * each slice starts with a warm-up that is not counted.
 *
 * BENCH_SATELLITES (8), BENCH_WINDOW (4), BENCH_SECONDS (20 per side), BENCH_ROUNDS (2),
 * BENCH_WARMUP_SECONDS (3 before the first slice of each side, 1 before the others).
 * BENCH_HUB_PROFILE=DIR starts the hub with --cpu-prof into DIR. BENCH_SPLIT=1: one dispatcher
 * process measured (startSplitHub).
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import { startHubProcess } from './hub-process.ts';
import { freePort, hubInstallation, startHubProcess as startChildHub, type HubProcess as ChildHub } from '../test/helpers/hub-process.ts';
import { cpuSecondsOf, machineTicks, memOf } from './proc-stats.ts';
import { soundscapeChunk } from '../src/satellite/soundscape.ts';
import { CHUNK_DURATION_MS, CHUNK_WAV_BYTES, SAMPLE_RATE, makeWav } from '../src/protocol/wav.ts';
import { topicOf } from '../src/protocol/topics.ts';

const SATELLITES = Number(process.env.BENCH_SATELLITES ?? 8);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const ACK_TIMEOUT_MS = 30_000;
const DISTINCT_CHUNKS = 16;

/** One publisher: `next` sends a body and resolves when it is done (null) or failed (the reason). */
interface Lane {
  client: MqttClient;
  next(): Promise<string | null>;
}

/** What is being measured: its clients and the server process they talk to. */
interface Side {
  lanes: Lane[];
  pid: number;
  stop(): Promise<void>;
  /** The hub's inference queue (GET /api/workers): how far classification kept up with ingest. */
  inference?: () => Promise<{ waiting: number; active: number; completed: number; failed: number; delayed: number }>;
}

/** Sums over the measured slices of one side. */
class Tally {
  latencies: number[] = [];
  errors = new Map<string, number>();
  seconds = 0;
  serverCpu = 0;
  benchCpu = 0;
  machine = { busy: 0, total: 0 };
  mem = { rssMb: 0, hwmMb: 0 };
  get rate() {
    return this.latencies.length / this.seconds;
  }
  get errorCount() {
    return [...this.errors.values()].reduce((a, b) => a + b, 0);
  }
  pct(p: number) {
    const s = [...this.latencies].sort((a, b) => a - b);
    return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
  }
}

// ------------------------------------------------------------------------------- payloads

const audios = Array.from({ length: DISTINCT_CHUNKS }, (_, i) => Buffer.from(makeWav(soundscapeChunk(2024, i).samples).toString('base64')));
const TAIL = Buffer.from('"}');

/** Protocol audio bodies for one satellite: a fresh chunkId each, recordedAt 3 s after the last. */
function bodies(satelliteId: string, tenantId: string) {
  let seq = 0;
  const base = Date.now() - 86_400_000;
  return () => {
    const chunkId = crypto.randomUUID();
    const head = JSON.stringify({
      chunkId,
      satelliteId,
      tenantId,
      recordedAt: new Date(base + seq * CHUNK_DURATION_MS).toISOString(),
      durationMs: CHUNK_DURATION_MS,
      sampleRate: SAMPLE_RATE,
    });
    const audio = audios[seq++ % audios.length];
    return { chunkId, payload: Buffer.concat([Buffer.from(`${head.slice(0, -1)},"audio":"`), audio, TAIL]) };
  };
}

// ------------------------------------------------------------------------------- measuring

/** Runs WINDOW loops per lane for warm-up + seconds, adding what completes after the warm-up to `tally`. */
async function drive(side: Side, warmup: number, seconds: number, tally: Tally): Promise<void> {
  const start = Date.now();
  const from = start + warmup * 1000;
  const until = from + seconds * 1000;
  const mark = () => ({
    at: Date.now(),
    cpu: cpuSecondsOf(side.pid),
    bench: process.cpuUsage(),
    machine: machineTicks(),
    mem: memOf(side.pid),
  });
  const marks: { from?: ReturnType<typeof mark>; until?: ReturnType<typeof mark> } = {};
  const timers = [setTimeout(() => (marks.from = mark()), from - start), setTimeout(() => (marks.until = mark()), until - start)];
  async function loop(lane: Lane) {
    while (Date.now() < until) {
      const t0 = Date.now();
      const err = await lane.next();
      const t1 = Date.now();
      const counted = t1 >= from && t1 < until;
      if (err) {
        if (counted) tally.errors.set(err, (tally.errors.get(err) ?? 0) + 1);
        if (!lane.client.connected) return; // a dead connection would spin; its errors are counted
      } else if (counted) tally.latencies.push(t1 - t0);
    }
  }
  await Promise.all(side.lanes.flatMap((lane) => Array.from({ length: WINDOW }, () => loop(lane))));
  timers.forEach(clearTimeout);
  marks.until ??= mark();
  const { from: s, until: e } = marks;
  if (!s) throw new Error('every connection closed before the warm-up ended');
  tally.seconds += seconds;
  tally.serverCpu += e.cpu - s.cpu;
  tally.benchCpu += (e.bench.user + e.bench.system - s.bench.user - s.bench.system) / 1e6;
  tally.machine.busy += e.machine.busy - s.machine.busy;
  tally.machine.total += e.machine.total - s.machine.total;
  tally.mem = e.mem;
}

async function connect(url: string, id: string, password?: string): Promise<MqttClient> {
  return mqtt.connectAsync(url, {
    clientId: `satellite-${id}`,
    username: id,
    password,
    protocolVersion: 4,
    clean: true,
    keepalive: 30,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
  });
}

// ------------------------------------------------------------------------------- raw broker

async function startRaw(): Promise<Side & { parsed(): string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'raw-broker.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.once('close', () => r())); // close: after its last output
  const lanes: Lane[] = [];
  async function stop() {
    await Promise.all(lanes.map((l) => l.client.endAsync().catch(() => l.client.end(true))));
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(kill);
    }
  }
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', () => {
        const m = out.match(/listening (\d+)/);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`raw broker exited with ${code}: ${out}`)));
    });
    const tenantId = crypto.randomUUID();
    for (let i = 0; i < SATELLITES; i++) {
      const id = crypto.randomUUID();
      const client = await connect(`mqtt://127.0.0.1:${port}`, id);
      const make = bodies(id, tenantId);
      const topic = topicOf(tenantId, id, 'audio');
      const next = () =>
        new Promise<string | null>((resolve) =>
          client.publish(topic, make().payload, { qos: 1 }, (err) => resolve(err ? `publish: ${err.message}` : null)),
        );
      lanes.push({ client, next });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { lanes, pid: child.pid!, stop, parsed: () => out.match(/parsed \d+ failed \d+/)?.[0] ?? '?' };
}

// ------------------------------------------------------------------------------- hub

async function json(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown }) {
  const res = await fetch(url, {
    method: init.method,
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify(init.body),
  });
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

/** A satellite whose chunk is done when its ack arrives: stored, or failed (error ack, timeout, closed). */
async function satelliteLane(hubUrl: string, auth: Record<string, string>, tenantId: string, n: number): Promise<Lane> {
  const reg = await json(`${hubUrl}/api/satellites`, { method: 'POST', headers: auth, body: { tenantId, name: `Bench satellite ${n}` } });
  const client = await connect(reg.mqtt.brokerUrl, reg.id, reg.mqtt.password);
  const pending = new Map<string, (err: string | null) => void>();
  client.on('message', (_topic, payload) => {
    let ack: { chunkId?: string; status?: string; error?: string };
    try {
      ack = JSON.parse(payload.toString('utf8'));
    } catch {
      return;
    }
    const settle = ack.chunkId ? pending.get(ack.chunkId) : undefined;
    settle?.(ack.status === 'stored' ? null : `error ack: ${ack.error ?? ack.status}`);
  });
  client.on('close', () => [...pending.values()].forEach((settle) => settle('connection closed')));
  await client.subscribeAsync(topicOf(tenantId, reg.id, 'ack'), { qos: 1 });
  const make = bodies(reg.id, tenantId);
  const topic = topicOf(tenantId, reg.id, 'audio');
  const next = () =>
    new Promise<string | null>((resolve) => {
      const { chunkId, payload } = make();
      const timer = setTimeout(() => settle('no ack within 30 s'), ACK_TIMEOUT_MS);
      const settle = (err: string | null) => {
        if (!pending.delete(chunkId)) return;
        clearTimeout(timer);
        resolve(err);
      };
      pending.set(chunkId, settle);
      client.publish(topic, payload, { qos: 1 }, (err) => err && settle(`publish: ${err.message}`));
    });
  return { client, next };
}

/**
 * BENCH_SPLIT=1 (DATABASE_URL and REDIS_URL): the hub as a lone dispatcher process holding the
 * embedded broker (no worker: inference jobs wait in Redis), plus an api process the satellites
 * register through. The server measured is the dispatcher: the per-dispatcher ingest figure.
 */
async function startSplitHub(): Promise<Side> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) throw new Error('BENCH_SPLIT needs DATABASE_URL and REDIS_URL');
  const inst = await hubInstallation('chorus-bench-split');
  const [mqttPort, wsPort] = [await freePort(), await freePort()];
  const admin = { email: 'bench-split@example.org', password: crypto.randomBytes(12).toString('hex') };
  const common = {
    ...inst.env,
    CHORUS_SECRET: crypto.randomBytes(24).toString('hex'),
    LOG_LEVEL: 'warn',
    MQTT_PORT: String(mqttPort),
    MQTT_WS_PORT: String(wsPort),
  };
  const procs: ChildHub[] = [];
  const lanes: Lane[] = [];
  async function stop() {
    await Promise.all(lanes.map((l) => l.client.endAsync().catch(() => l.client.end(true))));
    for (const p of procs.reverse()) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGTERM');
      await p.exited;
    }
    await inst.dispose();
  }
  try {
    const dispatcher = startChildHub({ ...common, CHORUS_MODE: 'dispatcher', PORT: String(await freePort()) });
    procs.push(dispatcher);
    await dispatcher.waitFor(/^start-up complete/);
    const api = startChildHub({
      ...common,
      CHORUS_MODE: 'api',
      PORT: String(await freePort()),
      CHORUS_ADMIN_EMAIL: admin.email,
      CHORUS_ADMIN_PASSWORD: admin.password,
    });
    procs.push(api);
    await api.waitFor(/^start-up complete/);
    const login = await json(`${api.url}/api/auth/login?returnToken=true`, { method: 'POST', body: admin });
    const auth = { authorization: `Bearer ${login.token}` };
    const team = await json(`${api.url}/api/auth/create-tenant`, { method: 'POST', headers: auth, body: { name: 'Ingest bench' } });
    for (let i = 0; i < SATELLITES; i++) lanes.push(await satelliteLane(api.url, auth, team.id, i + 1));
    return { lanes, pid: dispatcher.child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startHub(): Promise<Side> {
  if (process.env.BENCH_SPLIT) return startSplitHub();
  const profileDir = process.env.BENCH_HUB_PROFILE;
  const hub = await startHubProcess({}, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : []);
  const lanes: Lane[] = [];
  async function stop() {
    await Promise.all(lanes.map((l) => l.client.endAsync().catch(() => l.client.end(true))));
    await hub.stop();
  }
  try {
    const login = await json(`${hub.url}/api/auth/login?returnToken=true`, {
      method: 'POST',
      body: { email: hub.adminEmail, password: hub.adminPassword },
    });
    const auth = { authorization: `Bearer ${login.token}` };
    const team = await json(`${hub.url}/api/auth/create-tenant`, { method: 'POST', headers: auth, body: { name: 'Ingest bench' } });
    for (let i = 0; i < SATELLITES; i++) lanes.push(await satelliteLane(hub.url, auth, team.id, i + 1));
    const inference = async () => (await json(`${hub.url}/api/workers`, { headers: auth })).queue;
    return { lanes, pid: hub.pid, stop, inference };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ------------------------------------------------------------------------------- report

export async function run() {
  const parts =
    (process.env.DATABASE_URL ? `PostgreSQL${process.env.REDIS_URL ? ' + Redis' : ''}` : 'embedded parts (PGlite, in-memory queue)') +
    (process.env.BENCH_SPLIT ? ', split mode: one dispatcher measured (no worker in it)' : '');
  const bodyBytes = bodies(crypto.randomUUID(), crypto.randomUUID())().payload.length;
  const cores = os.cpus().length;
  console.log(
    `\ningest bench — ${parts}; ${SATELLITES} satellites × ${WINDOW} in flight; ${SECONDS} s measured per side in ${ROUNDS} alternating slices`,
  );
  console.log(
    `payload: 3 s 48 kHz 16-bit mono WAV (${CHUNK_WAV_BYTES} B) as base64 in a ${bodyBytes} B JSON body; ${cores} cores, load average at start ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  const raw = await startRaw();
  let hub: Side | null = null;
  const rawTally = new Tally();
  const hubTally = new Tally();
  let backlog: Awaited<ReturnType<NonNullable<Side['inference']>>> | null;
  try {
    hub = await startHub();
    for (let r = 0; r < ROUNDS; r++) {
      await drive(raw, r === 0 ? WARMUP : 1, SECONDS / ROUNDS, rawTally);
      await drive(hub, r === 0 ? WARMUP : 1, SECONDS / ROUNDS, hubTally);
    }
    backlog = (await hub.inference?.().catch(() => null)) ?? null;
  } finally {
    await Promise.allSettled([raw.stop(), hub?.stop()]);
  }

  const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
  console.log(
    `\nCPU: of one core for the server process (raw broker or hub) and for this load generator; of all ${cores} cores for the machine.`,
  );
  console.log('                              msg/s   p50 ms  p99 ms  errors   CPU server / bench / machine   RSS (peak) MB');
  const row = (name: string, t: Tally) =>
    console.log(
      `${name.padEnd(28)} ${t.rate.toFixed(0).padStart(6)}  ${String(t.pct(0.5)).padStart(7)} ${String(t.pct(0.99)).padStart(7)}  ${String(t.errorCount).padStart(6)}   ` +
        `${pct(t.serverCpu / t.seconds).padStart(10)} / ${pct(t.benchCpu / t.seconds).padStart(5)} / ${pct(t.machine.busy / t.machine.total).padStart(7)}   ` +
        `${t.mem.rssMb.toFixed(0)} (${t.mem.hwmMb.toFixed(0)})`,
    );
  row('raw aedes, PUBACK', rawTally);
  row('hub, stored + acked', hubTally);
  console.log(`\nraw broker: ${raw.parsed()} (whole run, warm-ups included)`);
  for (const [reason, n] of hubTally.errors) console.log(`hub error: ${n} × ${reason}`);
  for (const [reason, n] of rawTally.errors) console.log(`raw error: ${n} × ${reason}`);
  console.log(`hub / raw: ${pct(hubTally.rate / rawTally.rate)}  (target ≥ 50% on embedded parts)`);
  console.log(
    `hub: ${hubTally.rate.toFixed(0)} chunks/s stored + acked = real time for ${Math.floor(hubTally.rate * 3)} continuously recording satellites  (target ≥ 300 chunks/s with PostgreSQL)`,
  );
  if (backlog) {
    console.log(
      `inference at the end (runs beside ingest, acks never wait for it): ${backlog.completed} classified (recent count, bounded), ${backlog.waiting + backlog.delayed} waiting, ${backlog.active} running, ${backlog.failed} failed`,
    );
  }
  console.log(`hub RSS ${hubTally.mem.rssMb.toFixed(0)} MB at the end of the last slice (peak ${hubTally.mem.hwmMb.toFixed(0)} MB)`);
}
