/**
 * The reference satellite against a real hub (issue 4 "Tests that must exist": Outbox): real
 * registration over HTTP, the hub's embedded broker, the hub's ingester storing and acking.
 * The link is cut with a TCP proxy the test controls, so the satellite sees what a dropped
 * network looks like (the socket dies, reconnects are refused) while it goes on recording.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../src/core/clock.ts';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { Outbox, type Eviction, type OutboxCaps, MB } from '../src/satellite/outbox.ts';
import { Satellite, type SatelliteOptions } from '../src/satellite/client.ts';
import { registerSatellite, type SavedCredentials } from '../src/satellite/cli.ts';
import { syntheticSource } from '../src/satellite/sources.ts';
import { CHUNK_SAMPLES, CHUNK_WAV_BYTES, decodeWav, makeWav } from '../src/protocol/wav.ts';
import { chunkPlan } from '../src/satellite/soundscape.ts';
import { topicOf } from '../src/protocol/topics.ts';
import { HUB_VERSION } from '../src/modules/system/version.ts';
import { waitFor } from './helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '..');

/** `p`, or a failure naming what did not happen within `timeoutMs`: no wait here can hang the file. */
async function within<T>(p: Promise<T>, what: string, timeoutMs = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The next `event` of `emitter` (its first argument), bounded; call it before what causes the event. */
function next<T = unknown>(
  emitter: NodeJS.EventEmitter,
  event: string,
  what: string,
  timeoutMs = 15_000,
  accept: (arg: T) => boolean = () => true,
): Promise<T> {
  let listener!: (arg: T) => void;
  const seen = new Promise<T>((resolve) => {
    listener = (arg: T) => {
      if (!accept(arg)) return;
      emitter.off(event, listener);
      resolve(arg);
    };
    emitter.on(event, listener);
  });
  return within(seen, what, timeoutMs).finally(() => emitter.off(event, listener));
}

/**
 * A TCP proxy in front of the broker that can drop every connection and refuse new ones; it counts
 * the connections it refused (the satellite's reconnect attempts while the link is down).
 */
async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let paused = false;
  let refused = 0;
  /** Refusals left before the link comes back by itself (pause({ refuse })). */
  let refuseLeft = Infinity;
  const server = net.createServer((inbound) => {
    if (paused) {
      refused++;
      if (--refuseLeft === 0) paused = false;
      return inbound.destroy();
    }
    const upstream = net.connect(target.port, target.host);
    sockets.add(inbound);
    sockets.add(upstream);
    const end = () => {
      inbound.destroy();
      upstream.destroy();
      sockets.delete(inbound);
      sockets.delete(upstream);
    };
    for (const s of [inbound, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
    inbound.pipe(upstream);
    upstream.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    get refused() {
      return refused;
    },
    /** Drops the link; with `refuse`, it comes back after refusing that many connections. */
    pause(opts: { refuse?: number } = {}) {
      paused = true;
      refuseLeft = opts.refuse ?? Infinity;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    resume() {
      paused = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        paused = true;
        refuseLeft = Infinity;
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('reference satellite against a real hub', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  const dirs: string[] = [];
  const running: Satellite[] = [];
  const proxies: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
  });
  // Every part is closed even when another one fails or hangs, so a stuck test cannot keep the file alive.
  after(async () => {
    const problems: unknown[] = [];
    const step = (what: string, fn: () => Promise<unknown>, ms = 10_000) => within(fn(), what, ms).catch((err) => problems.push(err));
    for (const s of running) await step(`stopping satellite ${s.id}`, () => s.stop());
    for (const p of proxies) await step('closing a proxy', () => p.close());
    if (hub) await step('closing the hub', () => hub.close(), 30_000);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    if (problems.length) throw new AggregateError(problems, 'teardown did not finish cleanly');
  });

  function tmp(): string {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-sat-e2e-'));
    dirs.push(d);
    return d;
  }

  const register = (name = `Ref ${crypto.randomBytes(3).toString('hex')}`) =>
    registerSatellite({ hub: hub.url, token: owner.token, tenantId: team.id, name, deviceId: `test-${crypto.randomUUID()}` });

  /** A started satellite that records only when the test says (record()), unless chunkIntervalMs is given. */
  async function startSatellite(o: Partial<SatelliteOptions> & { creds?: SavedCredentials; dir?: string; caps?: OutboxCaps } = {}) {
    const creds = o.creds ?? (await register());
    const dir = o.dir ?? tmp();
    const outbox = o.outbox ?? (await Outbox.open(path.join(dir, 'outbox')));
    const sat = new Satellite({
      credentials: creds,
      source: syntheticSource({ seed: 7, silenceProbability: 0 }),
      outbox,
      dataDir: dir,
      chunkIntervalMs: 0,
      reconnectMs: 50,
      maxReconnectMs: 200,
      heartbeatIntervalMs: 60_000,
      ...o,
    });
    running.push(sat);
    const connected = next(sat, 'connected', 'the satellite to connect');
    await sat.start();
    await connected;
    return { sat, creds, dir, outbox };
  }

  /** Counts acks per chunk and the order chunks were sent in. */
  function watch(sat: Satellite) {
    const acks = new Map<string, number>();
    const sent: string[] = [];
    const evicted: Eviction[] = [];
    sat.on('ack', (b: { chunkId: string }) => acks.set(b.chunkId, (acks.get(b.chunkId) ?? 0) + 1));
    sat.on('sent', (r: { chunkId: string }) => sent.push(r.chunkId));
    sat.on('evicted', (e: Eviction[]) => evicted.push(...e));
    return { acks, sent, evicted };
  }

  async function chunkRows(satelliteId: string) {
    return hub.sql.query<{ id: string; recorded_at: Date; received_at: Date; bytes: number }>(
      'SELECT id, recorded_at, received_at, bytes FROM chunks WHERE satellite_id = $1 ORDER BY received_at, recorded_at',
      [satelliteId],
    );
  }

  /** The hub stored them oldest-first: arrival order is recording order. */
  function assertOldestFirst(rows: Array<{ recorded_at: Date; received_at: Date }>) {
    const byRecorded = [...rows].sort((a, b) => +a.recorded_at - +b.recorded_at);
    assert.deepEqual(rows, byRecorded, 'received in recording order');
  }

  async function recordN(sat: Satellite, n: number): Promise<string[]> {
    const ids: string[] = [];
    const onRecorded = (r: { chunkId: string }) => ids.push(r.chunkId);
    sat.on('recorded', onRecorded);
    for (let i = 0; i < n; i++) assert.equal(await sat.record(), 'recorded');
    sat.off('recorded', onRecorded);
    return ids;
  }

  test('uploads synthetic chunks: each acked stored exactly once, silent ones gated, config and heartbeat reach the hub', async () => {
    const dir = tmp();
    const outbox = await Outbox.open(path.join(dir, 'outbox'));
    const creds = await register();
    const sat = new Satellite({
      credentials: creds,
      source: syntheticSource({ seed: 8, limit: 10 }),
      outbox,
      dataDir: dir,
      chunkIntervalMs: 10,
      reconnectMs: 50,
      heartbeatIntervalMs: 60_000,
    });
    running.push(sat);
    const w = watch(sat);
    const config = next<any>(sat, 'config', 'the config push answering the config request');
    await sat.start();
    assert.equal((await config).heartbeatIntervalSec, 30, 'the config request was answered with the effective config');
    await waitFor(
      'every recorded chunk acked',
      () => sat.sourceEnded && outbox.pending().length === 0 && sat.ackedCount === outbox.list().length,
    );

    const recorded = outbox.list();
    const stats = sat.filterStats;
    assert.equal(stats.totalProcessed, 10);
    const silent = Array.from({ length: 10 }, (_, i) => chunkPlan(8, i)).filter((p) => p.silent).length;
    assert.ok(silent >= 1, 'seed 8 has a silent chunk among its first ten');
    assert.equal(stats.rejectedSilence, silent, 'silent chunks stopped at the gate');
    assert.equal(recorded.length, stats.totalSent);
    assert.equal(sat.ackedCount, recorded.length);
    assert.ok(recorded.every((r) => r.status === 'acked'));
    for (const r of recorded) assert.equal(w.acks.get(r.chunkId), 1, `chunk ${r.chunkId} acked once`);
    assert.deepEqual(
      w.sent,
      recorded.map((r) => r.chunkId),
      'each sent once, oldest first',
    );

    const rows = await chunkRows(creds.satelliteId);
    assert.equal(rows.length, recorded.length);
    assert.deepEqual(rows.map((r) => r.id).sort(), recorded.map((r) => r.chunkId).sort());
    assertOldestFirst(rows);
    assert.ok(rows.every((r) => r.bytes === CHUNK_WAV_BYTES));

    // The stored audio is the chunk the outbox holds, byte for byte.
    const audio = await fetch(`${hub.url}/api/audio/${recorded[0].chunkId}`, { headers: { authorization: `Bearer ${owner.token}` } });
    assert.equal(audio.status, 200);
    const body = Buffer.from(await audio.arrayBuffer());
    assert.equal(Buffer.compare(body, (await outbox.readAudio(recorded[0].chunkId))!), 0);
    assert.equal(decodeWav(body, { expect48kMono: true }).samples.length, 144_000);

    // A heartbeat carries the counters and the outbox figures.
    let off = () => {};
    const handled = within(
      new Promise<void>((resolve) => {
        off = hub.runtime.ingester!.onHandled((m) => {
          if (m.channel === 'heartbeat' && m.satelliteId === creds.satelliteId) resolve();
        });
      }),
      'the hub to handle the heartbeat',
    ).finally(() => off());
    assert.equal(await sat.heartbeat(), true);
    await handled;
    const detail = (await api.get(`/satellites/${creds.satelliteId}`, owner)).body;
    assert.equal(detail.online, true);
    assert.equal(detail.version, HUB_VERSION);
    assert.equal(detail.stream, 'satellite');
    assert.equal(detail.state, 'paused', 'a source that ran out reports paused');
    assert.equal(detail.filterStats.rejectedSilence, stats.rejectedSilence);
    assert.equal(detail.outboxStats.rowCount, recorded.length);
    assert.equal(detail.outboxStats.unackedCount, 0);
    assert.equal(detail.outboxStats.ackedBytes, recorded.length * CHUNK_WAV_BYTES);
    const telemetry = await hub.sql.query<{ storage_free_bytes: string }>(
      'SELECT storage_free_bytes FROM telemetry WHERE satellite_id = $1',
      [creds.satelliteId],
    );
    assert.ok(telemetry.length >= 1 && Number(telemetry[0].storage_free_bytes) > 0, 'telemetry sent on connect');
  });

  test('the link drops while recording: chunks wait in the outbox; on reconnect each arrives exactly once, oldest first', async () => {
    const proxy = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(hub.infra.broker.brokerUrl).port) });
    proxies.push(proxy);
    const { sat, creds, outbox } = await startSatellite({ url: proxy.url });
    const w = watch(sat);
    let configRequests = 0;
    sat.on('config', () => configRequests++);

    const online = await recordN(sat, 2);
    await waitFor('the first two acks', () => sat.ackedCount === 2);

    const down = next(sat, 'disconnected', 'the satellite to notice the link is down');
    proxy.pause();
    await down;
    const offline = await recordN(sat, 5);
    assert.deepEqual(
      outbox.pending().map((r) => r.chunkId),
      offline,
      'recorded while offline, waiting oldest-first',
    );
    // The satellite keeps trying: two of its reconnect attempts refused, and it is still offline.
    const refusedBefore = proxy.refused;
    await waitFor('two refused reconnect attempts', () => proxy.refused >= refusedBefore + 2);
    assert.equal(sat.connected, false);
    assert.equal((await chunkRows(creds.satelliteId)).length, 2, 'nothing reached the hub while the link was down');

    // Drop the link once more with a chunk in flight: it is sent again and still stored once.
    let dropped = false;
    sat.on('sent', (r: { chunkId: string }) => {
      if (!dropped && r.chunkId === offline[1]) {
        dropped = true;
        // Down until the satellite's first reconnect attempt is refused.
        proxy.pause({ refuse: 1 });
      }
    });
    const reconnected = next(sat, 'connected', 'the reconnect once the link is back');
    proxy.resume();
    await reconnected;
    // ackedCount counts an ack as it arrives; the row is marked acked once that is on disk.
    await waitFor(
      'all seven chunks acked and marked so in the outbox',
      () => sat.ackedCount === 7 && outbox.list().every((r) => r.status === 'acked'),
    );
    assert.ok(dropped);
    assert.ok(configRequests >= 2, 'config requested again on reconnect');

    const rows = await chunkRows(creds.satelliteId);
    assert.equal(rows.length, 7, 'every chunk stored exactly once');
    assert.deepEqual(new Set(rows.map((r) => r.id)), new Set([...online, ...offline]));
    assertOldestFirst(rows);
    // Send order: each chunk goes in recording order; only the one cut off in flight went twice.
    const firstSends = w.sent.filter((id, i) => w.sent.indexOf(id) === i);
    assert.deepEqual(firstSends, [...online, ...offline]);
    assert.ok(w.sent.filter((id) => id !== offline[1]).length === 6, 'no other chunk was sent twice');
    assert.ok(outbox.list().every((r) => r.status === 'acked'));
    assert.ok(w.evicted.length === 0);
  });

  test('caps while offline: the soft cap evicts acked copies first, a tiny hard cap drops the oldest unsent chunks', async () => {
    const proxy = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(hub.infra.broker.brokerUrl).port) });
    proxies.push(proxy);
    // A device with little storage: its own limits are below the pushed ones (hard cap ≥ 32 MB at the hub).
    const { sat, creds, outbox } = await startSatellite({
      url: proxy.url,
      localCaps: { softBytes: 2 * CHUNK_WAV_BYTES, hardBytes: 4 * CHUNK_WAV_BYTES },
    });
    const w = watch(sat);
    const online = await recordN(sat, 2);
    await waitFor('two acks', () => sat.ackedCount === 2);
    assert.equal(outbox.list().length, 2, 'acked rows stay as local copies up to the soft cap');

    const down = next(sat, 'disconnected', 'the satellite to notice the link is down');
    proxy.pause();
    await down;
    const offline = await recordN(sat, 6);
    assert.deepEqual(
      w.evicted.map((e) => [e.chunkId, e.reason, e.status]),
      [
        [online[0], 'soft_cap', 'acked'],
        [online[1], 'soft_cap', 'acked'],
        [offline[0], 'hard_cap', 'unacked'],
        [offline[1], 'hard_cap', 'unacked'],
      ],
    );
    assert.deepEqual(
      outbox.pending().map((r) => r.chunkId),
      offline.slice(2),
      'the newest four wait',
    );
    const stats = await outbox.stats();
    assert.ok(stats.totalBytes <= 4 * CHUNK_WAV_BYTES && stats.diskBytes === stats.totalBytes);

    proxy.resume();
    await waitFor('the four survivors acked', () => sat.ackedCount === 6 && outbox.pending().length === 0);
    await within(outbox.flush(), 'the outbox applying its caps after the last ack');
    const rows = await chunkRows(creds.satelliteId);
    assert.deepEqual(
      rows.map((r) => r.id),
      [...online, ...offline.slice(2)],
      'the dropped two never arrive; the rest in order',
    );
    assertOldestFirst(rows);
    assert.ok(outbox.list().length <= 2, 'back under the soft cap once acked');
    assert.ok(MB > 0);
  });

  test('the outbox survives a restart: chunks recorded before a stop are uploaded by the next run', async () => {
    const proxy = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(hub.infra.broker.brokerUrl).port) });
    proxies.push(proxy);
    const first = await startSatellite({ url: proxy.url });
    proxy.pause();
    await waitFor('the disconnect', () => !first.sat.connected);
    const ids = await recordN(first.sat, 3);
    await first.sat.stop();
    assert.equal((await chunkRows(first.creds.satelliteId)).length, 0);

    const outbox = await Outbox.open(path.join(first.dir, 'outbox'));
    assert.deepEqual(
      outbox.pending().map((r) => r.chunkId),
      ids,
    );
    const second = await startSatellite({ creds: first.creds, dir: first.dir, outbox });
    await waitFor('the earlier chunks acked', () => second.sat.ackedCount === 3);
    const rows = await chunkRows(first.creds.satelliteId);
    assert.deepEqual(
      rows.map((r) => r.id),
      ids,
    );
  });

  test('the object store is down for minutes: the satellite backs off (doubling to its cap), offers the oldest chunk alone, gives up on none, and drains once chunks are stored again', async () => {
    const clock = new ManualClock();
    const dir = tmp();
    const { sat, creds, outbox } = await startSatellite({
      clock,
      dir,
      // The outbox tells the oldest chunk's age by the same clock as the satellite.
      outbox: await Outbox.open(path.join(dir, 'outbox'), { now: () => clock.now() }),
      retryBaseMs: 1000,
      retryMaxMs: 4000,
      random: () => 1,
      maxErrorRetries: 2,
    });
    // The satellite's timers move only with advance() from here.
    clock.freeze(clock.now());
    // A real outage of the hub's object store: a file where its folder should be, so every write fails.
    const objects = path.join(hub.infra.config.dataDir, 'objects');
    const away = `${objects}.away`;
    const hadObjects = fs.existsSync(objects);
    if (hadObjects) fs.renameSync(objects, away);
    fs.writeFileSync(objects, 'not a folder: the object store is down');
    const restore = () => {
      if (fs.existsSync(objects) && !fs.statSync(objects).isDirectory()) fs.rmSync(objects);
      if (hadObjects && fs.existsSync(away)) fs.renameSync(away, objects);
    };
    const sent: string[] = [];
    sat.on('sent', (row: { chunkId: string }) => sent.push(row.chunkId));
    const refusals: Array<{ chunkId: string; error: string; delayMs: number }> = [];
    sat.on('backoff', (b) => refusals.push(b));
    const errorAcks: string[] = [];
    sat.on('ack-error', (chunkId: string) => errorAcks.push(chunkId));
    try {
      const firstRefusal = next(sat, 'backoff', 'the first "send again later"');
      for (let i = 0; i < 3; i++) assert.equal(await sat.record(), 'recorded');
      await firstRefusal;
      const [oldest, second, third] = outbox.pending().map((r) => r.chunkId);
      assert.match(refusals[0].error, /storage unavailable, send again later/);
      assert.deepEqual(sent, [oldest], 'one chunk went out; the others wait while the hub cannot store');

      // Each wait doubles up to the cap (random 1: no jitter off the top), and each time the oldest goes alone.
      let wait = 1000;
      for (const expected of [2000, 4000, 4000, 4000]) {
        const refused = next<{ delayMs: number }>(sat, 'backoff', `the refusal after waiting ${wait} ms`);
        clock.advance(wait - 1);
        assert.equal(sent.length, refusals.length, 'nothing goes out before the wait is over');
        clock.advance(1);
        assert.equal((await refused).delayMs, expected);
        wait = expected;
      }
      assert.deepEqual(sent, Array(5).fill(oldest), 'only the oldest chunk was offered, once per wait');
      assert.deepEqual(errorAcks, [], 'a passing refusal is not an error of the chunk');
      for (const r of outbox.list()) {
        assert.equal(r.status, 'unacked', 'kept to send, past maxErrorRetries (2) refusals');
        assert.equal(r.errorCount, 0);
      }

      // The heartbeat says since when the satellite waits and when it tries next; the hub keeps it.
      assert.equal(await sat.heartbeat(), true);
      const reported = await waitFor('the heartbeat at the hub', async () => {
        const stats = (await api.get(`/satellites/${creds.satelliteId}`, owner)).body?.outboxStats;
        return stats?.backoffSeconds > 0 && stats;
      });
      assert.equal(reported.backoffSeconds, 11, '1 + 2 + 4 + 4 s since the first refusal');
      assert.equal(reported.retryInSeconds, 4);
      assert.equal(reported.unackedCount, 3);
      assert.equal(reported.refusedCount, 0);
      assert.ok(
        reported.oldestUnsentAgeSeconds >= 11,
        `the oldest chunk waits since before the first refusal: ${JSON.stringify(reported)}`,
      );

      // The store is back: the next offer is stored, then the rest follow at once, oldest first.
      restore();
      const resumed = next(sat, 'resumed', 'the hub taking chunks again');
      clock.advance(wait);
      assert.ok(((await resumed) as { waitedMs: number }).waitedMs >= 15_000);
      await waitFor('every chunk stored', () => outbox.list().every((r) => r.status === 'acked'));
      assert.deepEqual(sent.slice(5), [oldest, second, third]);
      const rows = await hub.sql.query<{ id: string }>('SELECT id FROM chunks WHERE satellite_id = $1 ORDER BY recorded_at', [
        creds.satelliteId,
      ]);
      assert.deepEqual(
        rows.map((r) => r.id),
        [oldest, second, third],
        'each chunk stored once',
      );
      assert.equal(sat.ackedCount, 3);
    } finally {
      restore();
    }
  });

  test('config pushes apply at once; log requests are answered from the journal; update is logged', async () => {
    const { sat, creds } = await startSatellite();
    await waitFor('the first config push', () => sat.config.filterMinRms === 0.003);
    const pushed = next<any>(sat, 'config', 'the pushed config with the filter off', 15_000, (c) => c.filterEnabled === false);
    const res = await api.patch(
      `/settings/effective?satelliteId=${creds.satelliteId}`,
      { values: { filter_enabled: false, filter_min_rms: 0.05, heartbeat_interval_sec: 45 } },
      owner,
    );
    assert.equal(res.status, 200, res.text);
    const c = await pushed;
    assert.equal(c.heartbeatIntervalSec, 45);
    assert.deepEqual(sat.gate.settings, { filterEnabled: false, filterMinRms: 0.05 });
    assert.equal(
      JSON.parse(fs.readFileSync(path.join(sat['o'].dataDir!, 'config.json'), 'utf8')).filterMinRms,
      0.05,
      'kept for the next start',
    );

    const asked = await api.post(`/satellites/${creds.satelliteId}/logs/request`, { tail: 3 }, owner);
    assert.equal(asked.status, 202, asked.text);
    let logs: any = null;
    await waitFor('the log response', async () => {
      logs = (await api.get(`/satellites/${creds.satelliteId}/logs`, owner)).body?.logs;
      return Array.isArray(logs?.lines) && logs.lines.length > 0;
    });
    assert.equal(logs.lines.length, 3);
    assert.match(logs.lines[2], /log request .*: sending the last 3 lines/, 'the journal up to the request itself');

    const updated = next(sat, 'update', 'the update request');
    assert.equal((await api.post(`/satellites/${creds.satelliteId}/update`, undefined, owner)).status, 200);
    assert.equal(await updated, HUB_VERSION);
    assert.ok(sat.journal.tail(5).some((l) => l.includes(`update requested: target version ${HUB_VERSION}`)));
  });

  test('over WebSocket: live-start streams live-audio (QoS 0, base64 WAV) until live-stop, or until the keepalive lapses', async () => {
    const creds = await register();
    assert.match(creds.wsUrl ?? '', /^ws:\/\/.*\/mqtt$/, 'registration tells the WebSocket address');
    const clock = new ManualClock();
    const { sat } = await startSatellite({ creds, transport: 'ws', liveIntervalMs: 100, liveTimeoutMs: 1000, clock });
    assert.match(sat.url, /^ws:/);
    const relayed: Array<{ sessionId: string | null; audio: string }> = [];
    const off = hub.infra.bus.subscribe('satellite.live_audio', (e) => {
      if (e.satelliteId === creds.satelliteId) relayed.push(e);
    });
    try {
      const topic = (ch: string) => topicOf(creds.tenantId, creds.satelliteId, ch);
      await hub.infra.broker.publish(topic('live-start'), JSON.stringify({ sessionId: 's-1' }), { qos: 1 });
      await waitFor('live audio at the hub', () => relayed.length >= 3);
      assert.equal(relayed[0].sessionId, 's-1');
      assert.equal(decodeWav(Buffer.from(relayed[0].audio, 'base64'), { expect48kMono: true }).samples.length, 144_000);
      const stopped = next(sat, 'live-stop', 'live-stop from the hub');
      await hub.infra.broker.publish(topic('live-stop'), JSON.stringify({ sessionId: 's-1' }), { qos: 1 });
      assert.equal(await stopped, 'live-stop from the hub');
      assert.equal(sat.liveSession, undefined);

      // Without a keepalive the session ends by itself; a re-sent live-start keeps it going.
      // The satellite's clock stands still from here: only advance() moves its timers.
      clock.freeze(clock.now());
      const secondStarted = next(sat, 'live-start', 'the second session');
      await hub.infra.broker.publish(topic('live-start'), JSON.stringify({ sessionId: 's-2' }), { qos: 1 });
      assert.equal(await secondStarted, 's-2');
      clock.advance(600);
      const keptAlive = next(sat, 'live-keepalive', 'the keepalive');
      await hub.infra.broker.publish(topic('live-start'), JSON.stringify({ sessionId: 's-2' }), { qos: 1 });
      assert.equal(await keptAlive, 's-2');
      clock.advance(999);
      assert.equal(sat.liveSession, 's-2', 'kept alive past the first timeout, until a full timeout after the keepalive');
      const lapsed = next(sat, 'live-stop', 'the live session to lapse');
      clock.advance(1);
      assert.equal(await lapsed, 'no keepalive (live-start) for 1 s');
      assert.equal(sat.liveSession, undefined);
    } finally {
      off();
    }
  });

  describe('chorus satellite (CLI)', () => {
    /**
     * Runs `chorus satellite`; `onOutput` may signal the process (it gets what was printed so far).
     * A run that does not end within `timeoutMs` is killed and fails the test with what it printed.
     */
    function runCli(
      args: string[],
      onOutput?: (stdout: string, child: ReturnType<typeof spawn>) => void,
      timeoutMs = 90_000,
    ): Promise<{ code: number | null; stdout: string; stderr: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [path.join(root, 'bin', 'chorus.mjs'), 'satellite', ...args], {
          cwd: root,
          env: { ...process.env, NODE_ENV: 'test' },
        });
        let stdout = '';
        let stderr = '';
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`chorus satellite ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`));
        }, timeoutMs);
        child.stdout!.on('data', (d) => {
          stdout += d;
          onOutput?.(stdout, child);
        });
        child.stderr!.on('data', (d) => (stderr += d));
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
    }

    test('registers, uploads 3 chunks and exits 0; a second run reuses the saved credentials (mode 0600)', async () => {
      const data = tmp();
      const args = [
        '--hub',
        hub.url,
        '--token',
        owner.token,
        '--tenant',
        team.id,
        '--name',
        'CLI sat',
        '--data',
        data,
        '--interval-ms',
        '50',
      ];
      const run = await runCli([...args, '--chunks', '3']);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /3 chunks acked stored/);
      const credFile = path.join(data, 'credentials.json');
      assert.equal(fs.statSync(credFile).mode & 0o777, 0o600);
      const creds = JSON.parse(fs.readFileSync(credFile, 'utf8')) as SavedCredentials;
      assert.equal((await chunkRows(creds.satelliteId)).length, 3);

      const again = await runCli([...args, '--chunks', '2']);
      assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
      assert.match(again.stdout, /Using saved credentials/);
      assert.equal((await chunkRows(creds.satelliteId)).length, 5);
      const named = await hub.sql.query('SELECT id FROM satellites WHERE tenant_id = $1 AND name = $2', [team.id, 'CLI sat']);
      assert.equal(named.length, 1, 'no second registration');

      // Without --chunks it runs until stopped: SIGTERM once connected ends it with 0. Meanwhile a
      // second satellite on the same data dir refuses to start, naming the first's process.
      let running: ReturnType<typeof spawn> | null = null;
      let connected!: () => void;
      const isConnected = new Promise<void>((resolve) => (connected = resolve));
      const endlessRun = runCli(['--data', data, '--interval-ms', '50'], (out, child) => {
        if (!running && /connected to/.test(out)) {
          running = child;
          connected();
        }
      });
      await within(isConnected, 'the first satellite to connect', 60_000);
      const second = await runCli(['--data', data, '--chunks', '1']);
      assert.equal(second.code, 1, `${second.stdout}\n${second.stderr}`);
      assert.match(second.stderr, /another satellite \(process \d+, since [^)]+\) uses the data dir /);
      running!.kill('SIGTERM');
      const endless = await endlessRun;
      assert.equal(endless.code, 0, `${endless.stdout}\n${endless.stderr}`);
      assert.match(endless.stdout, /stopped by SIGTERM/);
    });

    test('a recording imported from files: chunks at --start or the time in the file name, and the satellite exits 0 once the last is acked', async () => {
      // 6 s of a 48 kHz mono WAV: two chunks.
      const wav = makeWav(new Int16Array(2 * CHUNK_SAMPLES).map((_, i) => Math.round(3000 * Math.sin(i / 20))));
      const dir = tmp();
      const file = path.join(dir, 'dawn.wav');
      fs.writeFileSync(file, wav);
      const common = ['--hub', hub.url, '--token', owner.token, '--tenant', team.id, '--interval-ms', '50'];
      const data = tmp();
      const run = await runCli([...common, '--data', data, '--source', file, '--start', '2024-05-01T05:30:00+02:00']);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /the source ended; 2 chunks acked stored/);
      const creds = JSON.parse(fs.readFileSync(path.join(data, 'credentials.json'), 'utf8')) as SavedCredentials;
      assert.deepEqual(
        (await chunkRows(creds.satelliteId)).map((r) => new Date(r.recorded_at).toISOString()),
        ['2024-05-01T03:30:00.000Z', '2024-05-01T03:30:03.000Z'],
      );

      // A folder of a field recorder's files: each starts at the time in its name (UTC).
      const folder = tmp();
      fs.writeFileSync(path.join(folder, 'SITE1_20240502_061500.WAV'), wav);
      fs.writeFileSync(path.join(folder, 'SITE1_20240502_062000.WAV'), wav);
      const data2 = tmp();
      const named = await runCli([...common, '--data', data2, '--source', folder]);
      assert.equal(named.code, 0, `${named.stdout}\n${named.stderr}`);
      const creds2 = JSON.parse(fs.readFileSync(path.join(data2, 'credentials.json'), 'utf8')) as SavedCredentials;
      assert.deepEqual((await chunkRows(creds2.satelliteId)).map((r) => new Date(r.recorded_at).toISOString()).sort(), [
        '2024-05-02T06:15:00.000Z',
        '2024-05-02T06:15:03.000Z',
        '2024-05-02T06:20:00.000Z',
        '2024-05-02T06:20:03.000Z',
      ]);

      const refused = await runCli([...common, '--data', tmp(), '--source', file, '--start', 'yesterday']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /--start must be an ISO 8601 time/);
      const live = await runCli([...common, '--data', tmp(), '--start', '2024-05-01T05:30:00Z']);
      assert.equal(live.code, 1);
      assert.match(live.stderr, /--start applies to a file or folder source/);
    });

    test('non-zero with the reason: a refused registration, and credentials the broker no longer accepts', async () => {
      const bad = await runCli(['--hub', hub.url, '--token', 'not-a-token', '--tenant', team.id, '--data', tmp(), '--chunks', '1']);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /registration refused: HTTP 401/);

      const data = tmp();
      const creds = await register('Doomed');
      fs.writeFileSync(path.join(data, 'credentials.json'), JSON.stringify({ ...creds }), { mode: 0o600 });
      const del = await api.del(`/satellites/${creds.satelliteId}`, owner, { confirmName: 'Doomed' });
      assert.equal(del.status, 204, del.text);
      const gone = await runCli(['--tenant', team.id, '--data', data, '--chunks', '1', '--interval-ms', '50', '--timeout', '20']);
      assert.equal(gone.code, 2, `${gone.stdout}\n${gone.stderr}`);
      assert.match(gone.stderr, /broker refused the credentials/);
    });
  });
});
