import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import multipart from '@fastify/multipart';
import type { Infra } from './infra/types.ts';
import { lazyChildLogger, type Log } from './core/log.ts';
import { forgetOnWrites } from './modules/auth/principal-cache.ts';
import { addressIn, keepAddressForwards, trustPredicate } from './core/client-address.ts';
import { registerSecurityHeaders } from './core/security-headers.ts';
import { installGuessLimit, type GuessRule } from './core/guess-limit.ts';
import {
  API_PREFIX,
  closeConnectionsAsTheyIdle,
  enforceRegistry,
  installErrorHandling,
  installValidators,
  registerRoutes,
} from './core/http.ts';
import { checkDeclarations } from './core/declarations.ts';
import { access, type Permission } from './core/permissions.ts';
import { tileOrigin } from './modules/settings/registry.ts';
import { HUB_VERSION } from './modules/system/version.ts';
import { SESSION_COOKIE } from './core/cookies.ts';
import { MAX_CLIENT_FRAME_BYTES, registerLiveRoutes } from './modules/live/routes.ts';
import { WEB_DIST, registerWebRoutes } from './modules/web/static.ts';
import { createServices, type ServiceOptions, type Services } from './services.ts';
import { apiRoutes } from './routes.ts';

export interface AppOptions extends ServiceOptions {
  logger?: boolean;
}

/** Refusals that mean a guessed secret: forged or unknown share links, unknown invite and email-change tokens, unknown published recordings. */
const GUESS_RULES: GuessRule[] = [
  { urlPrefix: `${API_PREFIX}/share/`, isGuess: (e) => e.status === 403 || e.status === 404 },
  { urlPrefix: `${API_PREFIX}/auth/invites/accept`, isGuess: (e) => e.code === 'INVALID_INVITE' },
  { urlPrefix: `${API_PREFIX}/auth/register`, isGuess: (e) => e.code === 'INVALID_INVITE' },
  // Unknown, used and expired invite links answer the same 404 here: each counts (issue 33 item 8).
  { urlPrefix: `${API_PREFIX}/auth/invites/summary/`, isGuess: (e) => e.status === 404 },
  // The confirm and undo links of an address change (issue 33 item 3).
  { urlPrefix: `${API_PREFIX}/auth/email-change/`, isGuess: (e) => e.code === 'INVALID_TOKEN' },
  // Published recordings (issue 34 item 4): malformed, forged and revoked links all answer this 404.
  { urlPrefix: `${API_PREFIX}/public/audio/`, isGuess: (e) => e.status === 404 },
];

/**
 * GET /metrics, beside /api where scrapers look: hub admins and the internal key, or anyone
 * from the addresses of METRICS_ALLOW (the guard is skipped for them).
 */
const METRICS_PERMISSION: Permission = {
  method: 'GET',
  url: '/metrics',
  action: 'system.metrics',
  access: access.hubAdmin,
  audit: [],
  summary: 'Prometheus metrics (text format): the internal key, a hub admin, or a client address in METRICS_ALLOW',
  tags: ['system'],
};

/** Routes served outside the module route lists, declared by path prefix. */
const PREFIX_DECLARATIONS: Permission[] = [
  { method: 'GET', url: '/docs', action: 'docs.read', access: access.public, audit: [], summary: 'API documentation', tags: ['docs'] },
];

