/**
 * Storage in sight (issue 23, item 8): the bytes of audio the hub holds per satellite, per team
 * and in total, their growth per day on the injected clock, the free space where the hub writes
 * with the days it lasts (warning below the hub setting storage_warning_days), and each
 * satellite's own free space from its telemetry (warning below satellite_storage_warning_mb).
 * Chunks arrive over real MQTT; GET /satellites/storage is the team's view, GET /system/storage
 * the hub admins'.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { RawSatellite, audioBody, toneWav } from './helpers/raw-satellite.ts';
import { sqlOf } from './helpers/sql.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MIB = 1024 * 1024;
// Half past the hour, so the growth window's start (whole UTC hours) differs from "now − 7 days".
const T0 = new Date('2031-05-04T10:30:00.000Z');

describe('storage usage', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let root: TestUser;
  let owner: TestUser;
  let viewer: TestUser;
  let member: TestUser;
  let otherOwner: TestUser;
  let teamA: TestTeam;
  let teamB: TestTeam;
  let s1: RawSatellite;
  let s2: RawSatellite;
  let s3: RawSatellite;
  let b1: RawSatellite;
  // Chunks are 3 s (2.7–3.3 s): three lengths, so every sum tells which chunks it holds.
  const wavA = toneWav(3000);
  const wavB = toneWav(2800);
  const wavC = toneWav(3200);

  const at = (ms: number) => hub.clock.freeze(new Date(T0.getTime() + ms));
  const send = async (sat: RawSatellite, wav: Buffer) => {
    const durationMs = wav === wavA ? 3000 : wav === wavB ? 2800 : 3200;
    const body = audioBody(sat, { recordedAt: hub.clock.now().toISOString(), durationMs }, wav);
    const ack = await sat.sendAudio(body, body.chunkId);
    assert.equal(ack.status, 'stored', JSON.stringify(ack));
  };
  const teamView = async (team: TestTeam, as: TestUser = viewer) => {
    const res = await api.get(`/satellites/storage?tenantId=${team.id}`, as);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const hubView = async () => {
    const res = await api.get('/system/storage', root);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const sat = (view: any, id: string) => view.satellites.find((s: any) => s.id === id);
  const recount = async (satelliteId: string) =>
    Number(
      (
        await hub.sql.one<{ n: string | number }>(
          'SELECT coalesce(sum(bytes), 0) AS n FROM chunks WHERE satellite_id = $1 AND audio_deleted_at IS NULL',
          [satelliteId],
        )
      ).n,
    );

  before(async () => {
    // The clock moves on by days: tokens must outlive it.
    hub = await startHub({ env: { JWT_TTL_SECONDS: String(365 * 24 * 3600) } });
    hub.clock.freeze(T0);
    api = client(hub.url);
    const f = factories(hub);
    root = await f.user({ admin: true });
    owner = await f.user();
    teamA = await f.team(owner, 'Alpha Storage');
    viewer = await f.member(teamA, 'viewer');
    member = await f.member(teamA, 'member');
    otherOwner = await f.user();
    teamB = await f.team(otherOwner, 'Beta Storage');
    s1 = await RawSatellite.register(hub, member, teamA, 'Orchard');
    s2 = await RawSatellite.register(hub, member, teamA, 'Pond');
    s3 = await RawSatellite.register(hub, member, teamA, 'Quiet');
    b1 = await RawSatellite.register(hub, otherOwner, teamB, 'Beta one');
  });
  after(async () => {
    await Promise.all([s1, s2, s3, b1].filter(Boolean).map((s) => s.close()));
    await hub?.close();
  });

  test('bytes per satellite and per team are exactly the WAV bytes received; a satellite without audio holds 0', async () => {
    await send(s1, wavA);
    await send(s1, wavA);
    await send(s2, wavB);
    await send(b1, wavC);

    const a = await teamView(teamA);
    assert.equal(a.tenantId, teamA.id);
    assert.deepEqual(
      a.satellites.map((s: any) => [s.name, s.storedBytes, s.chunks]),
      [
        ['Orchard', 2 * wavA.length, 2],
        ['Pond', wavB.length, 1],
        ['Quiet', 0, 0],
      ],
    );
    assert.equal(a.totalBytes, 2 * wavA.length + wavB.length);
    assert.equal(a.chunks, 3);
    for (const s of [s1, s2, s3]) assert.equal(sat(a, s.id).storedBytes, await recount(s.id), 'the aggregate equals the chunk rows');
    assert.equal(a.windowDays, 7);

    const b = await teamView(teamB, otherOwner);
    assert.deepEqual(
      b.satellites.map((s: any) => [s.id, s.storedBytes]),
      [[b1.id, wavC.length]],
      "another team's satellites stay out",
    );
    assert.equal(b.totalBytes, wavC.length);
  });

  test('growth per day counts from the first arrival within the last 7 days, and only after 2 days of data', async () => {
    const total = 2 * wavA.length + wavB.length;
    // Everything arrived this instant: no rate yet (issue 36 point 6: minutes scaled to a day read
    // 574 MB as 2.3 GB per day), and no days remaining either.
    let a = await teamView(teamA);
    assert.equal(a.minHistoryDays, 2);
    assert.equal(a.growthBytesPerDay, null);
    assert.equal(sat(a, s1.id).growthBytesPerDay, null);
    assert.equal(sat(a, s3.id).growthBytesPerDay, 0, 'no audio: no growth');
    assert.deepEqual([a.hub.growthBytesPerDay, a.hub.daysRemaining, a.hub.warning], [null, null, false]);
    at(DAY + 23 * HOUR);
    assert.equal((await teamView(teamA)).growthBytesPerDay, null, 'a day and 23 hours is not enough');

    at(2 * DAY);
    a = await teamView(teamA);
    assert.equal(a.growthBytesPerDay, Math.round(total / 2), 'two days of data: half a day each');
    await send(s2, wavB);
    a = await teamView(teamA);
    assert.equal(a.totalBytes, total + wavB.length);
    assert.equal(a.growthBytesPerDay, Math.round((total + wavB.length) / 2));
    assert.equal(sat(a, s2.id).growthBytesPerDay, wavB.length, 'Pond: two chunks over two days');

    // Eight days on, only the chunk of day 2 lies in the window, which starts on the whole UTC
    // hour at or before now − 7 days (day 1, 10:00): 7 days and 30 minutes.
    at(8 * DAY);
    a = await teamView(teamA);
    assert.equal(a.totalBytes, total + wavB.length, 'bytes stored do not age');
    assert.equal(a.growthBytesPerDay, Math.round((wavB.length * DAY) / (7 * DAY + HOUR / 2)));
    assert.equal(sat(a, s1.id).growthBytesPerDay, 0);

    const h = await hubView();
    assert.equal(h.totalBytes, total + wavB.length + wavC.length);
    assert.equal(h.chunks, 5);
    assert.equal(h.disk.growthBytesPerDay, a.growthBytesPerDay, "team B's only chunk is older than the window");
    assert.deepEqual(
      h.teams.map((t: any) => [t.tenantId, t.name, t.storedBytes, t.chunks, t.satellites]),
      [
        [teamA.id, 'Alpha Storage', total + wavB.length, 4, 2],
        [teamB.id, 'Beta Storage', wavC.length, 1, 1],
      ],
    );
  });

  test('the free space where the hub writes is its file system’s, and the days it lasts follow the growth', async () => {
    const h = await hubView();
    assert.equal(h.disk.storage, 'files');
    assert.equal(h.disk.freeUnknownReason, null);
    assert.ok(Number.isInteger(h.disk.freeBytes) && h.disk.freeBytes > 0, `free bytes: ${h.disk.freeBytes}`);
    assert.ok(h.disk.totalBytes >= h.disk.freeBytes);
    const s = fs.statfsSync(os.tmpdir());
    // The data dir lies under the temp dir: the same file system, give or take what others wrote meanwhile.
    assert.ok(Math.abs(h.disk.freeBytes - s.bavail * s.bsize) < 1024 * MIB, 'statfs of the data dir');
    assert.equal(h.disk.daysRemaining, Math.round((h.disk.freeBytes / h.disk.growthBytesPerDay) * 10) / 10);
    assert.equal(h.disk.warningDays, 14, 'the default of storage_warning_days');
  });

  test('the warning appears when fewer days remain than storage_warning_days, on both views', async () => {
    const storage = hub.infra.storage;
    const real = storage.freeSpace;
    const growth = (await hubView()).disk.growthBytesPerDay;
    assert.ok(growth > 0);
    // 20 days of growth left on a disk four times as big.
    storage.freeSpace = async () => ({ freeBytes: growth * 20, totalBytes: growth * 80 });
    try {
      let h = await hubView();
      assert.equal(h.disk.freeBytes, growth * 20);
      assert.equal(h.disk.daysRemaining, 20);
      assert.equal(h.disk.warning, false, '20 days left, warned below 14');
      assert.equal(h.disk.suggestedRetentionDays, null, 'no suggestion without the warning');

      const put = await api.put('/settings/platform', { storage_warning_days: 21 }, root);
      assert.equal(put.status, 200, put.text);
      h = await hubView();
      assert.equal(h.disk.warningDays, 21);
      assert.equal(h.disk.warning, true, '20 days left, warned below 21');
      const a = await teamView(teamA);
      assert.deepEqual(
        [a.hub.freeBytes, a.hub.daysRemaining, a.hub.warning, a.hub.growthBytesPerDay],
        [growth * 20, 20, true, growth],
        'the team sees the disk it shares and the hub-wide rate',
      );

      // What fits: 90 % of the free space and the audio already stored, at the current rate.
      assert.equal(h.disk.suggestedRetentionDays, Math.floor((0.9 * (growth * 20 + h.totalBytes)) / growth));
      assert.equal(a.hub.suggestedRetentionDays, h.disk.suggestedRetentionDays);

      assert.equal((await api.put('/settings/platform', { storage_warning_days: 20 }, root)).status, 200);
      assert.equal((await hubView()).disk.warning, false, 'exactly 20 days left is not fewer than 20');
      assertError(await api.put('/settings/platform', { storage_warning_days: 0 }, root), 400, 'VALIDATION_FAILED');

      // A file system that does not answer: unknown, with a reason, never a 500.
      storage.freeSpace = async () => {
        throw new Error('EIO');
      };
      h = await hubView();
      assert.deepEqual(
        [h.disk.freeBytes, h.disk.freeUnknownReason, h.disk.daysRemaining, h.disk.warning],
        [null, 'unavailable', null, false],
      );
    } finally {
      storage.freeSpace = real;
      await api.put('/settings/platform', { storage_warning_days: null }, root);
    }
  });

  test('a satellite whose latest telemetry reports less free space than satellite_storage_warning_mb is flagged', async () => {
    const now = hub.clock.now().getTime();
    const telemetry = async (s: RawSatellite, free: number, minutesAgo: number) => {
      const m = await s.sendHandled('telemetry', {
        satelliteId: s.id,
        tenantId: s.tenantId,
        storageFreeBytes: free,
        uptimeSeconds: 60,
        timestamp: new Date(now - minutesAgo * 60_000).toISOString(),
      });
      assert.equal(m.outcome, 'done');
    };
    await telemetry(s1, 500 * MIB, 1);
    await telemetry(s2, 100 * MIB, 10);
    await telemetry(s2, 5 * 1024 * MIB, 5);

    let a = await teamView(teamA);
    assert.equal(a.satelliteWarningBytes, 1024 * MIB, 'default 1024 MB');
    assert.deepEqual(
      [s1, s2, s3].map((s) => [sat(a, s.id).freeBytes, sat(a, s.id).lowFreeSpace]),
      [
        [500 * MIB, true],
        [5 * 1024 * MIB, false],
        [null, false],
      ],
      'Orchard is low; Pond’s latest report counts; Quiet never reported',
    );
    assert.equal(sat(a, s1.id).freeReportedAt, new Date(now - 60_000).toISOString());

    const put = await api.put(`/settings/tenant?tenantId=${teamA.id}`, { satellite_storage_warning_mb: 400 }, owner);
    assert.equal(put.status, 200, put.text);
    a = await teamView(teamA);
    assert.equal(a.satelliteWarningBytes, 400 * MIB);
    assert.equal(sat(a, s1.id).lowFreeSpace, false, '500 MB is above a 400 MB threshold');
    assert.equal((await teamView(teamB, otherOwner)).satelliteWarningBytes, 1024 * MIB, 'team B keeps the hub default');
  });

  test('audio removed by retention leaves the totals and counts against the growth', async () => {
    const put = await api.put(`/settings/tenant?tenantId=${teamA.id}`, { audio_retention_days: 1 }, owner);
    assert.equal(put.status, 200, put.text);
    const started = await api.post('/admin/retention/run', undefined, root);
    assert.equal(started.status, 202, started.text);
    await hub.services.retention.idle();

    const a = await teamView(teamA);
    assert.equal(a.totalBytes, 0);
    assert.equal(a.chunks, 0);
    for (const s of [s1, s2]) assert.equal(sat(a, s.id).storedBytes, await recount(s.id));
    const removed = 2 * wavA.length + 2 * wavB.length;
    // In the window: Pond's chunk of day 2 arrived, every chunk of the team was removed now.
    assert.equal(a.growthBytesPerDay, Math.round(((wavB.length - removed) * DAY) / (7 * DAY + HOUR / 2)));
    const h = await hubView();
    assert.equal(h.totalBytes, wavC.length);
    assert.ok(h.disk.growthBytesPerDay < 0);
    assert.equal(h.disk.daysRemaining, null, 'a shrinking hub does not run out');
    assert.equal(h.disk.warning, false);
  });

  test('isolation: only the team sees its storage, only hub admins the hub’s', async () => {
    assertError(await api.get(`/satellites/storage?tenantId=${teamA.id}`, otherOwner), 404, 'NOT_FOUND');
    assertError(await api.get(`/satellites/storage?tenantId=${teamA.id}`, null), 401, 'UNAUTHENTICATED');
    assertError(await api.get('/satellites/storage', owner), 400, 'TENANT_REQUIRED');
    assertError(await api.get('/system/storage', owner), 403, 'FORBIDDEN');
    const b = await teamView(teamB, otherOwner);
    assert.deepEqual(
      b.satellites.map((s: any) => s.id),
      [b1.id],
    );
  });

  test('deleting a satellite takes its stored audio out of the totals', async () => {
    const before = await hubView();
    const res = await api.del(`/satellites/${b1.id}`, otherOwner, { confirmName: 'Beta one' });
    assert.ok(res.status === 200 || res.status === 204, res.text);
    const b = await teamView(teamB, otherOwner);
    assert.deepEqual([b.totalBytes, b.chunks, b.satellites.length], [0, 0, 0]);
    const h = await hubView();
    assert.equal(h.totalBytes, before.totalBytes - wavC.length);
    assert.equal(
      h.teams.find((t: any) => t.tenantId === teamB.id),
      undefined,
      'a team without audio rows is left out',
    );
  });

  test("the migration's backfill rebuilds from the chunk rows what the triggers kept", async () => {
    const snapshot = async () => ({
      totals: await hub.sql.query(
        `SELECT satellite_id, bytes::text, chunks::text, first_received_at FROM audio_storage_totals
         WHERE bytes <> 0 OR chunks <> 0 ORDER BY satellite_id`,
      ),
      hours: await hub.sql.query(
        `SELECT satellite_id, hour, added_bytes::text, removed_bytes::text FROM audio_storage_hours
         WHERE added_bytes <> 0 OR removed_bytes <> 0 ORDER BY satellite_id, hour`,
      ),
    });
    const kept = await snapshot();
    assert.ok(kept.hours.length >= 3, 'arrivals on two days and a removal');
    const sql = fs.readFileSync(path.join(import.meta.dirname, '../src/db/migrations/0024_audio_storage.sql'), 'utf8');
    const backfill = sql.slice(sql.indexOf('-- Backfill'));
    await hub.infra.db.tx(async (tx) => {
      await sqlOf(tx).query('DELETE FROM audio_storage_hours');
      await sqlOf(tx).query('DELETE FROM audio_storage_totals');
      for (const statement of backfill.split(';').filter((x) => /\bINSERT\b/.test(x))) await sqlOf(tx).query(statement);
    });
    assert.deepEqual(await snapshot(), kept);
  });
});

describe('storage usage on S3', () => {
  let server: S3rver;
  let hub: Hub;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-s3-usage-'));

  before(async () => {
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
    const { port } = (await server.run()) as AddressInfo;
    hub = await startHub({
      env: { S3_URL: `http://S3RVER:S3RVER@127.0.0.1:${port}`, S3_BUCKET: `usage-${crypto.randomBytes(3).toString('hex')}` },
    });
  });
  after(async () => {
    await hub?.close();
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a bucket has no free space to report: null with the reason, no warning', async () => {
    const f = factories(hub);
    const root = await f.user({ admin: true });
    const res = await client(hub.url).get('/system/storage', root);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      [
        res.body.disk.storage,
        res.body.disk.freeBytes,
        res.body.disk.totalBytes,
        res.body.disk.freeUnknownReason,
        res.body.disk.daysRemaining,
        res.body.disk.warning,
      ],
      ['s3', null, null, 'object_storage_s3', null, false],
    );
    const owner = await f.user();
    const team = await f.team(owner);
    const mine = await client(hub.url).get(`/satellites/storage?tenantId=${team.id}`, owner);
    assert.equal(mine.status, 200, mine.text);
    assert.equal(mine.body.hub.freeUnknownReason, 'object_storage_s3');
  });
});
