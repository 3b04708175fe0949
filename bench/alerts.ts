/**
 * Figures for issue 17 ("Figures to reach"), `npm run bench -- alerts`:
 *
 * 1. Rule evaluation cost per detection: 100 teams × 10 rules of every kind (system rules,
 *    species lists, confidence floors, satellites, categories), the engine's in-memory match of
 *    one announced detection against its team's cached rules (src/modules/alerts/conditions.ts),
 *    timed one detection at a time. Target p99 < 1 ms.
 * 2. Detection ack → webhook received: a hub in its own process (PostgreSQL + Redis when
 *    DATABASE_URL and REDIS_URL are set) with 100 teams × 10 rules; BENCH_SATELLITES satellites
 *    in as many teams publish soundscape chunks at BENCH_RATE chunks/s in all; each team has one
 *    rule matching every detection, delivering to a local receiver through a signed webhook.
 *    A chunk's ack time is matched to its webhook through the MQTT detection message (detection
 *    id → chunk id) and the webhook body's detectionId. Target p99 < 2 s on PostgreSQL + Redis.
 *
 * BENCH_SATELLITES (8), BENCH_RATE (40 chunks/s), BENCH_SECONDS (20), BENCH_DETECTIONS (200 000).
 */
import http from 'node:http';
import crypto from 'node:crypto';
import os from 'node:os';
import mqtt, { type MqttClient } from 'mqtt';
import { adminAuth, api, startHubProcess } from './hub-process.ts';
import { matchesDetection, type DetectionFacts } from '../src/modules/alerts/conditions.ts';
import type { RuleRow } from '../src/modules/alerts/repo.ts';
import type { RuleConditions } from '../src/modules/alerts/schemas.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { renderChunk, SPECIES } from '../src/satellite/soundscape.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';

const TEAMS = 100;
const RULES = 10;
const SATELLITES = Number(process.env.BENCH_SATELLITES ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 40);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const DETECTIONS = Number(process.env.BENCH_DETECTIONS ?? 200_000);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
const codes = speciesCatalog()
  .all()
  .slice(0, 3000)
  .map((s) => s.code);
const pick = <T>(xs: readonly T[], i: number) => xs[i % xs.length]!;

/** Ten rules of a team: the mix a birding team would keep. */
function teamRules(t: number, satellites: string[]): RuleRow[] {
  const conditions: RuleConditions[] = [
    { system: 'rare_species' },
    { system: 'first_of_day' },
    { system: 'first_of_season' },
    { species: Array.from({ length: 20 }, (_, i) => pick(codes, t * 31 + i * 7)), minConfidence: 0.7 },
    { species: [pick(codes, t)], satelliteIds: [satellites[0]!] },
    { minConfidence: 0.95, categories: ['bird'] },
    { rareOnly: true, satelliteIds: satellites },
    { species: Array.from({ length: 200 }, (_, i) => pick(codes, t + i * 13)) },
    { firstOfSeason: true, minConfidence: 0.5, confidenceKind: 'calibrated' },
    { verifiedOnly: true, species: [pick(codes, t + 5)] },
  ];
  const at = new Date();
  return conditions.slice(0, RULES).map((c, i) => ({
    id: crypto.randomUUID(),
    tenantId: `team-${t}`,
    name: `rule ${i}`,
    type: 'detection',
    enabled: true,
    conditions: c,
    channelIds: [],
    cooldownMinutes: 10,
    cooldownScope: 'species',
    quietHours: null,
    createdAt: at,
    updatedAt: at,
  }));
}

function evaluationCost() {
  const teams = Array.from({ length: TEAMS }, (_, t) => {
    const satellites = Array.from({ length: 5 }, () => crypto.randomUUID());
    return { satellites, rules: teamRules(t, satellites) };
  });
  const cache = new Map(teams.map((x, t) => [`team-${t}`, x.rules]));
  const times: number[] = [];
  let matched = 0;
  for (let i = 0; i < DETECTIONS; i++) {
    const t = i % TEAMS;
    const d: DetectionFacts = {
      id: `d${i}`,
      tenantId: `team-${t}`,
      satelliteId: pick(teams[t]!.satellites, i),
      satelliteName: 'Garden',
      speciesCode: pick(codes, i * 17),
      scientificName: 'Troglodytes troglodytes',
      commonName: 'Eurasian Wren',
      category: 'bird',
      modelId: 'builtin',
      confidence: (i % 100) / 100,
      isRare: i % 97 === 0,
      isFirstOfDay: i % 11 === 0,
      isFirstOfSeason: i % 53 === 0,
      detectedAt: new Date().toISOString(),
    };
    const start = process.hrtime.bigint();
    const rules = cache.get(d.tenantId)!;
    for (const r of rules) if (matchesDetection(r, d, 'announced', () => d.confidence * 0.9)) matched++;
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`\n1. rule evaluation: ${TEAMS} teams × ${RULES} rules, ${DETECTIONS} detections (${matched} rule matches)`);
  console.log(
    `   per detection: p50 ${(pct(times, 0.5) * 1000).toFixed(1)} µs, p99 ${(pct(times, 0.99) * 1000).toFixed(1)} µs, max ${times.at(-1)!.toFixed(2)} ms (target p99 < 1 ms)`,
  );
}

