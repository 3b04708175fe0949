/**
 * The offline monitor (satellite protocol §3 "Satellite online status", §8): a satellite silent
 * for longer than its team's offline threshold is marked offline once, with a satellite.offline
 * event for the alerting rules; a heartbeat brings it back; archived satellites never alert.
 * Time moves by the injected clock; the test calls tick() where the hub would every 60 s.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { RawSatellite, TIMEOUT } from './helpers/raw-satellite.ts';
import type { BusEvents } from '../src/infra/bus/index.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Satellite } from '../src/satellite/client.ts';
import { Outbox } from '../src/satellite/outbox.ts';
import { registerSatellite } from '../src/satellite/cli.ts';
import { syntheticSource } from '../src/satellite/sources.ts';
import { waitFor } from './helpers/wait.ts';

type Offline = BusEvents['satellite.offline'];

describe('offline monitor', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  const events: Offline[] = [];
  const waiters: Array<{ pred: (e: Offline) => boolean; resolve: (e: Offline) => void }> = [];
  const sats: RawSatellite[] = [];
  let unsubscribe: () => void;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    unsubscribe = hub.infra.bus.subscribe('satellite.offline', (e) => {
      events.push(e);
      for (const w of [...waiters]) {
        if (w.pred(e)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    });
  });
  after(async () => {
    unsubscribe();
    await Promise.all(sats.map((s) => s.close()));
    await hub.close();
  });

  /** The nth satellite.offline event of a satellite (the bus may be Redis: events arrive after tick() returns). */
  function eventFor(satelliteId: string, nth = 1): Promise<Offline> {
    const seen = events.filter((e) => e.satelliteId === satelliteId);
    if (seen.length >= nth) return Promise.resolve(seen[nth - 1]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no satellite.offline event #${nth} for ${satelliteId}`)), TIMEOUT);
      waiters.push({
        pred: (e) => e.satelliteId === satelliteId && eventsOf(satelliteId).length >= nth,
        resolve: (e) => (clearTimeout(timer), resolve(e)),
      });
    });
  }
  const eventsOf = (id: string) => events.filter((e) => e.satelliteId === id);

  async function teamWithSatellites(n: number): Promise<{ team: TestTeam; owner: TestUser; sats: RawSatellite[] }> {
    const owner = await f.user();
    const team = await f.team(owner);
    const made: RawSatellite[] = [];
    for (let i = 0; i < n; i++) {
      const s = await RawSatellite.register(hub, owner, team, `Sat ${i}`);
      sats.push(s);
      made.push(s);
    }
    return { team, owner, sats: made };
  }

  const heartbeat = (s: RawSatellite) =>
    s.sendHandled('heartbeat', {
      satelliteId: s.id,
      tenantId: s.tenantId,
      uptimeSeconds: 10,
      state: 'recording',
      noiseFloorRms: 0.001,
      version: '1.0.0',
      timestamp: new Date().toISOString(),
    });

  test('past the threshold: marked offline once with an event naming it; archived satellites never', async () => {
    const {
      owner,
      sats: [live, archived],
    } = await teamWithSatellites(2);
    await heartbeat(live);
    await heartbeat(archived);
    assert.equal((await api.post(`/satellites/${archived.id}/archive`, undefined, owner)).status, 200);

    hub.clock.advanceMinutes(4);
    let marked = await hub.runtime.offlineMonitor!.tick();
    assert.deepEqual(
      marked.filter((m) => m.satelliteId === live.id || m.satelliteId === archived.id),
      [],
      'not yet: the default threshold is 5 minutes',
    );
    assert.equal((await api.get(`/satellites/${live.id}`, owner)).body.online, true);

    hub.clock.advanceMinutes(2);
    marked = await hub.runtime.offlineMonitor!.tick();
    assert.deepEqual(
      marked.map((m) => m.satelliteId).filter((id) => id === live.id || id === archived.id),
      [live.id],
    );
    const e = await eventFor(live.id);
    assert.deepEqual(
      { ...e, lastSeenAt: typeof e.lastSeenAt },
      { tenantId: live.tenantId, satelliteId: live.id, name: 'Sat 0', lastSeenAt: 'string' },
    );
    assert.ok(!Number.isNaN(Date.parse(e.lastSeenAt)));
    assert.equal((await api.get(`/satellites/${live.id}`, owner)).body.online, false);

    // Later checks do not alert again.
    hub.clock.advanceMinutes(10);
    marked = await hub.runtime.offlineMonitor!.tick();
    assert.deepEqual(
      marked.filter((m) => m.satelliteId === live.id || m.satelliteId === archived.id),
      [],
    );
    assert.equal(eventsOf(live.id).length, 1);
    assert.equal(eventsOf(archived.id).length, 0, 'archived satellites are never offline-alerted');
    const row = await hub.sql.one<{ offline_alerted_at: Date | null }>('SELECT offline_alerted_at FROM satellites WHERE id = $1', [
      archived.id,
    ]);
    assert.equal(row.offline_alerted_at, null);
  });

  test('a heartbeat clears the mark; the next silence alerts again', async () => {
    const {
      owner,
      sats: [s],
    } = await teamWithSatellites(1);
    await heartbeat(s);
    hub.clock.advanceMinutes(6);
    await hub.runtime.offlineMonitor!.tick();
    await eventFor(s.id);
    await heartbeat(s);
    assert.equal((await api.get(`/satellites/${s.id}`, owner)).body.online, true);
    assert.equal(
      (await hub.sql.one<{ offline_alerted_at: Date | null }>('SELECT offline_alerted_at FROM satellites WHERE id = $1', [s.id]))
        .offline_alerted_at,
      null,
    );
    hub.clock.advanceMinutes(6);
    const marked = await hub.runtime.offlineMonitor!.tick();
    assert.ok(marked.some((m) => m.satelliteId === s.id));
    await eventFor(s.id, 2);
    assert.equal(eventsOf(s.id).length, 2);
  });

  test("the team's offline_threshold_minutes decides", async () => {
    const {
      owner,
      team,
      sats: [s],
    } = await teamWithSatellites(1);
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { offline_threshold_minutes: 30 }, owner)).status, 200);
    await heartbeat(s);
    hub.clock.advanceMinutes(20);
    assert.ok(!(await hub.runtime.offlineMonitor!.tick()).some((m) => m.satelliteId === s.id), '20 minutes is within 30');
    hub.clock.advanceMinutes(11);
    assert.ok((await hub.runtime.offlineMonitor!.tick()).some((m) => m.satelliteId === s.id));
    await eventFor(s.id);
  });

  test('a satellite that never sent a heartbeat is not alerted', async () => {
    const {
      sats: [s],
    } = await teamWithSatellites(1);
    hub.clock.advanceMinutes(60);
    assert.ok(!(await hub.runtime.offlineMonitor!.tick()).some((m) => m.satelliteId === s.id));
  });
});

