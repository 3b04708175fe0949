/**
 * BirdWeather station upload (issue 38 point 2): a team's birdweather channel posts each
 * detection as BirdNET-Pi does — the chunk's WAV as a soundscape, then the detection JSON naming
 * it — to a local server playing the station API. It answers 500 once to show the webhook retry
 * policy; the token sits in the path and never in a response or a stored error; a sensitive
 * species is never uploaded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { ALERT_ENV } from './helpers/alerts.ts';
import { queueSettled, waitFor } from './helpers/wait.ts';
import { RawSatellite } from './helpers/raw-satellite.ts';
import { startReceiver, type Received, type Receiver } from './helpers/receivers.ts';
import { SPECIES } from '../src/satellite/soundscape.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { ALERT_DELIVERY_QUEUE } from '../src/modules/alerts/dispatch.ts';
import { parseWav } from '../src/protocol/wav.ts';

const TOKEN = 'stationTokenAbc123XYZ';
const robin = SPECIES[4]!;
const robinCode = speciesCatalog().byLabel(robin.label)!.code;

/** The station API as BirdNET-Pi meets it; `failNext` answers the next soundscape upload 500. */
async function stationApi() {
  let nextId = 1000;
  const state = { failNext: false };
  const receiver = await startReceiver((r: Received) => {
    if (r.path.includes('/soundscapes')) {
      if (state.failNext) {
        state.failNext = false;
        return { status: 500, body: 'try later' };
      }
      const id = nextId++;
      return {
        status: 201,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          success: true,
          soundscape: { id, stationId: 7, timestamp: 'x', url: null, filesize: r.body.length, extension: 'wav', duration: 3 },
        }),
      };
    }
    if (r.path.endsWith('/detections')) return { status: 201, headers: { 'content-type': 'application/json' }, body: '{"success":true}' };
    return { status: 404 };
  });
  return { receiver, state };
}

