/**
 * Issue 37 "A fleet of a thousand": BENCH_SATELLITES (1,000) simulated satellites connected to one
 * hub at once, each as the protocol has it (its own login, ack and config subscriptions, a
 * heartbeat every 30 s and telemetry every 5 minutes, spread over the interval), and
 * BENCH_UPLOADERS_PCT (10 %) of them uploading a 3-second chunk every 3 s, as a recording
 * satellite does. On the embedded broker by default; BENCH_BROKER=mosquitto starts a Mosquitto 2
 * with dynamic security and gives the hub MQTT_URL.
 *
 * Prints: the connect storm (all satellites connecting at once: time to the last CONNACK and to
 * the last SUBACK), hub (and Mosquitto) RSS and CPU before and after it, a quiet phase of
 * heartbeats and telemetry only (CPU per heartbeat handled), a busy phase with the uploaders (ack
 * latency p50/p99, chunks/s, CPU) and the growth of the hub's RSS per connected satellite.
 *
 * BENCH_SATELLITES (1000), BENCH_UPLOADERS_PCT (10), BENCH_PHASE_SECONDS (60 per phase),
 * BENCH_HEARTBEAT_SECONDS (30), BENCH_TELEMETRY_SECONDS (300), BENCH_REGISTER_CONCURRENCY (8).
 */
import crypto from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { adminAuth, api, startHubProcess, type HubProcess } from './hub-process.ts';
import { cpuSecondsOf, memOf } from './proc-stats.ts';
import { soundscapeChunk } from '../src/satellite/soundscape.ts';
import { CHUNK_DURATION_MS, SAMPLE_RATE, makeWav } from '../src/protocol/wav.ts';
import { topicOf } from '../src/protocol/topics.ts';
import { startMosquitto, type RunningMosquitto } from '../test/helpers/mosquitto.ts';

const N = Number(process.env.BENCH_SATELLITES ?? 1000);
const UPLOADERS = Math.round((N * Number(process.env.BENCH_UPLOADERS_PCT ?? 10)) / 100);
const PHASE_S = Number(process.env.BENCH_PHASE_SECONDS ?? 60);
const HEARTBEAT_MS = Number(process.env.BENCH_HEARTBEAT_SECONDS ?? 30) * 1000;
const TELEMETRY_MS = Number(process.env.BENCH_TELEMETRY_SECONDS ?? 300) * 1000;
const REGISTER_CONCURRENCY = Number(process.env.BENCH_REGISTER_CONCURRENCY ?? 8);
const SATELLITES_PER_TEAM = 50;

interface Sat {
  id: string;
  tenantId: string;
  username: string;
  password: string;
  brokerUrl: string;
  client?: MqttClient;
  timers: NodeJS.Timeout[];
  started: number;
}

const audio = Buffer.from(makeWav(soundscapeChunk(2024, 1).samples).toString('base64'));

function chunkBody(s: Sat, seq: number) {
  const chunkId = crypto.randomUUID();
  const head = JSON.stringify({
    chunkId,
    satelliteId: s.id,
    tenantId: s.tenantId,
    recordedAt: new Date(Date.now() - 60_000 + seq * CHUNK_DURATION_MS).toISOString(),
    durationMs: CHUNK_DURATION_MS,
    sampleRate: SAMPLE_RATE,
  });
  return { chunkId, payload: Buffer.concat([Buffer.from(`${head.slice(0, -1)},"audio":"`), audio, Buffer.from('"}')]) };
}

async function inBatches<T, R>(items: T[], size: number, fn: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

async function register(hub: HubProcess): Promise<Sat[]> {
  const auth = await adminAuth(hub);
  const teams = await inBatches(Array.from({ length: Math.ceil(N / SATELLITES_PER_TEAM) }), 4, (_, i) =>
    api(`${hub.url}/api/auth/create-tenant`, { headers: auth, body: { name: `Fleet ${i}` } }),
  );
  return inBatches(Array.from({ length: N }), REGISTER_CONCURRENCY, async (_, i) => {
    const team = teams[Math.floor(i / SATELLITES_PER_TEAM)];
    const reg = await api(`${hub.url}/api/satellites`, { headers: auth, body: { tenantId: team.id, name: `Station ${i}` } });
    return { id: reg.id, tenantId: team.id, ...reg.mqtt, timers: [], started: 0 } as Sat;
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN;
};

function usage(pids: Record<string, number>) {
  return Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, { cpu: cpuSecondsOf(pid), ...memOf(pid) }]));
}

