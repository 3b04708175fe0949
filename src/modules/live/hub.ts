/**
 * Live events over the WebSocket (spec hub-http-api §6 "WebSocket"): the sockets of this process,
 * the live-listening sessions they hold, and the fan-out of team events.
 *
 * A session is per satellite and per hub process: the first socket that starts watching a
 * satellite publishes `live-start {sessionId}` (QoS 1), the hub re-sends it every 20 s while
 * anyone watches (the satellite ends a session after 60 s without one, satellite protocol §8),
 * and publishes `live-stop {sessionId}` when the last watcher leaves or when no watcher sent a
 * keepalive for 60 s. Time comes from the injected clock; `tick()` is the timer step, called by
 * an interval in production and by tests after they move the clock.
 */
import crypto from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Db } from '../../infra/db/index.ts';
import type { Bus, BusEvents } from '../../infra/bus/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { type Actor, type Auth, type Role, roleAtLeast, roleIn } from '../../core/actor.ts';
import { AppError, forbidden, notFound } from '../../core/errors.ts';
import { isUuid, TEAM_OUT_OF_REACH } from '../../core/guard.ts';
import type { DeviceFacts } from '../../core/permissions.ts';
import type { BrokerCommands } from '../satellites/service.ts';
import { topicOf } from '../../protocol/topics.ts';

/** The hub re-sends live-start this often while someone watches. */
export const LIVE_RESEND_MS = 20_000;
/** A session ends when no watcher sent a keepalive for this long (and on the satellite without a re-sent live-start). */
export const LIVE_SESSION_TIMEOUT_MS = 60_000;
/** How often the production timer calls tick(). */
export const LIVE_TICK_MS = 5_000;
/** An open socket's credential and membership are read again this often (closed with 4401/4403 when gone). */
export const LIVE_RECHECK_MS = 60_000;
/** Close codes: credential ended; no longer in the socket's team (or no longer a hub admin on a hub-wide socket). */
export const CLOSE_UNAUTHENTICATED = 4401;
export const CLOSE_FORBIDDEN = 4403;
/** Live-audio frames are dropped for a socket whose send buffer holds more than this (a slow client). */
export const MAX_BUFFERED_BYTES = 2 * 1024 * 1024;

/** Why a watcher's session ended, as sent in `live-stopped`. */
export type StopReason = 'stopped' | 'switched' | 'keepalive_timeout' | 'forbidden';

export interface LiveClient {
  readonly id: string;
  /** The socket's team; null for a hub admin's hub-wide socket (no tenantId at connection). */
  readonly tenantId: string | null;
  /** Hub admins' sockets also receive every team's events (spec: "except for hub admins"); re-read on each check. */
  hubAdmin: boolean;
  /** Reads the socket's credential again (null: it has ended). */
  recheck: () => Promise<Auth | null>;
  /** Clock time of the last credential check. */
  checkedAt: number;
  /** The satellite this socket watches, if any (one at a time). */
  watching: string | null;
  send(frame: LiveFrame): void;
  close(code: number, reason: string): void;
}

export type LiveFrame = { type: string } & Record<string, unknown>;

interface Session {
  satelliteId: string;
  tenantId: string;
  sessionId: string;
  watchers: Set<LiveClient>;
  lastKeepaliveAt: number;
  lastStartAt: number;
  started: Promise<void>;
}

export interface LiveHubDeps {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  bus: Bus;
  broker: Pick<BrokerCommands, 'publish'>;
  deviceFacts: (satelliteId: string) => Promise<DeviceFacts | null>;
  warn?: (obj: object, msg: string) => void;
}