async function endToEnd() {
  const webhookAt = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      if (body.data?.detectionId) webhookAt.set(body.data.detectionId, performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const hub = await startHubProcess({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  const clients: MqttClient[] = [];
  try {
    const auth = await adminAuth(hub);
    const lanes: Array<{ tenantId: string; satelliteId: string; client: MqttClient }> = [];
    const ackAt = new Map<string, number>();
    const chunkOf = new Map<string, string>();
    for (let t = 0; t < TEAMS; t++) {
      const team = await api(`${hub.url}/api/auth/create-tenant`, { headers: auth, body: { name: `Alerts bench ${t}` } });
      const ch = await api(`${hub.url}/api/alert-rules/channels`, {
        headers: auth,
        body: { tenantId: team.id, type: 'webhook', name: 'bench', config: { url: hookUrl, secret: 'bench-secret' } },
      });
      const rules = teamRules(t, []).map((r) => r.conditions);
      rules[4] = { species: [codes[t]!] };
      rules[6] = { rareOnly: true };
      rules[0] = { minConfidence: 0.01 }; // matches every detection: the one that delivers
      for (const [i, conditions] of rules.entries()) {
        await api(`${hub.url}/api/alert-rules/rules`, {
          headers: auth,
          body: { tenantId: team.id, name: `r${i}`, type: 'detection', conditions, channelIds: i === 0 ? [ch.id] : [] },
        });
      }
      if (t >= SATELLITES) continue;
      const sat = await api(`${hub.url}/api/satellites`, { headers: auth, body: { tenantId: team.id, name: `bench ${t}` } });
      const client = await mqtt.connectAsync(sat.mqtt.brokerUrl, {
        clientId: `satellite-${sat.id}`,
        username: sat.mqtt.username,
        password: sat.mqtt.password,
        protocolVersion: 4,
      });
      clients.push(client);
      client.on('message', (topic, payload) => {
        const m = JSON.parse(payload.toString());
        if (topic.endsWith('/ack') && m.status === 'stored') ackAt.set(m.chunkId, performance.now());
        if (topic.endsWith('/detection')) chunkOf.set(m.id, m.audioChunkId);
      });
      await client.subscribeAsync(`chorus/${team.id}/${sat.id}/+`, { qos: 1 });
      lanes.push({ tenantId: team.id, satelliteId: sat.id, client });
    }
    const audio = SPECIES.map((s, i) => makeWav(renderChunk({ species: [s.label], seed: 100 + i })).toString('base64'));
    // Far apart in time: no two chunks of a satellite stitch into one call (which would announce once).
    const base = Date.now() - 90 * 24 * 3600_000;
    const total = Math.round(RATE * SECONDS);
    const started = performance.now();
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const lane = lanes[i % lanes.length]!;
      const body = {
        chunkId: crypto.randomUUID(),
        satelliteId: lane.satelliteId,
        tenantId: lane.tenantId,
        recordedAt: new Date(base + i * 3600_000).toISOString(),
        durationMs: 3000,
        sampleRate: 48000,
        audio: pick(audio, i),
      };
      lane.client.publish(`chorus/${lane.tenantId}/${lane.satelliteId}/audio`, JSON.stringify(body), { qos: 1 });
    }
    const deadline = performance.now() + 30_000;
    while (ackAt.size < total || webhookAt.size < chunkOf.size || chunkOf.size < total * 0.9) {
      if (performance.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const latencies: number[] = [];
    for (const [detectionId, at] of webhookAt) {
      const chunkId = chunkOf.get(detectionId);
      const acked = chunkId ? ackAt.get(chunkId) : undefined;
      if (acked !== undefined) latencies.push(at - acked);
    }
    latencies.sort((a, b) => a - b);
    const parts = process.env.DATABASE_URL
      ? `PostgreSQL${process.env.REDIS_URL ? ' + Redis' : ''}`
      : 'embedded parts (PGlite, in-memory queue and bus)';
    console.log(
      `\n2. detection ack → webhook received — ${parts}; ${TEAMS} teams × ${RULES} rules; ${lanes.length} satellites, ${RATE} chunks/s for ${SECONDS} s`,
    );
    console.log(
      `   chunks ${total}, acked ${ackAt.size}, detections announced ${chunkOf.size}, webhooks ${webhookAt.size}, matched ${latencies.length}`,
    );
    console.log(
      `   latency: p50 ${pct(latencies, 0.5).toFixed(0)} ms, p99 ${pct(latencies, 0.99).toFixed(0)} ms, max ${(latencies.at(-1) ?? NaN).toFixed(0)} ms (target p99 < 2 s)`,
    );
  } finally {
    await Promise.allSettled(clients.map((c) => c.endAsync()));
    await hub.stop();
    await new Promise((r) => receiver.close(r));
  }
}

export async function run() {
  console.log(
    `alerts bench — ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  evaluationCost();
  await endToEnd();
}
