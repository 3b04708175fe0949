/**
 * Ingest over real MQTT (satellite protocol §2 and §4, DESIGN.md §1.4 and §5, issue 4 "Ingest"):
 * audio is acked `stored` only once the object and the row are durable, every refusal is an
 * error ack with a reason and stores nothing, redelivery never duplicates; heartbeats,
 * telemetry, config requests and log responses land where the spec says.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { RawSatellite, audioBody, toneWav, waitHandled } from './helpers/raw-satellite.ts';
import { chunkStorageKey } from '../src/modules/audio/service.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { requeueRecentChunks } from '../src/ingest/requeue.ts';
import { waitFor } from './helpers/wait.ts';
import { topicOf } from '../src/protocol/topics.ts';
import { HUB_VERSION } from '../src/modules/system/version.ts';

describe('ingest', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let team: TestTeam;
  const sats: RawSatellite[] = [];

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    admin = await f.member(team, 'admin');
    member = await f.member(team, 'member');
  });
  after(async () => {
    await Promise.all(sats.map((s) => s.close()));
    await hub.close();
  });

  async function satellite(): Promise<RawSatellite> {
    const s = await RawSatellite.register(hub, member, team);
    sats.push(s);
    return s;
  }

  const rowsOf = async (chunkId: string) =>
    (await hub.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks WHERE id = $1', [chunkId]))[0].n;
  const keyOf = (sat: { id: string; tenantId: string }, body: { chunkId: string; recordedAt: string }) =>
    chunkStorageKey(sat.tenantId, sat.id, body.chunkId, new Date(body.recordedAt));
  const jobs = async () => {
    const s = await hub.infra.queue.stats(INFERENCE_QUEUE);
    return s.waiting + s.active + s.completed + s.failed;
  };

  /** Nothing of the chunk exists: no row, no object. */
  async function assertNothingStored(sat: RawSatellite, body: { chunkId: string; recordedAt: string }) {
    assert.equal(await rowsOf(body.chunkId), 0, 'no chunk row');
    assert.equal(await hub.infra.storage.stat(keyOf(sat, body)), null, 'no object');
  }

  describe('audio', () => {
    test('a valid chunk is stored, gets a row and an inference job, then is acked stored', async () => {
      const sat = await satellite();
      const jobsBefore = await jobs();
      const body = audioBody(sat);
      const ack = await sat.sendAudio(body, body.chunkId);
      assert.deepEqual(ack, { chunkId: body.chunkId, status: 'stored' });
      const row = await hub.sql.one<any>(
        'SELECT tenant_id, satellite_id, duration_ms, sample_rate, storage_key, bytes, latitude, longitude, recorded_at FROM chunks WHERE id = $1',
        [body.chunkId],
      );
      assert.equal(row.tenant_id, team.id);
      assert.equal(row.satellite_id, sat.id);
      assert.equal(row.duration_ms, 3000);
      assert.equal(row.sample_rate, 48000);
      assert.equal(row.latitude, 52.09);
      assert.equal(new Date(row.recorded_at).toISOString(), body.recordedAt);
      const d = body.recordedAt;
      assert.equal(row.storage_key, `audio/${team.id}/${sat.id}/${d.slice(0, 4)}/${d.slice(5, 7)}/${d.slice(8, 10)}/${body.chunkId}.wav`);
      const object = await hub.infra.storage.get(row.storage_key);
      assert.ok(object, 'the object exists');
      assert.ok(object.equals(Buffer.from(body.audio as string, 'base64')), 'the object is the WAV as sent');
      assert.equal(row.bytes, object.length);
      assert.equal(await jobs(), jobsBefore + 1, 'one inference job');
    });

    test('a body whose audio is not the last member, or spaced out, is stored the same', async () => {
      const sat = await satellite();
      const { audio, ...rest } = audioBody(sat);
      const first = { audio, ...rest };
      assert.deepEqual(await sat.sendAudio(first, first.chunkId), { chunkId: first.chunkId, status: 'stored' });
      const spaced = audioBody(sat);
      assert.deepEqual(await sat.sendAudio(JSON.stringify(spaced, null, 1), spaced.chunkId), { chunkId: spaced.chunkId, status: 'stored' });
      const object = await hub.infra.storage.get(keyOf(sat, first));
      assert.ok(object?.equals(Buffer.from(audio as string, 'base64')), 'the object is the WAV as sent');
    });

    test('a WAV with extra chunks before data (not a 44-byte header) is accepted', async () => {
      const sat = await satellite();
      const plain = toneWav();
      // RIFF header, fmt chunk, then a LIST chunk of odd length (padded), then data.
      const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([5, 0, 0, 0]), Buffer.from('INFOx'), Buffer.from([0])]);
      const wav = Buffer.concat([plain.subarray(0, 36), list, plain.subarray(36)]);
      wav.writeUInt32LE(wav.length - 8, 4);
      const body = audioBody(sat, {}, wav);
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
    });

    const refusals: Array<[string, (sat: RawSatellite) => { body: any; chunkId?: string; payload?: unknown }, RegExp]> = [
      ['bad JSON', () => ({ body: null, payload: '{"chunkId": "oops", ' }), /JSON/],
      ['a JSON array instead of an object', () => ({ body: null, payload: '[1,2,3]' }), /object/],
      ['bad base64', (s) => ({ body: audioBody(s, { audio: 'UklGR!!!' + 'A'.repeat(100) }) }), /base64/],
      ['URL-safe base64', (s) => ({ body: audioBody(s, { audio: '-' + toneWav().toString('base64').slice(1) }) }), /base64/],
      [
        'base64 whose padding bits are not zero',
        (s) => {
          const b64 = toneWav().toString('base64'); // 288 044 bytes: one '=' of padding
          const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
          return { body: audioBody(s, { audio: b64.slice(0, -2) + B64[B64.indexOf(b64.at(-2)!) | 1] + '=' }) };
        },
        /base64/,
      ],
      [
        'a raw control character inside the audio string',
        (s) => ({ body: null, payload: JSON.stringify(audioBody(s)).replace('"audio":"', '"audio":"\u0001') }),
        /JSON/,
      ],
      [
        'base64 with a length that is not a multiple of 4',
        (s) => ({ body: audioBody(s, { audio: toneWav().toString('base64').slice(0, -1) }) }),
        /base64/,
      ],
      ['not a WAV', (s) => ({ body: audioBody(s, { audio: crypto.randomBytes(288_044).toString('base64') }) }), /not a WAV/],
      ['a WAV at 44.1 kHz', (s) => ({ body: audioBody(s, {}, toneWav(3000, { sampleRate: 44_100 })) }), /sample rate/],
      ['sampleRate 44100 in the body', (s) => ({ body: audioBody(s, { sampleRate: 44_100 }) }), /sampleRate/],
      // 1.5 s of stereo: the bytes of a mono chunk (3 s of stereo is above the broker's packet cap, issue 33).
      ['stereo', (s) => ({ body: audioBody(s, {}, toneWav(1500, { channels: 2 })) }), /mono/],
      ['8-bit samples', (s) => ({ body: audioBody(s, {}, toneWav(3000, { bitsPerSample: 8 })) }), /16-bit/],
      ['not PCM (format 3, float)', (s) => ({ body: audioBody(s, {}, toneWav(3000, { format: 3 })) }), /not PCM/],
      ['audio length not matching durationMs', (s) => ({ body: audioBody(s, {}, toneWav(2500)) }), /durationMs/],
      ['a truncated data chunk', (s) => ({ body: audioBody(s, {}, toneWav().subarray(0, 100_000)) }), /truncated/],
      // A 10-second WAV itself is above the broker's packet cap (issue 33): the broker closes that satellite.
      ['durationMs far from 3 seconds', (s) => ({ body: audioBody(s, { durationMs: 10_000 }) }), /durationMs/],
      ['a chunkId that is not a UUID', (s) => ({ body: audioBody(s, { chunkId: 'chunk-1' }) }), /chunkId/],
      ['a recordedAt that is not a timestamp', (s) => ({ body: audioBody(s, { recordedAt: 'yesterday' }) }), /recordedAt/],
      ['a latitude out of range', (s) => ({ body: audioBody(s, { latitude: 123 }) }), /latitude/],
      [
        'the body naming another satellite than the topic',
        (s) => ({ body: audioBody(s, { satelliteId: crypto.randomUUID() }) }),
        /do not match the topic/,
      ],
      [
        'the body naming another team than the topic',
        (s) => ({ body: audioBody(s, { tenantId: crypto.randomUUID() }) }),
        /do not match the topic/,
      ],
      ['a body without satelliteId', (s) => ({ body: audioBody(s, { satelliteId: undefined }) }), /satelliteId/],
    ];

    for (const [what, make, reason] of refusals) {
      test(`${what} → error ack with a reason, nothing stored`, async () => {
        const sat = await satellite();
        const jobsBefore = await jobs();
        const { body, payload } = make(sat);
        const chunkId = body && typeof body.chunkId === 'string' ? body.chunkId : undefined;
        const ack = await sat.sendAudio(payload ?? body, chunkId);
        assert.equal(ack.status, 'error');
        assert.match(ack.error, reason);
        if (chunkId) assert.equal(ack.chunkId, chunkId, 'the ack names the chunk');
        if (body && /^[0-9a-f-]{36}$/.test(String(body.chunkId)) && !Number.isNaN(Date.parse(body.recordedAt)))
          await assertNothingStored(sat, body);
        assert.equal(await jobs(), jobsBefore, 'no job');
      });
    }

    test('an unknown satellite (a topic no registered satellite holds) → error ack, nothing stored', async () => {
      const ghost = { id: crypto.randomUUID(), tenantId: team.id };
      const body = audioBody(ghost);
      // The hub's own client may publish and subscribe anywhere: it stands in for a login the broker should not have let in.
      let resolveAck!: (b: unknown) => void;
      const ack = new Promise((resolve) => (resolveAck = resolve));
      await hub.infra.broker.subscribe(topicOf(ghost.tenantId, ghost.id, 'ack'), (_t, p) => resolveAck(JSON.parse(p.toString())), {
        qos: 1,
      });
      const handled = waitHandled(hub, (m) => m.channel === 'audio' && m.satelliteId === ghost.id);
      await hub.infra.broker.publish(topicOf(ghost.tenantId, ghost.id, 'audio'), JSON.stringify(body), { qos: 1 });
      assert.equal((await handled).outcome, 'refused');
      assert.deepEqual(await ack, { chunkId: body.chunkId, status: 'error', error: 'unknown satellite' });
      assert.equal(await rowsOf(body.chunkId), 0);
      assert.equal(await hub.infra.storage.stat(chunkStorageKey(ghost.tenantId, ghost.id, body.chunkId, new Date(body.recordedAt))), null);
    });

    test('a satellite of another team under this team in the topic → unknown satellite', async () => {
      const otherOwner = await f.user();
      const other = await f.team(otherOwner);
      const foreign = await RawSatellite.register(hub, otherOwner, other);
      sats.push(foreign);
      const body = audioBody({ id: foreign.id, tenantId: team.id });
      const handled = waitHandled(hub, (m) => m.channel === 'audio' && m.satelliteId === foreign.id && m.tenantId === team.id);
      await hub.infra.broker.publish(topicOf(team.id, foreign.id, 'audio'), JSON.stringify(body), { qos: 1 });
      const m = await handled;
      assert.equal(m.outcome, 'refused');
      assert.equal(m.reason, 'unknown satellite');
      assert.equal(await rowsOf(body.chunkId), 0);
    });

    test('redelivery of a stored chunk is acked stored again: still one row, one object, one job', async () => {
      const sat = await satellite();
      const jobsBefore = await jobs();
      const body = audioBody(sat);
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
      const stat1 = await hub.infra.storage.stat(keyOf(sat, body));
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
      assert.equal(await rowsOf(body.chunkId), 1);
      assert.deepEqual(await hub.infra.storage.stat(keyOf(sat, body)), stat1);
      assert.equal(await jobs(), jobsBefore + 1);
      assert.equal(sat.acksOf(body.chunkId).length, 3, 'one ack per delivery');
    });

    test('two deliveries of one chunk at the same time still make one row and one job', async () => {
      const sat = await satellite();
      const jobsBefore = await jobs();
      const body = audioBody(sat);
      const acks = Promise.all([
        sat.sendAudio(body, body.chunkId),
        sat.waitFor('ack', (b) => b.chunkId === body.chunkId && sat.acksOf(body.chunkId).length >= 2),
      ]);
      await sat.send('audio', body);
      const [a] = await acks;
      assert.equal(a.status, 'stored');
      assert.deepEqual(
        sat.acksOf(body.chunkId).map((x) => x.status),
        ['stored', 'stored'],
      );
      assert.equal(await rowsOf(body.chunkId), 1);
      assert.equal(await jobs(), jobsBefore + 1);
    });

    test('the hub killed between object write and row insert: the redelivered chunk completes with one row and one ack', async () => {
      const sat = await satellite();
      const jobsBefore = await jobs();
      const body = audioBody(sat);
      // What a crashed ingester left: the object, no row, no job, no ack.
      await hub.infra.storage.put(keyOf(sat, body), Buffer.from(body.audio as string, 'base64'));
      assert.equal(await rowsOf(body.chunkId), 0);
      const ack = await sat.sendAudio(body, body.chunkId);
      assert.deepEqual(ack, { chunkId: body.chunkId, status: 'stored' });
      assert.equal(await rowsOf(body.chunkId), 1);
      assert.ok(await hub.infra.storage.stat(keyOf(sat, body)));
      assert.equal(await jobs(), jobsBefore + 1);
      // A later message's ack comes after: nothing else was said about this chunk.
      const next = audioBody(sat);
      await sat.sendAudio(next, next.chunkId);
      assert.equal(sat.acksOf(body.chunkId).length, 1);
    });

    test('a row insert that fails keeps the object (the row may exist all the same), and the retry completes', async () => {
      // The database's answer can be lost after its commit, and with shared subscriptions another
      // dispatcher may be storing a redelivery of the same chunk under the same key: a failed
      // insert is no proof that no row points at the object, so the object must stay.
      const sat = await satellite();
      const body = audioBody(sat);
      const guard = `chunk_insert_fails_${crypto.randomBytes(3).toString('hex')}`;
      await hub.sql.query(`ALTER TABLE chunks ADD CONSTRAINT ${guard} CHECK (id <> '${body.chunkId}'::uuid) NOT VALID`);
      try {
        const refused = await sat.sendAudio(body, body.chunkId);
        assert.deepEqual(refused, {
          chunkId: body.chunkId,
          status: 'error',
          error: 'database unavailable, send again later',
          retryable: true,
        });
        assert.equal(await rowsOf(body.chunkId), 0);
        const kept = await hub.infra.storage.stat(keyOf(sat, body));
        assert.equal(kept?.size, Buffer.from(body.audio as string, 'base64').length, 'the object is kept');
      } finally {
        await hub.sql.query(`ALTER TABLE chunks DROP CONSTRAINT ${guard}`);
      }
      assert.deepEqual(await sat.sendAudio(body, body.chunkId), { chunkId: body.chunkId, status: 'stored' });
      assert.equal(await rowsOf(body.chunkId), 1);
      assert.ok(await hub.infra.storage.stat(keyOf(sat, body)));
    });

    test('a chunkId another satellite already used is refused, its chunk untouched', async () => {
      const a = await satellite();
      const b = await satellite();
      const body = audioBody(a);
      assert.equal((await a.sendAudio(body, body.chunkId)).status, 'stored');
      const ack = await b.sendAudio({ ...body, satelliteId: b.id }, body.chunkId);
      assert.equal(ack.status, 'error');
      assert.match(ack.error, /another satellite/);
      const row = await hub.sql.one<{ satellite_id: string }>('SELECT satellite_id FROM chunks WHERE id = $1', [body.chunkId]);
      assert.equal(row.satellite_id, a.id);
      assert.ok(await hub.infra.storage.stat(keyOf(a, body)), "the first satellite's audio is kept");
      assert.equal(await hub.infra.storage.stat(keyOf(b, body)), null, 'the refused delivery leaves no object behind');
    });

    test('after all the bad input the hub keeps serving', async () => {
      assert.equal((await api.get('/health')).status, 200);
      const sat = await satellite();
      const body = audioBody(sat);
      assert.equal((await sat.sendAudio(body, body.chunkId)).status, 'stored');
    });
  });

  describe('start-up recovery of inference jobs', () => {
    test('chunks of the last 24 hours without detections are enqueued again, idempotently; older or finished ones are left alone', async () => {
      const sat = await satellite();
      const insert = (id: string, receivedAt: Date) => makeChunk(hub, { satellite: sat, id, at: receivedAt });
      const ago = (ms: number) => new Date(hub.clock.now().getTime() - ms);
      // Rows whose jobs were lost (a restart of the in-process queue, a crash before the enqueue).
      const recent = crypto.randomUUID();
      const earlierToday = crypto.randomUUID();
      const old = crypto.randomUUID();
      const finished = crypto.randomUUID();
      await insert(recent, ago(10 * 60_000));
      await insert(earlierToday, ago(20 * 3600_000));
      await insert(old, ago(25 * 3600_000));
      await insert(finished, ago(5 * 60_000));
      // The worker's mark of a finished chunk: it has detections.
      await makeDetection(hub, { satellite: sat, chunkId: finished, at: ago(5 * 60_000), modelId: 'test' });
      // A silent chunk: the model hears nothing in it, and the worker marks it classified all the same
      // (issue 32: before, a bird-free chunk was offered again at every start).
      const stored = await sat.publishChunk({ species: [], seed: 9 });
      assert.equal(stored.ack.status, 'stored');
      const classified = await waitFor('the silent chunk classified', async () => {
        const row = await hub.sql.maybeOne<{ classifiedAt: Date | null }>(
          'SELECT classified_at AS "classifiedAt" FROM chunks WHERE id = $1',
          [stored.chunkId.toLowerCase()],
        );
        return row?.classifiedAt ?? null;
      });
      assert.ok(classified instanceof Date);
      assert.equal((await hub.sql.query('SELECT 1 FROM detections WHERE chunk_id = $1', [stored.chunkId.toLowerCase()])).length, 0);

      const offered: string[] = [];
      const spy = {
        enqueue: async <T extends object>(queue: string, id: string, data: T) => {
          offered.push(id);
          await hub.infra.queue.enqueue(queue, id, data);
        },
      };
      const jobsBefore = await jobs();
      const n = await requeueRecentChunks({ audio: hub.services.audio, clock: hub.clock, queue: spy });
      assert.equal(n, offered.length);
      assert.ok(offered.includes(recent) && offered.includes(earlierToday), 'lost chunks of the last 24 hours are offered');
      assert.ok(!offered.includes(old), 'older than 24 hours: left alone');
      assert.ok(!offered.includes(finished), 'a chunk with detections is done');
      assert.ok(!offered.includes(stored.chunkId.toLowerCase()), 'classified with no detection: done, not offered again');
      assert.equal(n, 2, `only the two lost chunks: ${offered.join(', ')}`);
      assert.equal(await jobs(), jobsBefore + 2, 'only the two lost jobs are new');
      assert.equal(await requeueRecentChunks({ audio: hub.services.audio, clock: hub.clock, queue: hub.infra.queue }), n);
      assert.equal(await jobs(), jobsBefore + 2, 'a second run adds nothing');
    });
  });

  describe('heartbeat', () => {
    const beat = (sat: RawSatellite, over: Record<string, unknown> = {}) => ({
      satelliteId: sat.id,
      tenantId: sat.tenantId,
      uptimeSeconds: 3600,
      state: 'recording',
      noiseFloorRms: 0.0042,
      version: '0.9.1',
      stream: 'satellite',
      timestamp: new Date().toISOString(),
      filterStats: { totalProcessed: 10, totalSent: 7, rejectedSilence: 3, rejectedClassifier: 0 },
      outboxStats: { totalBytes: 1000, ackedBytes: 800, unackedBytes: 200, rowCount: 5, unackedCount: 1, diskBytes: 1100 },
      ...over,
    });

    test('updates last seen, version, stream, state, uptime, noise floor, filter and outbox stats', async () => {
      const sat = await satellite();
      const handled = await sat.sendHandled('heartbeat', beat(sat));
      assert.equal(handled.outcome, 'done');
      const d = (await api.get(`/satellites/${sat.id}`, member)).body;
      assert.equal(d.online, true);
      assert.ok(Math.abs(new Date(d.lastSeenAt).getTime() - hub.clock.now().getTime()) < 5000);
      assert.deepEqual(
        {
          version: d.version,
          stream: d.stream,
          state: d.state,
          uptimeSeconds: d.uptimeSeconds,
          noiseFloorRms: d.noiseFloorRms,
          filterStats: d.filterStats,
          outboxStats: d.outboxStats,
        },
        {
          version: '0.9.1',
          stream: 'satellite',
          state: 'recording',
          uptimeSeconds: 3600,
          noiseFloorRms: 0.0042,
          filterStats: { totalProcessed: 10, totalSent: 7, rejectedSilence: 3, rejectedClassifier: 0 },
          outboxStats: { totalBytes: 1000, ackedBytes: 800, unackedBytes: 200, rowCount: 5, unackedCount: 1, diskBytes: 1100 },
        },
      );
    });

    test('clears update_status once the reported version equals the target, not before', async () => {
      const sat = await satellite();
      const upd = await api.post(`/satellites/${sat.id}/update`, undefined, member);
      assert.equal(upd.status, 200, upd.text);
      assert.equal(upd.body.targetVersion, HUB_VERSION);
      await sat.sendHandled('heartbeat', beat(sat, { version: '0.0.1-old' }));
      assert.equal((await api.get(`/satellites/${sat.id}`, member)).body.update_status, 'updating');
      await sat.sendHandled('heartbeat', beat(sat, { version: HUB_VERSION }));
      const d = (await api.get(`/satellites/${sat.id}`, member)).body;
      assert.equal(d.update_status, null);
      assert.equal(d.version, HUB_VERSION);
    });

    test('a heartbeat unarchives an archived satellite, audited device.satellite_unarchived_by_heartbeat', async () => {
      const sat = await satellite();
      assert.equal((await api.post(`/satellites/${sat.id}/archive`, undefined, member)).status, 200);
      assert.equal((await api.get(`/satellites/${sat.id}`, member)).body.archived, true);
      await sat.sendHandled('heartbeat', beat(sat));
      assert.equal((await api.get(`/satellites/${sat.id}`, member)).body.archived, false);
      const audit = await hub.sql.query<any>(
        `SELECT tenant_id, actor_type, details FROM audit_log WHERE action = 'device.satellite_unarchived_by_heartbeat' AND target_id = $1`,
        [sat.id],
      );
      assert.equal(audit.length, 1);
      assert.equal(audit[0].tenant_id, team.id);
      // A second heartbeat changes nothing more.
      await sat.sendHandled('heartbeat', beat(sat));
      assert.equal(
        (
          await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'device.satellite_unarchived_by_heartbeat' AND target_id = $1`, [
            sat.id,
          ])
        ).length,
        1,
      );
    });

    test('a malformed heartbeat is refused and changes nothing', async () => {
      const sat = await satellite();
      const m = await sat.sendHandled('heartbeat', beat(sat, { state: 'dancing' }));
      assert.equal(m.outcome, 'refused');
      assert.match(m.reason!, /state/);
      assert.equal((await api.get(`/satellites/${sat.id}`, member)).body.lastSeenAt, null);
      assert.equal((await sat.sendHandled('heartbeat', 'not json')).outcome, 'refused');
      assert.equal((await sat.sendHandled('heartbeat', beat(sat, { satelliteId: crypto.randomUUID() }))).outcome, 'refused');
    });
  });

  describe('telemetry', () => {
    test('is stored as a time series row', async () => {
      const sat = await satellite();
      const at = new Date(Date.now() - 60_000).toISOString();
      const m = await sat.sendHandled('telemetry', {
        satelliteId: sat.id,
        tenantId: sat.tenantId,
        batteryLevel: null,
        storageFreeBytes: 12_345_678_901,
        cpuTemp: 48.5,
        networkLatencyMs: 35,
        packetLossPct: 0.5,
        uptimeSeconds: 7200,
        timestamp: at,
      });
      assert.equal(m.outcome, 'done');
      const rows = await hub.sql.query<any>('SELECT * FROM telemetry WHERE satellite_id = $1', [sat.id]);
      assert.equal(rows.length, 1);
      assert.equal(new Date(rows[0].at).toISOString(), at);
      assert.equal(rows[0].tenant_id, team.id);
      assert.equal(rows[0].battery_level, null);
      assert.equal(Number(rows[0].storage_free_bytes), 12_345_678_901);
      assert.equal(rows[0].cpu_temp, 48.5);
      assert.equal(rows[0].network_latency_ms, 35);
      assert.equal(rows[0].packet_loss_pct, 0.5);
      assert.equal(rows[0].uptime_seconds, 7200);
      const bad = await sat.sendHandled('telemetry', { satelliteId: sat.id, tenantId: sat.tenantId, cpuTemp: 'hot' });
      assert.equal(bad.outcome, 'refused');
      assert.equal((await hub.sql.query('SELECT 1 FROM telemetry WHERE satellite_id = $1', [sat.id])).length, 1);
    });

    test('GET /satellites/:id/telemetry answers the latest samples oldest first; limit bounded; other teams 404', async () => {
      const sat = await satellite();
      const base = Date.now() - 10 * 60_000;
      for (const [i, battery] of [0.9, 0.8, 0.7].entries()) {
        const m = await sat.sendHandled('telemetry', {
          satelliteId: sat.id,
          tenantId: sat.tenantId,
          batteryLevel: battery,
          storageFreeBytes: 1000 - i,
          cpuTemp: 40 + i,
          timestamp: new Date(base + i * 60_000).toISOString(),
        });
        assert.equal(m.outcome, 'done');
      }
      const all = await api.get(`/satellites/${sat.id}/telemetry`, member);
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(
        all.body.telemetry.map((t: any) => t.batteryLevel),
        [0.9, 0.8, 0.7],
      );
      assert.deepEqual(
        all.body.telemetry.map((t: any) => t.storageFreeBytes),
        [1000, 999, 998],
      );
      assert.equal(all.body.telemetry[2].at, new Date(base + 120_000).toISOString());
      const latest = await api.get(`/satellites/${sat.id}/telemetry?limit=2`, member);
      assert.deepEqual(
        latest.body.telemetry.map((t: any) => t.cpuTemp),
        [41, 42],
      );
      assert.equal((await api.get(`/satellites/${sat.id}/telemetry?limit=0`, member)).status, 400);
      assert.equal((await api.get(`/satellites/${sat.id}/telemetry?limit=5000`, member)).status, 400);
      const stranger = await f.user();
      await f.team(stranger);
      assert.equal((await api.get(`/satellites/${sat.id}/telemetry?tenantId=${team.id}`, stranger)).status, 404);
    });
  });

  describe('config request', () => {
    test('with empty overrides: audited, and the effective config is pushed to the satellite', async () => {
      const sat = await satellite();
      const since = sat.received.length;
      await sat.send('config-request', { satelliteId: sat.id, tenantId: sat.tenantId, overrides: {} });
      const config = await sat.waitFor('config', () => true, 'config push', since);
      assert.equal(config.satelliteId, sat.id);
      assert.equal(config.tenantId, team.id);
      assert.equal(config.heartbeatIntervalSec, 30);
      assert.equal(config.recordingProfile.sampleRate, 48000);
      assert.deepEqual(config.excludedClassifierCategories.sort(), ['amphibian', 'anthropogenic', 'human_voice', 'insect', 'other_animal']);
      const audit = await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'device.satellite_config_requested' AND target_id = $1`, [
        sat.id,
      ]);
      assert.equal(audit.length, 1);
    });

    test('with overrides: stored at the satellite level with history source device, and pushed', async () => {
      const sat = await satellite();
      const since = sat.received.length;
      await sat.send('config-request', {
        satelliteId: sat.id,
        tenantId: sat.tenantId,
        overrides: { heartbeat_interval_sec: 45, filter_enabled: false },
      });
      const config = await sat.waitFor('config', (c) => c.heartbeatIntervalSec === 45, 'config push with the override', since);
      assert.equal(config.filterEnabled, false);
      const cfg = (await api.get(`/satellites/${sat.id}/config`, member)).body;
      assert.equal(cfg.overrides.heartbeat_interval_sec, 45);
      assert.equal(cfg.overrides.filter_enabled, false);
      const history = (await api.get(`/satellites/${sat.id}/config/history`, member)).body.history;
      assert.equal(history[0].source, 'device');
      assert.deepEqual(history[0].changes.heartbeatIntervalSec, { from: 30, to: 45 });
    });

    test('overrides a satellite may not set (admin-only, out of range, unknown) are refused; the unchanged config is pushed', async () => {
      const sat = await satellite();
      for (const overrides of [{ device_inference: true }, { heartbeat_interval_sec: 1 }, { not_a_field: 1 }]) {
        const since = sat.received.length;
        const handled = waitHandled(hub, (m) => m.channel === 'config-request' && m.satelliteId === sat.id);
        await sat.send('config-request', { satelliteId: sat.id, tenantId: sat.tenantId, overrides });
        const config = await sat.waitFor('config', () => true, 'config push', since);
        assert.equal(config.heartbeatIntervalSec, 30);
        assert.equal(config.deviceInference, false);
        assert.equal((await handled).outcome, 'refused');
      }
      const own = await hub.sql.query(`SELECT 1 FROM settings WHERE level = 'satellite' AND scope_id = $1`, [sat.id]);
      assert.equal(own.length, 0);
    });

    test('configLocked: overrides are refused with device.satellite_config_rejected_locked, nothing changes', async () => {
      const sat = await satellite();
      assert.equal((await api.put(`/satellites/${sat.id}/config`, { configLocked: true }, admin)).status, 200);
      const since = sat.received.length;
      await sat.send('config-request', { satelliteId: sat.id, tenantId: sat.tenantId, overrides: { heartbeat_interval_sec: 60 } });
      const config = await sat.waitFor('config', () => true, 'config push', since);
      assert.equal(config.heartbeatIntervalSec, 30);
      const audit = await hub.sql.query<any>(
        `SELECT tenant_id, details FROM audit_log WHERE action = 'device.satellite_config_rejected_locked' AND target_id = $1`,
        [sat.id],
      );
      assert.equal(audit.length, 1);
      assert.equal(audit[0].tenant_id, team.id);
      assert.deepEqual(audit[0].details.overrides, { heartbeat_interval_sec: 60 });
      assert.equal((await api.get(`/satellites/${sat.id}/config`, member)).body.overrides.heartbeat_interval_sec, null);
    });
  });

  describe('log response', () => {
    test('answers the open log request and is readable over HTTP', async () => {
      const sat = await satellite();
      const since = sat.received.length;
      const req = await api.post(`/satellites/${sat.id}/logs/request`, { tail: 3 }, member);
      assert.equal(req.status, 202, req.text);
      const asked = await sat.waitFor('log-request', () => true, 'log request', since);
      assert.equal(asked.requestId, req.body.requestId);
      const m = await sat.sendHandled('log-response', {
        satelliteId: sat.id,
        tenantId: sat.tenantId,
        requestId: asked.requestId,
        text: 'line one\nline two\nline three\n',
      });
      assert.equal(m.outcome, 'done');
      const logs = (await api.get(`/satellites/${sat.id}/logs`, member)).body.logs;
      assert.equal(logs.requestId, req.body.requestId);
      assert.deepEqual(logs.lines, ['line one', 'line two', 'line three']);
      assert.ok(logs.receivedAt);
      // Nothing open any more: a further response is refused.
      assert.equal(
        (await sat.sendHandled('log-response', { satelliteId: sat.id, tenantId: sat.tenantId, text: 'late' })).outcome,
        'refused',
      );
    });
  });
});