describe('BirdWeather station upload', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  let station: Awaited<ReturnType<typeof stationApi>>;
  let r: Receiver;
  let channelId: string;
  const bodies: string[] = [];
  const logs: string[] = [];

  before(async () => {
    station = await stationApi();
    r = station.receiver;
    hub = await startHub({ env: ALERT_ENV });
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    // Everything the hub logs from here on, searched for the token at the end.
    const log = hub.infra.log as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const level of ['info', 'warn', 'error', 'debug']) {
      const orig = log[level]!.bind(log);
      log[level] = (...a: unknown[]) => {
        logs.push(JSON.stringify(a, (_k, v) => (v instanceof Error ? `${v.message} ${v.stack}` : v)));
        return orig(...a);
      };
    }
  });
  after(async () => {
    await hub?.close();
    await r?.close();
  });

  test('settings: the token is required and never shown; the API URL must be http(s)', async () => {
    const post = (config: Record<string, unknown>) =>
      api.post('/alert-rules/channels', { tenantId: team.id, type: 'birdweather', name: 'BW', config }, owner);
    assertError(await post({}), 400, 'INVALID_CHANNEL_CONFIG');
    assertError(await post({ stationToken: TOKEN, apiUrl: 'ftp://127.0.0.1/' }), 400, 'INVALID_CHANNEL_CONFIG');
    assertError(await post({ stationToken: TOKEN, brokerUrl: 'mqtt://127.0.0.1' }), 400, 'INVALID_CHANNEL_CONFIG');
    assertError(await post({ stationToken: 'has space' }), 400, 'VALIDATION_FAILED');
    assertError(await post({ stationToken: TOKEN, apiUrl: 'http://10.9.8.7/' }), 400, 'URL_NOT_ALLOWED');
    const res = await post({ stationToken: TOKEN, apiUrl: r.url, minConfidence: 0.05 });
    bodies.push(res.text ?? '');
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.config, { apiUrl: r.url, minConfidence: 0.05 });
    assert.equal(res.body.hasSecret, true);
    channelId = res.body.id;
    const list = await api.get(`/alert-rules/channels?tenantId=${team.id}`, owner);
    bodies.push(list.text ?? '');
    const defaulted = await post({ stationToken: TOKEN });
    assert.equal(defaulted.body.config.apiUrl, 'https://app.birdweather.com');
    assert.equal((await api.del(`/alert-rules/channels/${defaulted.body.id}`, owner)).status, 204);
  });

  test('the test button uploads a sample soundscape and detection to the station', async () => {
    const res = await api.post(`/alert-rules/channels/${channelId}/test`, {}, owner);
    bodies.push(res.text ?? '');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.delivered, true, res.text);
    assert.equal(res.body.status, 201);
    const [sc, det] = r.received.slice(-2);
    assert.match(sc!.path, new RegExp(`^/api/v1/stations/${TOKEN}/soundscapes\\?timestamp=`));
    assert.equal(parseWav(sc!.body).ok, true);
    assert.equal(det!.path, `/api/v1/stations/${TOKEN}/detections`);
    assert.equal(JSON.parse(det!.body.toString()).commonName, 'Eurasian Wren');
    r.received.length = 0;
  });

  describe('detections are uploaded', () => {
    let sat: RawSatellite;
    before(async () => {
      sat = await RawSatellite.register(hub, owner, team, 'Meadow');
      station.state.failNext = true;
      const { ack, chunkId } = await sat.publishChunk({
        species: [robin.label],
        seed: 77,
        recordedAt: new Date(hub.clock.now().getTime() - 60_000),
      });
      assert.equal(ack.status, 'stored');
      (sat as unknown as { lastChunk: string }).lastChunk = chunkId;
      await queueSettled(hub.infra.queue, INFERENCE_QUEUE);
      await waitFor('the deliveries to settle', async () => {
        await queueSettled(hub.infra.queue, ALERT_DELIVERY_QUEUE);
        const open = await hub.sql.one<{ n: number }>(
          "SELECT count(*)::int AS n FROM alert_deliveries WHERE channel_id = $1 AND status IN ('pending', 'retrying')",
          [channelId],
        );
        return open.n === 0;
      });
    });
    after(() => sat.close());

    test('the soundscape is the chunk WAV, the detection JSON has the documented shape, token in the path', async () => {
      const chunkId = (sat as unknown as { lastChunk: string }).lastChunk;
      const chunk = await hub.sql.one<{ recorded_at: Date }>('SELECT recorded_at FROM chunks WHERE id = $1', [chunkId]);
      const stored = await hub.services.audio.bytesOf(team.id, chunkId);
      const soundscapes = r.received.filter((x) => x.path.includes('/soundscapes'));
      const detections = r.received.filter((x) => x.path.endsWith('/detections'));
      assert.ok(detections.length >= 1);
      const okUploads = soundscapes.slice(1); // the first was answered 500
      assert.equal(okUploads.length, detections.length);
      for (const s of soundscapes) {
        assert.equal(s.headers['content-type'], 'audio/wav');
        assert.ok(s.body.equals(stored!), 'the soundscape is the stored chunk, byte for byte');
        const ts = new URL(s.path, 'http://x').searchParams.get('timestamp');
        assert.equal(ts, new Date(chunk.recorded_at).toISOString());
        assert.ok(s.path.startsWith(`/api/v1/stations/${TOKEN}/`));
      }
      const body = JSON.parse(
        detections.find((d) => JSON.parse(d.body.toString()).scientificName === robin.scientificName)!.body.toString(),
      );
      assert.deepEqual(Object.keys(body).sort(), [
        'algorithm',
        'commonName',
        'confidence',
        'lat',
        'lon',
        'scientificName',
        'soundscapeEndTime',
        'soundscapeId',
        'soundscapeStartTime',
        'timestamp',
      ]);
      assert.equal(body.lat, 52.09);
      assert.equal(body.lon, 5.12);
      assert.equal(typeof body.soundscapeId, 'number');
      assert.ok(body.soundscapeStartTime >= 0 && body.soundscapeEndTime <= 3 && body.soundscapeStartTime < body.soundscapeEndTime);
      assert.ok(body.confidence > 0 && body.confidence <= 1);
      assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
    });

    test('a 500 is retried like a webhook: the delivery succeeds on its second attempt', async () => {
      const rows = await hub.sql.query<{ status: string; attempts: number }>(
        "SELECT status, attempts FROM alert_deliveries WHERE channel_id = $1 AND event = 'detection' ORDER BY attempts DESC",
        [channelId],
      );
      assert.ok(rows.length >= 1);
      assert.ok(rows.every((x) => x.status === 'delivered'));
      assert.equal(rows[0]!.attempts, 2);
    });

    test('a sensitive species is never uploaded', async () => {
      const put = await api.put(`/settings/tenant?tenantId=${team.id}`, { sensitive_species_extra: [robinCode] }, owner);
      assert.equal(put.status, 200, put.text);
      const before = r.received.length;
      const { ack } = await sat.publishChunk({
        species: [robin.label],
        seed: 78,
        recordedAt: new Date(hub.clock.now().getTime() - 30_000),
      });
      assert.equal(ack.status, 'stored');
      await queueSettled(hub.infra.queue, INFERENCE_QUEUE);
      await queueSettled(hub.infra.queue, ALERT_DELIVERY_QUEUE);
      const robinRows = await hub.sql.query<{ id: string }>(
        'SELECT id FROM detections WHERE satellite_id = $1 AND species_code = $2 AND call_id IS NULL ORDER BY detected_at DESC',
        [sat.id, robinCode],
      );
      assert.ok(robinRows.length >= 2, 'the second robin was detected');
      const later = r.received.slice(before).map((x) => x.body.toString());
      assert.ok(!later.some((b) => b.includes(robin.scientificName)), 'nothing about the sensitive species reached the station');
      const queued = await hub.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM alert_deliveries WHERE channel_id = $1 AND payload->>'detectionId' = $2",
        [channelId, robinRows[0]!.id],
      );
      assert.equal(queued[0]!.n, 0);
    });

    test('the token is in no response, no stored delivery error and no log line', async () => {
      for (const b of bodies) assert.ok(!b.includes(TOKEN));
      const list = await api.get(`/alert-rules/channels/${channelId}/deliveries`, owner);
      assert.equal(list.status, 200);
      assert.ok(!list.text!.includes(TOKEN));
      for (const line of logs) assert.ok(!line.includes(TOKEN), line);
    });
  });
});
