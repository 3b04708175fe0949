/**
 * The WebSocket `/ws/events?tenantId=…[&listenSatelliteId=…]` (spec hub-http-api §6). The one
 * guard runs on the upgrade request, before the socket exists: 401 nobody signed in, 404 team
 * (or satellite to listen to) out of reach, 403 role too low, 400 TENANT_REQUIRED. A plain GET
 * without an upgrade passes the same guard and answers 426 UPGRADE_REQUIRED.
 *
 * Frames are JSON objects with a `type`. Client → hub: `live-start {satelliteId}`, `live-stop`,
 * `keepalive`. Hub → client: `hello`, `live-started`, `live-stopped`, `live-audio`,
 * `keepalive-ack`, `error {code, message}`, and team events (`detection`, `alert`, …).
 * Close codes: 1001 hub shutting down, 1009 frame over 64 KiB, 4401 the credential ended,
 * 4403 no longer in the socket's team (re-read at each live-start and every 60 s).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import '@fastify/websocket';
import type { AuthResolver } from '../../core/http.ts';
import type { Clock } from '../../core/clock.ts';
import type { createGuard } from '../../core/guard.ts';
import { access, type Permission } from '../../core/permissions.ts';
import { AppError, badRequest, errorBody, forbidden } from '../../core/errors.ts';
import { CLOSE_UNAUTHENTICATED, type LiveClient, type LiveHub, socketClient } from './hub.ts';
import { handshakeOriginAllowed } from '../../core/origin.ts';

export const LIVE_WS_PATH = '/ws/events';

/** Largest frame a client may send (its frames are small JSON commands). */
export const MAX_CLIENT_FRAME_BYTES = 64 * 1024;
/** Frames of one socket waiting for an answer; beyond this a frame is dropped with RATE_LIMITED. */
export const MAX_PENDING_FRAMES = 32;

const teamInQuery = { in: 'query', key: 'tenantId', optional: true } as const;

/**
 * The registry entry (its url is the socket's own path, outside /api/). Viewer+ of the named team
 * may connect; `listenSatelliteId` at connection needs member+. A hub admin may leave tenantId out
 * for a hub-wide socket; anybody else must name it.
 */
export const liveSocketPermission: Permission = {
  method: 'GET',
  url: LIVE_WS_PATH,
  action: 'live.events',
  access: access.role('viewer'),
  team: teamInQuery,
  variants: [{ when: { query: 'listenSatelliteId' }, access: access.role('member'), team: teamInQuery }],
  audit: ['satellite.listened_live'],
  summary: "WebSocket of a team's live events and live listening (upgrade required)",
  tags: ['live'],
};