export async function run(): Promise<void> {
  let mosq: RunningMosquitto | null = null;
  const env: Record<string, string> = { LOG_LEVEL: 'warn' };
  if (process.env.BENCH_BROKER === 'mosquitto') {
    mosq = await startMosquitto({ persistence: false });
    Object.assign(env, { MQTT_URL: mosq.url, MQTT_ADMIN_USERNAME: mosq.adminUsername, MQTT_ADMIN_PASSWORD: mosq.adminPassword });
  }
  const hub = await startHubProcess(env);
  const pids: Record<string, number> = { hub: hub.pid, ...(mosq ? { mosquitto: mosq.pid } : {}) };
  const sats: Sat[] = [];
  try {
    const regStart = performance.now();
    sats.push(...(await register(hub)));
    console.log(`registered ${N} satellites in ${((performance.now() - regStart) / 1000).toFixed(1)} s`);

    // ---- connect storm: everyone at once
    const before = usage(pids);
    const t0 = performance.now();
    const connack: number[] = [];
    const suback: number[] = [];
    await Promise.all(
      sats.map(async (s) => {
        const c = await mqtt.connectAsync(s.brokerUrl, {
          clientId: `satellite-${s.id}`,
          username: s.username,
          password: s.password,
          protocolVersion: 4,
          reconnectPeriod: 0,
          connectTimeout: 120_000,
        });
        connack.push(performance.now() - t0);
        await c.subscribeAsync([topicOf(s.tenantId, s.id, 'ack'), topicOf(s.tenantId, s.id, 'config')], { qos: 1 });
        suback.push(performance.now() - t0);
        s.client = c;
      }),
    );
    const stormMs = performance.now() - t0;
    const afterStorm = usage(pids);
    console.log(
      `connect storm: ${N} satellites, last CONNACK ${Math.max(...connack).toFixed(0)} ms, last SUBACK ${stormMs.toFixed(0)} ms ` +
        `(p50 CONNACK ${pct(connack, 0.5).toFixed(0)} ms)`,
    );
    for (const [k, u] of Object.entries(afterStorm))
      console.log(
        `  ${k}: RSS ${before[k]!.rssMb.toFixed(0)} → ${u.rssMb.toFixed(0)} MB (+${(((u.rssMb - before[k]!.rssMb) * 1024) / N).toFixed(1)} kB per satellite), ` +
          `CPU ${(u.cpu - before[k]!.cpu).toFixed(2)} s`,
      );

    // ---- quiet phase: heartbeats and telemetry only, spread over their intervals
    let heartbeats = 0;
    let telemetry = 0;
    const startedAt = Date.now();
    for (const s of sats) {
      const c = s.client!;
      const hb = () => {
        heartbeats++;
        c.publish(
          topicOf(s.tenantId, s.id, 'heartbeat'),
          JSON.stringify({
            uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
            state: 'recording',
            version: 'bench',
            noiseFloorRms: 0.01,
          }),
          { qos: 1 },
        );
      };
      const tm = () => {
        telemetry++;
        c.publish(
          topicOf(s.tenantId, s.id, 'telemetry'),
          JSON.stringify({ batteryLevel: 80, storageFreeBytes: 1e10, cpuTemp: 45, uptimeSeconds: 100 }),
          { qos: 1 },
        );
      };
      s.timers.push(
        setTimeout(() => {
          hb();
          s.timers.push(setInterval(hb, HEARTBEAT_MS));
        }, Math.random() * HEARTBEAT_MS),
        setTimeout(() => {
          tm();
          s.timers.push(setInterval(tm, TELEMETRY_MS));
        }, Math.random() * TELEMETRY_MS),
      );
    }
    const q0 = usage(pids);
    const hb0 = heartbeats;
    const tm0 = telemetry;
    await new Promise((r) => setTimeout(r, PHASE_S * 1000));
    const q1 = usage(pids);
    const hbN = heartbeats - hb0;
    const tmN = telemetry - tm0;
    const quietCpu = q1.hub!.cpu - q0.hub!.cpu;
    console.log(
      `quiet phase ${PHASE_S} s: ${hbN} heartbeats (${(hbN / PHASE_S).toFixed(1)}/s), ${tmN} telemetry; hub CPU ${quietCpu.toFixed(2)} s ` +
        `(${((quietCpu / PHASE_S) * 100).toFixed(1)} % of a core, ${((quietCpu * 1000) / Math.max(1, hbN + tmN)).toFixed(2)} ms per message)` +
        (q1.mosquitto ? `; Mosquitto CPU ${(q1.mosquitto.cpu - q0.mosquitto!.cpu).toFixed(2)} s` : ''),
    );

    // ---- busy phase: the uploaders send a chunk every 3 s and wait for its ack
    const latencies: number[] = [];
    let sent = 0;
    let lost = 0;
    const uploaders = sats.slice(0, UPLOADERS);
    const stopAt = Date.now() + PHASE_S * 1000;
    const b0 = usage(pids);
    await Promise.all(
      uploaders.map(async (s, i) => {
        const c = s.client!;
        const pending = new Map<string, { t: number; done: () => void }>();
        c.on('message', (topic, payload) => {
          if (!topic.endsWith('/ack')) return;
          const a = JSON.parse(payload.toString()) as { chunkId: string };
          const p = pending.get(a.chunkId);
          if (!p) return;
          pending.delete(a.chunkId);
          latencies.push(performance.now() - p.t);
          p.done();
        });
        await new Promise((r) => setTimeout(r, (i / uploaders.length) * CHUNK_DURATION_MS));
        for (let seq = 0; Date.now() < stopAt; seq++) {
          const due = Date.now() + CHUNK_DURATION_MS;
          const { chunkId, payload } = chunkBody(s, seq);
          sent++;
          const acked = new Promise<boolean>((resolve) => {
            pending.set(chunkId, { t: performance.now(), done: () => resolve(true) });
            setTimeout(() => resolve(false), 30_000);
          });
          c.publish(topicOf(s.tenantId, s.id, 'audio'), payload, { qos: 1 });
          if (!(await acked)) lost++;
          const wait = due - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      }),
    );
    const b1 = usage(pids);
    const busyCpu = b1.hub!.cpu - b0.hub!.cpu;
    const seconds = PHASE_S;
    console.log(
      `busy phase ${seconds} s: ${uploaders.length} uploaders, ${latencies.length} chunks acked (${(latencies.length / seconds).toFixed(1)}/s), ` +
        `${lost} without an ack in 30 s; ack p50 ${pct(latencies, 0.5).toFixed(0)} ms, p99 ${pct(latencies, 0.99).toFixed(0)} ms; ` +
        `hub CPU ${busyCpu.toFixed(2)} s (${((busyCpu / seconds) * 100).toFixed(1)} % of a core), RSS ${b1.hub!.rssMb.toFixed(0)} MB (peak ${b1.hub!.hwmMb.toFixed(0)})` +
        (b1.mosquitto
          ? `; Mosquitto CPU ${(b1.mosquitto.cpu - b0.mosquitto!.cpu).toFixed(2)} s, RSS ${b1.mosquitto.rssMb.toFixed(0)} MB`
          : ''),
    );
    console.log(
      JSON.stringify({
        bench: 'fleet',
        broker: mosq ? 'mosquitto' : 'embedded',
        satellites: N,
        uploaders: uploaders.length,
        storm: { lastConnackMs: Math.round(Math.max(...connack)), lastSubackMs: Math.round(stormMs) },
        rss: { before: before.hub!.rssMb, afterStorm: afterStorm.hub!.rssMb, end: b1.hub!.rssMb },
        quiet: { heartbeats: hbN, telemetry: tmN, hubCpuS: quietCpu },
        busy: { sent, acked: latencies.length, lost, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), hubCpuS: busyCpu },
      }),
    );
  } finally {
    for (const s of sats) {
      for (const t of s.timers) clearTimeout(t);
      s.client?.end(true);
    }
    await hub.stop();
    await mosq?.stop();
  }
}