describe('a satellite stopped cleanly', () => {
  let hub: Hub;
  const dirs: string[] = [];
  before(async () => {
    hub = await startHub();
  });
  after(async () => {
    await hub.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('says goodbye and shows offline at once, with no offline alert; its next start shows it online again', async () => {
    const f = factories(hub);
    const api = client(hub.url);
    const owner = await f.user();
    const team = await f.team(owner);
    const offline: string[] = [];
    const unsubscribe = hub.infra.bus.subscribe('satellite.offline', (e) => offline.push(e.satelliteId));
    const credentials = await registerSatellite({
      hub: hub.url,
      token: owner.token,
      tenantId: team.id,
      name: 'Clean stop',
      deviceId: `test-${crypto.randomUUID()}`,
    });
    const run = async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-goodbye-'));
      dirs.push(dir);
      const sat = new Satellite({
        credentials,
        source: syntheticSource({ seed: 3 }),
        outbox: await Outbox.open(path.join(dir, 'outbox')),
        dataDir: dir,
        reconnectMs: 50,
        heartbeatIntervalMs: 60_000,
        chunkIntervalMs: 0,
      });
      await sat.start();
      return sat;
    };
    const online = async () => (await api.get(`/satellites/${credentials.satelliteId}`, owner)).body.online as boolean;
    try {
      const sat = await run();
      await waitFor('online after its first heartbeat', online);
      await sat.stop();
      // Well inside the 5-minute threshold, and without moving the clock: offline because it said so.
      await waitFor('offline after the goodbye', async () => !(await online()));
      // Past the threshold the monitor raises nothing for it: a clean stop is no outage.
      hub.clock.advanceMinutes(10);
      const marked = await hub.runtime.offlineMonitor!.tick();
      assert.deepEqual(
        marked.map((m) => m.satelliteId),
        [],
      );
      assert.deepEqual(offline, [], 'no satellite.offline event');
      const again = await run();
      await waitFor('online again after the next heartbeat', online);
      await again.stop();
    } finally {
      unsubscribe();
    }
  });
});