export function createLiveHub(deps: LiveHubDeps) {
  const { db, clock, audit, bus, broker } = deps;
  const warn = deps.warn ?? (() => {});
  const clients = new Set<LiveClient>();
  const sessions = new Map<string, Session>();

  const publish = (s: Session, channel: 'live-start' | 'live-stop') =>
    broker.publish(topicOf(s.tenantId, s.satelliteId, channel), JSON.stringify({ sessionId: s.sessionId }), { qos: 1 });

  async function endSession(s: Session, reason: StopReason, notify: boolean): Promise<void> {
    if (sessions.get(s.satelliteId) === s) sessions.delete(s.satelliteId);
    for (const w of s.watchers) {
      if (w.watching === s.satelliteId) w.watching = null;
      if (notify) w.send({ type: 'live-stopped', satelliteId: s.satelliteId, sessionId: s.sessionId, reason });
    }
    s.watchers.clear();
    await publish(s, 'live-stop').catch((err) => warn({ err, satelliteId: s.satelliteId }, 'live: live-stop failed'));
  }

  /**
   * Spec §6 item 2: member+ in the satellite's own team, which must be the socket's team. Unknown
   * satellites and satellites of another team answer 404, a role below member 403.
   */
  async function authorizeListen(auth: Auth, socketTeam: string | null, satelliteId: unknown): Promise<{ tenantId: string; role: Role }> {
    if (!isUuid(satelliteId)) throw notFound(TEAM_OUT_OF_REACH);
    const facts = await deps.deviceFacts(satelliteId);
    if (!facts) throw notFound(TEAM_OUT_OF_REACH);
    if (socketTeam !== null && facts.tenantId !== socketTeam) throw notFound(TEAM_OUT_OF_REACH);
    const role: Role | null = auth.isPlatformAdmin ? 'owner' : roleIn(auth, facts.tenantId);
    if (!role) throw notFound(TEAM_OUT_OF_REACH);
    if (!roleAtLeast(role, 'member')) throw forbidden("Listening live needs the member role or higher in the satellite's team");
    return { tenantId: facts.tenantId, role };
  }

  async function stopWatching(
    client: LiveClient,
    reason: StopReason = 'stopped',
  ): Promise<{ satelliteId: string; sessionId: string } | null> {
    const satelliteId = client.watching;
    if (!satelliteId) return null;
    client.watching = null;
    const s = sessions.get(satelliteId);
    if (!s || !s.watchers.has(client)) return null;
    s.watchers.delete(client);
    if (s.watchers.size === 0) await endSession(s, reason, false);
    return { satelliteId, sessionId: s.sessionId };
  }

  /**
   * A socket stays within what its credential allows: signed out → 4401; out of its team (or no
   * longer a hub admin on a hub-wide socket) → 4403; a role below member stops its listening.
   */
  async function recheck(c: LiveClient, now: number): Promise<void> {
    c.checkedAt = now;
    const auth = await c.recheck();
    if (!clients.has(c)) return;
    if (!auth) {
      await dropClient(c, CLOSE_UNAUTHENTICATED, 'sign-in ended');
      return;
    }
    c.hubAdmin = auth.isPlatformAdmin;
    const role: Role | null = auth.isPlatformAdmin ? 'owner' : c.tenantId ? roleIn(auth, c.tenantId) : null;
    if (!role) {
      await dropClient(c, CLOSE_FORBIDDEN, c.tenantId ? 'no longer in this team' : 'no longer a hub admin');
      return;
    }
    if (c.watching && !roleAtLeast(role, 'member')) {
      const stopped = await stopWatching(c, 'forbidden');
      if (stopped) c.send({ type: 'live-stopped', ...stopped, reason: 'forbidden' });
    }
  }

  async function dropClient(c: LiveClient, code: number, reason: string): Promise<void> {
    clients.delete(c);
    await stopWatching(c, 'stopped');
    c.close(code, reason);
  }

  /**
   * The timer step: re-sends live-start every 20 s, ends sessions 60 s after the last keepalive,
   * and re-reads each socket's credential every 60 s.
   */
  async function tick(): Promise<void> {
    const now = clock.now().getTime();
    for (const c of [...clients]) {
      if (now - c.checkedAt >= LIVE_RECHECK_MS) await recheck(c, now).catch((err) => warn({ err }, 'live: socket check failed'));
    }
    for (const s of [...sessions.values()]) {
      if (now - s.lastKeepaliveAt >= LIVE_SESSION_TIMEOUT_MS) {
        await endSession(s, 'keepalive_timeout', true);
      } else if (now - s.lastStartAt >= LIVE_RESEND_MS) {
        s.lastStartAt = now;
        await publish(s, 'live-start').catch((err) => warn({ err, satelliteId: s.satelliteId }, 'live: live-start re-send failed'));
      }
    }
  }

  /** A live-audio chunk relayed from the satellite: sent to the sockets watching it. */
  function deliverAudio(e: BusEvents['satellite.live_audio']): void {
    const s = sessions.get(e.satelliteId);
    if (!s || s.tenantId !== e.tenantId) return;
    const frame: LiveFrame = {
      type: 'live-audio',
      tenantId: s.tenantId,
      satelliteId: s.satelliteId,
      sessionId: s.sessionId,
      audio: e.audio,
    };
    for (const w of s.watchers) w.send(frame);
  }

  /** The local half of sendToTeam: this process's sockets of the team, and hub admins' sockets. */
  function deliverToTeam(tenantId: string, event: LiveFrame): void {
    const frame = { ...event, tenantId };
    for (const c of clients) if (c.tenantId === tenantId || c.hubAdmin) c.send(frame);
  }

  return {
    authorizeListen,

    /** Registers a socket; it receives team events from now on. */
    connect(client: LiveClient): void {
      clients.add(client);
    },

    /** The socket closed: it stops watching (live-stop when it was the last watcher). */
    async disconnect(client: LiveClient): Promise<void> {
      clients.delete(client);
      await stopWatching(client, 'stopped');
    },

    /**
     * Starts (or joins) the live session of a satellite for a socket. `auth` is read fresh for
     * each start, so a role change counts at once. Audited `satellite.listened_live` once per start.
     */
    async startWatching(
      client: LiveClient,
      auth: Auth,
      ip: string,
      satelliteId: unknown,
    ): Promise<{ satelliteId: string; sessionId: string }> {
      const { tenantId, role } = await authorizeListen(auth, client.tenantId, satelliteId);
      const id = satelliteId as string;
      if (!clients.has(client)) throw new AppError(409, 'SOCKET_CLOSED', 'The socket closed');
      const now = clock.now().getTime();
      if (client.watching === id) {
        const current = sessions.get(id);
        if (current) {
          current.lastKeepaliveAt = now;
          return { satelliteId: id, sessionId: current.sessionId };
        }
      }
      if (client.watching) await stopWatching(client, 'switched');
      let s = sessions.get(id);
      if (!s) {
        const fresh: Session = {
          satelliteId: id,
          tenantId,
          sessionId: crypto.randomUUID(),
          watchers: new Set(),
          lastKeepaliveAt: now,
          lastStartAt: now,
          started: Promise.resolve(),
        };
        fresh.started = publish(fresh, 'live-start');
        sessions.set(id, fresh);
        s = fresh;
      }
      s.watchers.add(client);
      client.watching = id;
      s.lastKeepaliveAt = now;
      try {
        await s.started;
      } catch (err) {
        warn({ err, satelliteId: id }, 'live: live-start failed');
        if (sessions.get(id) === s) sessions.delete(id);
        for (const w of s.watchers) if (w.watching === id) w.watching = null;
        s.watchers.clear();
        throw err instanceof AppError
          ? err
          : new AppError(503, 'BROKER_UNAVAILABLE', 'The satellite could not be reached through the broker');
      }
      const actor: Actor = { ...auth, ip, teamId: tenantId, teamRole: role, declaredAudit: new Set(['satellite.listened_live']) };
      await audit.write(db, actor, {
        action: 'satellite.listened_live',
        tenantId,
        targetType: 'satellite',
        targetId: id,
        details: { sessionId: s.sessionId },
      });
      return { satelliteId: id, sessionId: s.sessionId };
    },

    stopWatching,

    /** A keepalive from a socket keeps the session it watches alive for another 60 s. */
    keepalive(client: LiveClient): void {
      const s = client.watching ? sessions.get(client.watching) : undefined;
      if (s) s.lastKeepaliveAt = clock.now().getTime();
    },

    tick,

    deliverAudio,

    /**
     * Sends an event (e.g. `detection`, `alert`) to every socket of a team and to hub admins'
     * sockets, in every api/full process: it travels over the event bus, so a worker or the
     * dispatcher may call it too. Frames carry `tenantId`.
     */
    async sendToTeam(tenantId: string, event: LiveFrame): Promise<void> {
      await bus.publish('live.team_event', { tenantId, event });
    },

    deliverToTeam,

    /** What a test or the status page may want to know about a satellite's session. */
    sessionOf(satelliteId: string): { sessionId: string; watchers: number; tenantId: string } | null {
      const s = sessions.get(satelliteId);
      return s ? { sessionId: s.sessionId, watchers: s.watchers.size, tenantId: s.tenantId } : null;
    },

    get socketCount(): number {
      return clients.size;
    },

    /**
     * The api/full side of the hub (runtime): relayed audio and team events from the bus, and the
     * session timer. Stopping ends every session (live-stop) and closes the sockets with 1001.
     */
    start(opts: { tickMs?: number } = {}): () => Promise<void> {
      const offAudio = bus.subscribe('satellite.live_audio', (e) => {
        try {
          deliverAudio(e);
        } catch (err) {
          warn({ err }, 'live: audio delivery failed');
        }
      });
      const offTeam = bus.subscribe('live.team_event', (e) => {
        try {
          deliverToTeam(e.tenantId, e.event);
        } catch (err) {
          warn({ err }, 'live: team event delivery failed');
        }
      });
      const timer = setInterval(() => void tick().catch((err) => warn({ err }, 'live: tick failed')), opts.tickMs ?? LIVE_TICK_MS);
      timer.unref();
      return async () => {
        clearInterval(timer);
        offAudio();
        offTeam();
        for (const s of [...sessions.values()]) await endSession(s, 'stopped', true);
        for (const c of [...clients]) c.close(1001, 'hub shutting down');
      };
    },
  };
}

export type LiveHub = ReturnType<typeof createLiveHub>;

/** Wraps a ws socket as a LiveClient: JSON frames, live audio dropped for a slow reader. */
export function socketClient(
  socket: WebSocket,
  o: { tenantId: string | null; hubAdmin: boolean; recheck: () => Promise<Auth | null>; now: number },
): LiveClient {
  return {
    id: crypto.randomUUID(),
    tenantId: o.tenantId,
    hubAdmin: o.hubAdmin,
    recheck: o.recheck,
    checkedAt: o.now,
    watching: null,
    send(frame) {
      if (socket.readyState !== socket.OPEN) return;
      if (frame.type === 'live-audio' && socket.bufferedAmount > MAX_BUFFERED_BYTES) return;
      socket.send(JSON.stringify(frame));
    },
    close(code, reason) {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code, reason);
    },
  };
}
