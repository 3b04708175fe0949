/**
 * Live events and live listening over the WebSocket /ws/events (spec hub-http-api §6 items 1-2,
 * satellite protocol live-start / live-stop / live-audio, §8 live session 60 s). A real hub, a
 * satellite registered over HTTP speaking MQTT to the embedded broker, and `ws` clients
 * signing in with a bearer JWT or the session cookie. Time moves on the hub's clock and the
 * session timer is stepped with tick(); nothing sleeps.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import WebSocket from 'ws';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client, type Credential } from './helpers/http.ts';
import { SESSION_COOKIE } from '../src/core/cookies.ts';
import { LIVE_RESEND_MS, LIVE_SESSION_TIMEOUT_MS } from '../src/modules/live/hub.ts';

const WAIT_MS = 5000;

type Frame = { type: string } & Record<string, any>;

/** A WebSocket client that keeps every frame and waits for the next one of a type. */
interface Socket {
  ws: WebSocket;
  frames: Frame[];
  next(type: string, pred?: (f: Frame) => boolean): Promise<Frame>;
  send(frame: Record<string, unknown>): void;
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

/** Messages a satellite received, by channel. */
interface Sat {
  id: string;
  tenantId: string;
  mqtt: MqttClient;
  got: Record<string, any[]>;
  next(channel: string, pred?: (m: any) => boolean): Promise<any>;
  liveAudio(body: string): Promise<void>;
}

describe('live listening over the WebSocket', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  const open: Array<{ close(): unknown }> = [];

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
  });
  after(async () => {
    for (const o of open) await o.close();
    await hub.close();
  });

  const wsUrl = (query: Record<string, string>) => `${hub.url.replace(/^http/, 'ws')}/ws/events?${new URLSearchParams(query)}`;

  function headersOf(as: Credential | null): Record<string, string> {
    const h: Record<string, string> = {};
    if (as?.token) h.authorization = `Bearer ${as.token}`;
    if (as?.cookie) h.cookie = as.cookie;
    return h;
  }

  /** Opens a socket; resolves once the hub said hello, rejects with the HTTP status when refused. */
  function connect(query: Record<string, string>, as: Credential | null): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(wsUrl(query), { headers: headersOf(as) });
      const frames: Frame[] = [];
      const waiters: Array<{ type: string; pred: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
      const consumed = new Set<Frame>();
      const take = (w: (typeof waiters)[number]) => {
        const hit = frames.find((fr) => fr.type === w.type && !consumed.has(fr) && w.pred(fr));
        if (hit) {
          consumed.add(hit);
          w.resolve(hit);
          return true;
        }
        return false;
      };
      const closed = new Promise<{ code: number; reason: string }>((r) =>
        ws.on('close', (code, reason) => r({ code, reason: reason.toString() })),
      );
      const socket: Socket = {
        ws,
        frames,
        next(type, pred = () => true) {
          return new Promise((res, rej) => {
            const w = { type, pred, resolve: res };
            if (take(w)) return;
            waiters.push(w);
            setTimeout(
              () => rej(new Error(`no "${type}" frame within ${WAIT_MS} ms; got ${JSON.stringify(frames.map((x) => x.type))}`)),
              WAIT_MS,
            ).unref();
          });
        },
        send: (frame) => ws.send(JSON.stringify(frame)),
        closed,
        async close() {
          if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
          await closed;
        },
      };
      ws.on('message', (data) => {
        frames.push(JSON.parse(data.toString()));
        for (let i = waiters.length - 1; i >= 0; i--) if (take(waiters[i])) waiters.splice(i, 1);
        if (frames.length === 1) resolve(socket);
      });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () =>
          reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode, body: body ? JSON.parse(body) : null })),
        );
      });
      ws.on('error', (err) => reject(err));
      open.push(socket);
    });
  }

  async function refused(query: Record<string, string>, as: Credential | null): Promise<{ status: number; code: string }> {
    try {
      const s = await connect(query, as);
      await s.close();
    } catch (err) {
      const e = err as { status?: number; body?: { error?: { code?: string } } };
      assert.ok(e.status, `expected an HTTP refusal, got ${(err as Error).message}`);
      return { status: e.status, code: e.body?.error?.code ?? '' };
    }
    throw new Error('the socket was accepted');
  }

  /** A satellite registered over HTTP, connected over MQTT and subscribed to its own topics. */
  async function satellite(team: TestTeam, registrant: TestUser): Promise<Sat> {
    const res = await api.post('/satellites', { tenantId: team.id, name: 'Garden' }, registrant);
    assert.equal(res.status, 201, res.text);
    const { id, mqtt: creds } = res.body;
    const c = await mqtt.connectAsync(
      creds.brokerUrl,
      { clientId: `satellite-${id}`, username: creds.username, password: creds.password, protocolVersion: 4, reconnectPeriod: 0 },
      false,
    );
    open.push({ close: () => c.endAsync(true) });
    const got: Record<string, any[]> = {};
    const waiters: Array<{ channel: string; pred: (m: any) => boolean; resolve: (m: any) => void }> = [];
    c.on('message', (topic, payload) => {
      const channel = topic.split('/')[3];
      const text = payload.toString();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      (got[channel] ??= []).push(body);
      for (let i = waiters.length - 1; i >= 0; i--) {
        const w = waiters[i];
        if (w.channel === channel && w.pred(body)) {
          waiters.splice(i, 1);
          w.resolve(body);
        }
      }
    });
    await c.subscribeAsync(`chorus/${team.id}/${id}/+`, { qos: 1 });
    return {
      id,
      tenantId: team.id,
      mqtt: c,
      got,
      next(channel, pred = () => true) {
        return new Promise((resolve, reject) => {
          waiters.push({ channel, pred, resolve });
          setTimeout(() => reject(new Error(`satellite: no ${channel} within ${WAIT_MS} ms`)), WAIT_MS).unref();
        });
      },
      liveAudio: (body) => c.publishAsync(`chorus/${team.id}/${id}/live-audio`, body, { qos: 0 }).then(() => undefined),
    };
  }

  /**
   * Every hub publish to a satellite travels on one connection, in order: once a marker the hub
   * publishes after an action arrives, anything that action published has arrived too.
   */
  async function flush(sat: Sat): Promise<void> {
    const marker = `m-${Math.random()}`;
    const arrived = sat.next('update', (m) => m?.marker === marker);
    await hub.infra.broker.publish(`chorus/${sat.tenantId}/${sat.id}/update`, JSON.stringify({ marker }), { qos: 1 });
    await arrived;
  }

  const count = (sat: Sat, channel: string) => (sat.got[channel] ?? []).length;
  const wavBase64 = (n: number) => Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(n, n % 251)]).toString('base64');

  async function cookieOf(user: TestUser): Promise<Credential> {
    const s = await hub.infra.db.tx((tx) => hub.services.auth.issueSession(tx, user.id, '127.0.0.1', 'live-test'));
    return { cookie: `${SESSION_COOKIE}=${s.cookieToken}` };
  }

  describe('connecting: the guard runs on the upgrade request', () => {
    test('nobody signed in → 401; a bad bearer → 401', async () => {
      const w = await f.world();
      assert.deepEqual(await refused({ tenantId: w.team.id }, null), { status: 401, code: 'UNAUTHENTICATED' });
      assert.deepEqual(await refused({ tenantId: w.team.id }, { token: 'not-a-token' }), { status: 401, code: 'UNAUTHENTICATED' });
    });

    test('another team → 404; an unknown team → 404', async () => {
      const w = await f.world();
      assert.deepEqual(await refused({ tenantId: w.team.id }, w.otherOwner), { status: 404, code: 'NOT_FOUND' });
      assert.deepEqual(await refused({ tenantId: '00000000-0000-4000-8000-000000000000' }, w.member), { status: 404, code: 'NOT_FOUND' });
    });

    test('a person must name the team (400 TENANT_REQUIRED); a satellite key is refused (403)', async () => {
      const w = await f.world();
      assert.deepEqual(await refused({}, w.member), { status: 400, code: 'TENANT_REQUIRED' });
      const sat = await satellite(w.team, w.member);
      const key = (await api.post(`/satellites/${sat.id}/rotate-api-key`, {}, w.member)).body.apiKey;
      assert.deepEqual(await refused({ tenantId: w.team.id }, { token: key }), { status: 403, code: 'FORBIDDEN' });
    });

    test('a viewer connects with a bearer JWT, a member with the session cookie; hello names the team', async () => {
      const w = await f.world();
      const viewer = await connect({ tenantId: w.team.id }, w.viewer);
      assert.deepEqual(viewer.frames[0], { type: 'hello', tenantId: w.team.id, hubWide: false });
      const member = await connect({ tenantId: w.team.id }, await cookieOf(w.member));
      assert.equal(member.frames[0].type, 'hello');
      member.send({ type: 'keepalive' });
      assert.deepEqual(await member.next('keepalive-ack'), { type: 'keepalive-ack', watching: null });
      await viewer.close();
      await member.close();
    });

    test('a plain GET without an upgrade passes the same guard and answers 426 UPGRADE_REQUIRED', async () => {
      const w = await f.world();
      const plain = await fetch(`${hub.url}/ws/events?tenantId=${w.team.id}`, { headers: headersOf(w.viewer) });
      assert.equal(plain.status, 426);
      assert.equal((await plain.json()).error.code, 'UPGRADE_REQUIRED');
      assert.equal((await fetch(`${hub.url}/ws/events?tenantId=${w.team.id}`)).status, 401);
    });

    test('a frame that is not a JSON object with a type answers an error and keeps the socket', async () => {
      const w = await f.world();
      const s = await connect({ tenantId: w.team.id }, w.viewer);
      s.ws.send('not json');
      assert.equal((await s.next('error')).code, 'BAD_FRAME');
      s.send({ type: 'dance' });
      assert.equal((await s.next('error')).code, 'UNKNOWN_TYPE');
      s.send({ type: 'keepalive' });
      await s.next('keepalive-ack');
      await s.close();
    });
  });

  describe('listening', () => {
    test('a viewer may not listen: 403 at the upgrade with listenSatelliteId, an error frame for live-start', async () => {
      const w = await f.world();
      const sat = await satellite(w.team, w.member);
      assert.deepEqual(await refused({ tenantId: w.team.id, listenSatelliteId: sat.id }, w.viewer), { status: 403, code: 'FORBIDDEN' });
      const s = await connect({ tenantId: w.team.id }, w.viewer);
      s.send({ type: 'live-start', satelliteId: sat.id });
      const err = await s.next('error');
      assert.equal(err.code, 'FORBIDDEN');
      assert.equal(err.satelliteId, sat.id);
      assert.equal(hub.services.live.sessionOf(sat.id), null);
      s.send({ type: 'keepalive' });
      await s.next('keepalive-ack');
      assert.equal(s.ws.readyState, WebSocket.OPEN, 'the socket stays open for events');
      await flush(sat);
      assert.equal(count(sat, 'live-start'), 0, 'nothing reached the satellite');
      await s.close();
    });

    test("a member's socket receives the satellite's live audio; the listening is audited once", async () => {
      const w = await f.world();
      const sat = await satellite(w.team, w.member);
      const startAtSat = sat.next('live-start');
      const s = await connect({ tenantId: w.team.id, listenSatelliteId: sat.id }, w.member);
      const started = await s.next('live-started');
      assert.equal(started.satelliteId, sat.id);
      const live = await startAtSat;
      assert.deepEqual(live, { sessionId: started.sessionId });

      const raw = wavBase64(3000);
      await sat.liveAudio(raw);
      const frame = await s.next('live-audio');
      assert.deepEqual(frame, { type: 'live-audio', tenantId: w.team.id, satelliteId: sat.id, sessionId: started.sessionId, audio: raw });
      const wrapped = wavBase64(10);
      await sat.liveAudio(JSON.stringify({ sessionId: started.sessionId, audio: wrapped }));
      assert.equal((await s.next('live-audio')).audio, wrapped);

      const rows = await hub.sql.query<any>(
        `SELECT action, tenant_id, actor_user_id, target_type, target_id, details FROM audit_log WHERE action = 'satellite.listened_live' AND target_id = $1`,
        [sat.id],
      );
      assert.equal(rows.length, 1);
      assert.equal(rows[0].tenant_id, w.team.id);
      assert.equal(rows[0].actor_user_id, w.member.id);
      assert.equal(rows[0].target_type, 'satellite');
      assert.equal((typeof rows[0].details === 'string' ? JSON.parse(rows[0].details) : rows[0].details).sessionId, started.sessionId);

      // A second live-start for the same satellite is a keepalive, not a second listening.
      s.send({ type: 'live-start', satelliteId: sat.id });
      assert.equal((await s.next('live-started')).sessionId, started.sessionId);
      assert.equal(
        (await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'satellite.listened_live' AND target_id = $1`, [sat.id])).length,
        1,
      );
      await s.close();
    });

    test('two watchers: live-start reaches the satellite once; live-stop when the last one leaves', async () => {
      const w = await f.world();
      const sat = await satellite(w.team, w.member);
      const a = await connect({ tenantId: w.team.id }, w.member);
      const b = await connect({ tenantId: w.team.id }, w.admin);
      a.send({ type: 'live-start', satelliteId: sat.id });
      const sa = await a.next('live-started');
      b.send({ type: 'live-start', satelliteId: sat.id });
      const sb = await b.next('live-started');
      assert.equal(sb.sessionId, sa.sessionId, 'one session per satellite');
      assert.equal(hub.services.live.sessionOf(sat.id)?.watchers, 2);

      // Both watchers get the audio.
      const raw = wavBase64(64);
      await sat.liveAudio(raw);
      assert.equal((await a.next('live-audio')).audio, raw);
      assert.equal((await b.next('live-audio')).audio, raw);

      a.send({ type: 'live-stop' });
      assert.deepEqual(await a.next('live-stopped'), {
        type: 'live-stopped',
        satelliteId: sat.id,
        sessionId: sa.sessionId,
        reason: 'stopped',
      });
      await flush(sat);
      assert.equal(count(sat, 'live-start'), 1, 'live-start was sent once');
      assert.equal(count(sat, 'live-stop'), 0, 'one watcher left: no live-stop yet');

      const stop = sat.next('live-stop');
      await b.close(); // leaving by closing the socket
      assert.deepEqual(await stop, { sessionId: sa.sessionId });
      assert.equal(hub.services.live.sessionOf(sat.id), null);
      await flush(sat);
      assert.equal(count(sat, 'live-start'), 1);
      assert.equal(count(sat, 'live-stop'), 1);
      await a.close();
    });

    test('live-start is re-sent every 20 s; 60 s without a keepalive ends the session with live-stop', async () => {
      const w = await f.world();
      const sat = await satellite(w.team, w.member);
      const s = await connect({ tenantId: w.team.id, listenSatelliteId: sat.id }, w.member);
      const { sessionId } = await s.next('live-started');
      await flush(sat);
      assert.equal(count(sat, 'live-start'), 1);

      hub.clock.advance(LIVE_RESEND_MS - 1000);
      await hub.services.live.tick();
      await flush(sat);
      assert.equal(count(sat, 'live-start'), 1, 'not yet 20 s');

      hub.clock.advance(1000);
      await hub.services.live.tick();
      await flush(sat);
      assert.equal(count(sat, 'live-start'), 2, 're-sent after 20 s');
      assert.deepEqual(sat.got['live-start'][1], { sessionId });

      // A keepalive at 50 s carries the session past 60 s from its start.
      hub.clock.advance(30_000);
      s.send({ type: 'keepalive' });
      assert.deepEqual(await s.next('keepalive-ack'), { type: 'keepalive-ack', watching: sat.id });
      hub.clock.advance(LIVE_SESSION_TIMEOUT_MS - 1000);
      await hub.services.live.tick();
      await flush(sat);
      assert.equal(count(sat, 'live-stop'), 0, '59 s since the keepalive');
      assert.ok(hub.services.live.sessionOf(sat.id));

      const stop = sat.next('live-stop');
      hub.clock.advance(1000);
      await hub.services.live.tick();
      assert.deepEqual(await stop, { sessionId });
      assert.deepEqual(await s.next('live-stopped'), { type: 'live-stopped', satelliteId: sat.id, sessionId, reason: 'keepalive_timeout' });
      assert.equal(hub.services.live.sessionOf(sat.id), null);

      // Starting again opens a new session.
      s.send({ type: 'live-start', satelliteId: sat.id });
      const again = await s.next('live-started');
      assert.notEqual(again.sessionId, sessionId);
      await s.close();
    });

    test("a tenant sent in a message is ignored: the socket's team decides", async () => {
      const owner = await f.user();
      const teamA = await f.team(owner);
      const teamB = await f.team(owner);
      const both = await f.member(teamA, 'member');
      await f.addMember(teamB, both, 'admin');
      const satA = await satellite(teamA, both);
      const satB = await satellite(teamB, both);
      const s = await connect({ tenantId: teamA.id }, both);
      // The satellite of team B, naming team B in the message: refused, the socket belongs to team A.
      s.send({ type: 'live-start', satelliteId: satB.id, tenantId: teamB.id });
      assert.equal((await s.next('error')).code, 'NOT_FOUND');
      assert.equal(hub.services.live.sessionOf(satB.id), null);
      // The satellite of team A, naming team B: the message's team is ignored and listening starts.
      s.send({ type: 'live-start', satelliteId: satA.id, tenantId: teamB.id });
      assert.equal((await s.next('live-started')).satelliteId, satA.id);
      // An unknown satellite is out of reach too.
      s.send({ type: 'live-start', satelliteId: '00000000-0000-4000-8000-000000000000' });
      assert.equal((await s.next('error')).code, 'NOT_FOUND');
      await flush(satB);
      assert.equal(count(satB, 'live-start'), 0);
      await s.close();
    });

    test('switching to another satellite stops the first session', async () => {
      const w = await f.world();
      const one = await satellite(w.team, w.member);
      const two = await satellite(w.team, w.member);
      const s = await connect({ tenantId: w.team.id, listenSatelliteId: one.id }, w.member);
      const first = await s.next('live-started');
      const stopOne = one.next('live-stop');
      s.send({ type: 'live-start', satelliteId: two.id });
      assert.equal((await s.next('live-started')).satelliteId, two.id);
      assert.deepEqual(await stopOne, { sessionId: first.sessionId });
      await s.close();
    });
  });

  describe('an open socket stays within what its credential allows', () => {
    test('checked every 60 s: out of the team → 4403, signed out → 4401, demoted to viewer → listening stops', async () => {
      const w = await f.world();
      const sat = await satellite(w.team, w.member);
      const leaver = await f.member(w.team, 'member');
      const out = await connect({ tenantId: w.team.id }, leaver);
      const signedOut = await connect({ tenantId: w.team.id }, w.viewer);
      const demoted = await connect({ tenantId: w.team.id, listenSatelliteId: sat.id }, w.member);
      const { sessionId } = await demoted.next('live-started');

      await hub.sql.query('DELETE FROM memberships WHERE id = $1', [leaver.membershipId]);
      await hub.sql.query('DELETE FROM sessions WHERE id = $1', [w.viewer.sessionId]);
      await hub.sql.query(`UPDATE memberships SET role = 'viewer' WHERE id = $1`, [w.member.membershipId]);
      // Within the minute nothing is re-read.
      await hub.services.live.tick();
      assert.equal(out.ws.readyState, WebSocket.OPEN);

      const stop = sat.next('live-stop');
      hub.clock.advance(61_000);
      await hub.services.live.tick();
      assert.equal((await out.closed).code, 4403);
      assert.equal((await signedOut.closed).code, 4401);
      assert.deepEqual(await demoted.next('live-stopped'), { type: 'live-stopped', satelliteId: sat.id, sessionId, reason: 'forbidden' });
      assert.deepEqual(await stop, { sessionId });
      assert.equal(demoted.ws.readyState, WebSocket.OPEN, 'a viewer keeps the events');
      await demoted.close();
    });
  });

  describe('team events', () => {
    test("sendToTeam reaches the team's sockets and hub admins' sockets, never another team's", async () => {
      const w = await f.world();
      const mine = await connect({ tenantId: w.team.id }, w.viewer);
      const other = await connect({ tenantId: w.otherTeam.id }, w.otherOwner);
      const adminWide = await connect({}, w.hubAdmin);
      assert.deepEqual(adminWide.frames[0], { type: 'hello', tenantId: null, hubWide: true });

      await hub.services.live.sendToTeam(w.team.id, { type: 'detection', speciesCode: 'eurrob1', confidence: 0.9 });
      await hub.services.live.sendToTeam(w.otherTeam.id, { type: 'detection', speciesCode: 'grtit1', confidence: 0.8 });
      assert.deepEqual(await mine.next('detection'), { type: 'detection', speciesCode: 'eurrob1', confidence: 0.9, tenantId: w.team.id });
      // The other team's first detection is its own: the first team's never reached it.
      assert.equal((await other.next('detection')).speciesCode, 'grtit1');
      assert.equal((await adminWide.next('detection')).tenantId, w.team.id);
      assert.equal((await adminWide.next('detection')).tenantId, w.otherTeam.id);
      await Promise.all([mine.close(), other.close(), adminWide.close()]);
    });
  });
});