export async function buildApp(
  infra: Infra,
  opts: AppOptions = {},
): Promise<{ app: FastifyInstance; services: Services; registry: Permission[] }> {
  const { config } = infra;
  const app = Fastify({
    // The process's one logger (src/core/log.ts): request lines carry reqId, the X-Request-Id answer.
    ...(opts.logger === false ? { logger: false } : { loggerInstance: infra.log as FastifyBaseLogger }),
    // The one rule for client addresses: req.ip and req.protocol believe forwarded headers only from these peers.
    trustProxy: trustPredicate(config.trustProxy),
    bodyLimit: config.bodyLimitBytes,
    // Per-request lines cost throughput; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, opts) => lazyChildLogger(logger as Log, bindings, opts as Record<string, unknown>),
    // Every request has an id in its log lines and its X-Request-Id answer: a proxy's id is kept
    // when it looks like one, else a fresh UUID.
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,100}$/.test(given) ? given : crypto.randomUUID();
    },
  });
  // First, before anything reads req.ip: a forwarded value that is not an address is never believed.
  app.addHook('onRequest', (req, _reply, done) => {
    keepAddressForwards(req.raw.headers);
    done();
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  const services = createServices(infra, opts);
  const routes = apiRoutes(services, infra);

  installValidators(app);
  // Bodies are JSON only: Fastify's built-in text/plain parser would let a text body reach
  // validation as a string (400) instead of being refused as the wrong media type (415).
  app.removeContentTypeParser('text/plain');
  installErrorHandling(app);
  closeConnectionsAsTheyIdle(app);
  enforceRegistry(app, PREFIX_DECLARATIONS);
  // Every answer counted by the route's pattern (not the raw path, which would be unbounded).
  app.addHook('onResponse', (req, reply, done) => {
    services.metrics.httpRequest(req.routeOptions.url ?? 'unmatched', req.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  const metricsRoute = registerMetricsRoute(app, infra, services);

  await registerSecurityHeaders(app, {
    publicUrl: config.publicUrl,
    docsPrefix: `${API_PREFIX}/docs`,
    brokerWsUrl: infra.broker.wsUrl,
    imgOrigins: async () => {
      const origin = tileOrigin(await services.settings.hubSetting('map_tile_url'));
      return origin ? [origin] : [];
    },
  });
  installGuessLimit(app, services.limits.tokenGuesses, GUESS_RULES);
  forgetOnWrites(app, services.credentials, infra.bus);
  await app.register(cookie);
  // Multipart uploads: read by core/upload.ts with the limits each upload route declares.
  await app.register(multipart);

  if (config.mode === 'dispatcher' || config.mode === 'worker') {
    // DESIGN.md §3: a dispatcher (and an inference worker) serves no HTTP API, only its health endpoint.
    const registry = registerRoutes(
      app,
      routes.filter((r) => r.url === '/health' || r.url === '/health/ready'),
      services.guard,
      services.resolver,
    );
    return { app, services, registry: [...registry, metricsRoute] };
  }

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Chorus hub API', version: HUB_VERSION, description: 'Multi-tenant hub for acoustic bird monitoring' },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
          bearer: { type: 'http', scheme: 'bearer', description: 'JWT from login, a team or satellite API key, or the internal key' },
        },
      },
      security: [{ session: [] }, { bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: `${API_PREFIX}/docs` });

  const allowedOrigins = [new URL(config.publicUrl).origin, ...config.allowedOrigins];
  const registry = registerRoutes(app, routes, services.guard, services.resolver, allowedOrigins);
  app.get(`${API_PREFIX}/docs/openapi.json`, { schema: { hide: true }, config: { permission: PREFIX_DECLARATIONS[0] } }, async () =>
    app.swagger(),
  );
  await app.register(websocket, { options: { maxPayload: MAX_CLIENT_FRAME_BYTES } });
  const live = registerLiveRoutes(app, {
    hub: services.live,
    guard: services.guard,
    resolver: services.resolver,
    clock: infra.clock,
    allowedOrigins,
  });

  const web = await registerWebRoutes(app, WEB_DIST, { botPreview: services.publicPages.ogForBot });

  const all = [...registry, ...PREFIX_DECLARATIONS, metricsRoute, ...live, ...web];
  // Each action names one route across the whole registry, sockets and static files included.
  checkDeclarations(all);
  return { app, services, registry: all };
}

/** GET /metrics: an address of METRICS_ALLOW reads it openly; anyone else passes the guard (hub admin or the internal key). */
function registerMetricsRoute(app: FastifyInstance, infra: Infra, services: Services): Permission {
  const allowed = addressIn(infra.config.metricsAllow);
  const perm = METRICS_PERMISSION;
  app.route({
    method: 'GET',
    url: perm.url,
    schema: { hide: true },
    config: { permission: perm },
    preValidation: async (req: FastifyRequest) => {
      if (allowed(req.ip)) return;
      req.actor = await services.guard(req, perm, await services.resolver.resolve(req));
    },
    handler: async (_req, reply) => {
      const { contentType, body } = await services.metrics.render();
      return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
    },
  });
  return perm;
}
