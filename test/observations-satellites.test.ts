/**
 * One call, several recorders (issue 35 point 3) end to end: two reference satellites at known
 * positions record the same soundscape (one seed: the same birds at the same moments) through the
 * protocol to a hub that classifies it with its built-in model. Near each other with the team's
 * setting on, each call is one observation heard by two recorders; beyond the distance, or with
 * the setting off, each satellite has its rows; turning it on merges what comes after, never what
 * was stored before.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Satellite } from '../src/satellite/client.ts';
import type { SatelliteClock } from '../src/satellite/clock.ts';
import { syntheticSource } from '../src/satellite/sources.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { referenceSatellite } from './helpers/reference-satellite.ts';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { queueSettled, waitFor } from './helpers/wait.ts';

const SEED = 3517;
const CHUNKS = 4;
const HOME = { latitude: 52.52, longitude: 13.405 };
/** 100 m north. */
const NEAR = { latitude: 52.5209, longitude: 13.405 };
/** About 1 km north. */
const FAR = { latitude: 52.529, longitude: 13.405 };

interface Listed {
  id: string;
  satelliteId: string;
  speciesCode: string;
  detectedAt: string;
  recorders: number;
}

describe('two reference satellites hear one soundscape', () => {
  let hub: Hub;
  let owner: TestUser;
  let finished = 0;
  const dirs: string[] = [];
  const api = () => client(hub.url);

  before(async () => {
    hub = await startHub();
    owner = await factories(hub).user();
  });
  after(async () => {
    await hub?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /**
   * Two satellites of `team` at `where`, the same soundscape in each, recording chunk by chunk on
   * one clock: chunk i of both carries the same time (3 s apart from chunk i + 1).
   */
  async function pair(team: TestTeam, where: [typeof HOME, typeof HOME]) {
    let now = hub.clock.now().getTime() - 30 * 60_000;
    const clock: SatelliteClock = {
      now: () => new Date(now),
      after: (ms, fn) =>
        (
          (t) => () =>
            clearTimeout(t)
        )(setTimeout(fn, ms)),
    };
    const sats: Satellite[] = [];
    for (const [i, at] of where.entries()) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-obs-'));
      dirs.push(dir);
      sats.push(
        await referenceSatellite({
          hubUrl: hub.url,
          token: owner.token,
          tenantId: team.id,
          dir,
          name: `Recorder ${i + 1}`,
          source: syntheticSource({ seed: SEED, limit: 2 * CHUNKS, silenceProbability: 0 }),
          chunkIntervalMs: 0,
          clock,
          ...at,
        }),
      );
    }
    for (const s of sats) await s.start();
    return {
      sats,
      /** Records the next CHUNKS chunks on both and waits until the hub classified them. */
      async record() {
        for (let i = 0; i < CHUNKS; i++) {
          now += 3000;
          for (const s of sats) assert.equal(await s.record(), 'recorded');
        }
        await waitFor('both outboxes drained', () => sats.every((s) => s.outbox.pending().length === 0), { timeoutMs: 60_000 });
        finished += 2 * CHUNKS;
        await queueSettled(hub.infra.queue, INFERENCE_QUEUE, { finished, timeoutMs: 120_000 });
      },
      stop: () => Promise.all(sats.map((s) => s.stop())),
    };
  }

  async function listed(team: TestTeam): Promise<Listed[]> {
    const res = await api().get(`/detections?tenantId=${team.id}&limit=100&sortDir=asc`, owner);
    assert.equal(res.status, 200);
    return res.body.detections;
  }
  const rawCount = async (team: TestTeam) =>
    (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detections WHERE tenant_id = $1', [team.id])).n;
  const setMerge = async (team: TestTeam, on: boolean) =>
    assert.equal((await api().put(`/settings/tenant?tenantId=${team.id}`, { observation_merge_enabled: on }, owner)).status, 200);
  /** The species and times heard, one entry per call (the same for every satellite: one soundscape). */
  const calls = (rows: Listed[]) => {
    // Times from the first call: each pair of satellites records from its own start.
    const first = Math.min(...rows.map((r) => Date.parse(r.detectedAt)));
    return rows.map((r) => `${r.speciesCode}@+${Date.parse(r.detectedAt) - first}ms`).sort();
  };

  test('near each other and on: one row per call, heard by two recorders; off, or 1 km apart: two rows per call', async () => {
    const f = factories(hub);
    const [near, far, off] = [await f.team(owner), await f.team(owner), await f.team(owner)];
    await setMerge(near, true);
    await setMerge(far, true);
    const pairs = [await pair(near, [HOME, NEAR]), await pair(far, [HOME, FAR]), await pair(off, [HOME, NEAR])];
    try {
      for (const p of pairs) await p.record();

      const offRows = await listed(off);
      assert.ok(offRows.length >= 2, 'the model heard the soundscape');
      const bySat = new Map<string, Listed[]>();
      for (const r of offRows) bySat.set(r.satelliteId, [...(bySat.get(r.satelliteId) ?? []), r]);
      assert.equal(bySat.size, 2);
      const [one, two] = [...bySat.values()];
      assert.deepEqual(calls(one), calls(two), 'both satellites heard the same calls at the same times');
      assert.ok(offRows.every((r) => r.recorders === 1));

      const nearRows = await listed(near);
      assert.deepEqual(calls(nearRows), calls(one), 'one row per call');
      assert.ok(
        nearRows.every((r) => r.recorders === 2),
        'each heard by two recorders',
      );
      assert.equal(await rawCount(near), await rawCount(off), 'every recording is kept');
      const detail = await api().get(`/detections/${nearRows[0].id}`, owner);
      assert.equal(detail.body.recordings.length, 2);
      assert.equal(new Set(detail.body.recordings.map((r: { satelliteId: string }) => r.satelliteId)).size, 2);

      const farRows = await listed(far);
      assert.equal(farRows.length, offRows.length, 'beyond the distance: two rows per call');
      assert.ok(farRows.every((r) => r.recorders === 1));

      const dash = await api().get(`/stats/dashboard?tenantId=${near.id}`, owner);
      assert.equal(dash.body.detectionCount, nearRows.length, 'the statistics count observations');

      // Turning it on merges what comes after; the rows stored while off stay apart.
      await setMerge(off, true);
      await pairs[2].record();
      const later = await listed(off);
      const old = later.filter((r) => offRows.some((o) => o.id === r.id));
      assert.equal(old.length, offRows.length, 'history is not rewritten');
      const fresh = later.filter((r) => !offRows.some((o) => o.id === r.id));
      assert.ok(fresh.length > 0);
      assert.ok(
        fresh.every((r) => r.recorders === 2),
        'new calls are observations',
      );
    } finally {
      for (const p of pairs) await p.stop();
    }
  });
});