export function registerLiveRoutes(
  app: FastifyInstance,
  deps: {
    hub: LiveHub;
    guard: ReturnType<typeof createGuard>;
    resolver: AuthResolver;
    clock: Clock;
    /** The public URL's origin and CHORUS_ALLOWED_ORIGINS. */
    allowedOrigins: readonly string[];
  },
): Permission[] {
  const { hub, guard, resolver, clock } = deps;
  const perm = liveSocketPermission;

  const listenParam = (req: FastifyRequest): unknown => {
    const v = (req.query as Record<string, unknown> | null)?.listenSatelliteId;
    return v === undefined || v === '' ? undefined : v;
  };

  app.route({
    method: 'GET',
    url: LIVE_WS_PATH,
    schema: { hide: true },
    config: { permission: perm },
    preValidation: async (req) => {
      if (!handshakeOriginAllowed(req, deps.allowedOrigins)) {
        throw forbidden(`Origin ${req.headers.origin} may not open this socket`, 'ORIGIN_NOT_ALLOWED');
      }
      const auth = await resolver.resolve(req);
      const actor = await guard(req, perm, auth);
      if (actor.teamId === null && !actor.isPlatformAdmin) throw badRequest('Name the team: tenantId is required', 'TENANT_REQUIRED');
      const listen = listenParam(req);
      if (listen !== undefined) await hub.authorizeListen(actor, actor.teamId, listen);
      req.actor = actor;
    },
    handler: async (_req, reply) =>
      reply
        .code(426)
        .header('upgrade', 'websocket')
        .send(errorBody('UPGRADE_REQUIRED', `Open ${LIVE_WS_PATH} as a WebSocket`)),
    wsHandler: (socket: WebSocket, req: FastifyRequest) => {
      const actor = req.actor;
      const client = socketClient(socket, {
        tenantId: actor.teamId,
        hubAdmin: actor.isPlatformAdmin,
        recheck: () => resolver.resolve(req),
        now: clock.now().getTime(),
      });
      hub.connect(client);
      // Frames of one socket are handled one after another, in the order they came.
      let queue: Promise<void> = Promise.resolve();
      let pending = 0;
      const enqueue = (work: () => Promise<void>) => {
        pending++;
        queue = queue
          .then(work)
          .catch((err) => req.log.warn({ err }, 'live: frame handling failed'))
          .finally(() => pending--);
      };
      socket.on('message', (data: RawData, isBinary: boolean) => {
        if (pending >= MAX_PENDING_FRAMES) {
          client.send({
            type: 'error',
            code: 'RATE_LIMITED',
            message: `More than ${MAX_PENDING_FRAMES} frames wait for an answer; this one was dropped`,
          });
          return;
        }
        enqueue(() => onFrame(client, req, data, isBinary));
      });
      socket.on('close', () => enqueue(() => hub.disconnect(client)));
      client.send({ type: 'hello', tenantId: actor.teamId, hubWide: actor.teamId === null });
      const listen = listenParam(req);
      if (listen !== undefined) enqueue(() => start(client, req, listen));
    },
  });

  async function start(client: LiveClient, req: FastifyRequest, satelliteId: unknown): Promise<void> {
    // Read the credential again: a role change or a sign-out counts for every new start.
    const auth = await resolver.resolve(req);
    if (!auth) {
      client.send({ type: 'error', code: 'UNAUTHENTICATED', message: 'Your sign-in has ended' });
      client.close(CLOSE_UNAUTHENTICATED, 'sign-in ended');
      return;
    }
    try {
      const started = await hub.startWatching(client, auth, req.ip, satelliteId);
      client.send({ type: 'live-started', ...started });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      client.send({
        type: 'error',
        code: err.code,
        message: err.message,
        satelliteId: typeof satelliteId === 'string' ? satelliteId : null,
      });
    }
  }

  async function onFrame(client: LiveClient, req: FastifyRequest, data: RawData, isBinary: boolean): Promise<void> {
    let msg: Record<string, unknown> | null = null;
    if (!isBinary) {
      try {
        const parsed: unknown = JSON.parse(data.toString());
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) msg = parsed as Record<string, unknown>;
      } catch {
        // answered below
      }
    }
    if (!msg || typeof msg.type !== 'string') {
      client.send({ type: 'error', code: 'BAD_FRAME', message: 'Frames are JSON objects with a type' });
      return;
    }
    switch (msg.type) {
      case 'live-start':
        // Any tenant in the message is ignored: the socket's team decides (spec §6 item 2).
        return start(client, req, msg.satelliteId);
      case 'live-stop': {
        const stopped = await hub.stopWatching(client, 'stopped');
        client.send(
          stopped
            ? { type: 'live-stopped', ...stopped, reason: 'stopped' }
            : { type: 'live-stopped', satelliteId: null, sessionId: null, reason: 'stopped' },
        );
        return;
      }
      case 'keepalive':
        hub.keepalive(client);
        client.send({ type: 'keepalive-ack', watching: client.watching });
        return;
      default:
        client.send({ type: 'error', code: 'UNKNOWN_TYPE', message: `Unknown frame type "${msg.type}"` });
    }
  }

  return [perm];
}
