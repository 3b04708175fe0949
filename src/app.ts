import Fastify, { LogController, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import multipart from '@fastify/multipart';
import type { Config } from './config.ts';
import type { Clock } from './core/clock.ts';
import type { Db } from './infra/db/index.ts';
import type { Kv } from './infra/kv/index.ts';
import type { Mailer } from './infra/mail/index.ts';
import type { Bus } from './infra/bus/index.ts';
import type { ObjectStorage } from './infra/storage/index.ts';
import type { JobQueue } from './infra/queue/index.ts';
import type { Broker } from './infra/broker/index.ts';
import { createAuditWriter } from './core/audit.ts';
import { createJwtService } from './core/jwt.ts';
import { createAuthResolver } from './core/auth-resolver.ts';
import { createGuard } from './core/guard.ts';
import { API_PREFIX, enforceRegistry, installErrorHandling, installValidators, registerRoutes } from './core/http.ts';
import { checkDeclarations } from './core/declarations.ts';
import { access, type Permission, type RouteDef } from './core/permissions.ts';
import { createCredentialsRepo } from './modules/auth/credentials-repo.ts';
import { createAuthRepo } from './modules/auth/repo.ts';
import { createAuthService } from './modules/auth/service.ts';
import { authRoutes } from './modules/auth/routes.ts';
import { createMfaRepo } from './modules/mfa/repo.ts';
import { createMfaService } from './modules/mfa/service.ts';
import { mfaRoutes } from './modules/mfa/routes.ts';
import { createUsersRepo } from './modules/users/repo.ts';
import { createUsersService } from './modules/users/service.ts';
import { accountRoutes } from './modules/account/routes.ts';
import { createSettingsService } from './modules/settings/service.ts';
import { createSatellitesRepo } from './modules/satellites/repo.ts';
import { createSatellitesService } from './modules/satellites/service.ts';
import { speciesRoutes } from './modules/species/routes.ts';
import { speciesCatalog } from './inference/species-catalog.ts';
import { createSpeciesRepo } from './modules/species/repo.ts';
import { satellitesRoutes } from './modules/satellites/routes.ts';
import { createAudioRepo } from './modules/audio/repo.ts';
import { createAudioService } from './modules/audio/service.ts';
import { audioRoutes } from './modules/audio/routes.ts';
import { createSpectrogramService } from './modules/audio/spectrogram.ts';
import { spectrogramRoutes } from './modules/audio/spectrogram-routes.ts';
import { createShareService } from './modules/share/service.ts';
import { shareRoutes } from './modules/share/routes.ts';
import { createCategoryVisibility } from './modules/detections/visibility.ts';
import { settingsRoutes } from './modules/settings/routes.ts';
import { createTeamsRepo } from './modules/teams/repo.ts';
import { createTeamsService, type DepartureHandler } from './modules/teams/service.ts';
import { teamsRoutes } from './modules/teams/routes.ts';
import { createInvitesRepo } from './modules/invites/repo.ts';
import { createInvitesService } from './modules/invites/service.ts';
import { invitesRoutes } from './modules/invites/routes.ts';
import { createApiKeysRepo } from './modules/api-keys/repo.ts';
import { createApiKeysService } from './modules/api-keys/service.ts';
import { apiKeysRoutes } from './modules/api-keys/routes.ts';
import { adminRoutes } from './modules/admin/routes.ts';
import { createJoiningRepo } from './modules/joining/repo.ts';
import { createJoiningService } from './modules/joining/service.ts';
import { joiningRoutes } from './modules/joining/routes.ts';
import { createAuditRepo } from './modules/audit/repo.ts';
import { auditRoutes } from './modules/audit/routes.ts';
import { createDetectionsRepo } from './modules/detections/repo.ts';
import { createDetectionsService } from './modules/detections/service.ts';
import { detectionsRoutes } from './modules/detections/routes.ts';
import { createCalibrationRepo } from './modules/calibration/repo.ts';
import { createCalibrationService } from './modules/calibration/service.ts';
import { calibrationRoutes } from './modules/calibration/routes.ts';
import { createSessionsRepo } from './modules/sessions/repo.ts';
import { createSessionsService } from './modules/sessions/service.ts';
import { sessionsRoutes } from './modules/sessions/routes.ts';
import { readAggregationRule } from './inference/aggregation.ts';
import { createReviewRepo } from './modules/detections/review-repo.ts';
import { createReviewService } from './modules/detections/review-service.ts';
import { createSummaryService } from './modules/detections/summary-service.ts';
import { detectionReviewRoutes } from './modules/detections/review-routes.ts';
import { systemRoutes, versionsRoutes } from './modules/system/routes.ts';
import { latestRelease } from './modules/system/releases.ts';
import { createModelsRepo } from './modules/models/repo.ts';
import { createModelsService } from './modules/models/service.ts';
import { modelsRoutes } from './modules/models/routes.ts';
import { createWorkersService } from './modules/workers/service.ts';
import { workersRoutes } from './modules/workers/routes.ts';
import { HUB_VERSION } from './modules/system/version.ts';
import { createLiveHub } from './modules/live/hub.ts';
import { MAX_CLIENT_FRAME_BYTES, registerLiveRoutes } from './modules/live/routes.ts';
import { registerWebRoutes } from './modules/web/static.ts';

/** The infrastructure ports, built once at start-up from config (DESIGN.md §2). */
export interface Infra {
  config: Config;
  db: Db;
  kv: Kv;
  mail: Mailer;
  bus: Bus;
  storage: ObjectStorage;
  queue: JobQueue;
  broker: Broker;
  clock: Clock;
}

export interface AppOptions {
  /** Refuse audit actions a route did not declare (tests). */
  strictAudit?: boolean;
  logger?: boolean;
}

/** Routes served outside the module route lists, declared by path prefix. */
const PREFIX_DECLARATIONS: Permission[] = [
  { method: 'GET', url: '/docs', action: 'docs.read', access: access.public, audit: [], summary: 'API documentation', tags: ['docs'] },
];

export function createServices(infra: Infra, opts: AppOptions = {}, warn: (m: string) => void = () => {}) {
  const { db, clock, mail, bus, kv, config, broker, storage } = infra;
  const audit = createAuditWriter(clock, { strict: opts.strictAudit ?? false, warn });
  const jwt = createJwtService(config.secret, config.jwtTtlSeconds, clock);
  const usersRepo = createUsersRepo(db);
  const authRepo = createAuthRepo(db);
  const teamsRepo = createTeamsRepo(db);
  const invitesRepo = createInvitesRepo(db);
  const apiKeysRepo = createApiKeysRepo(db);

  const satellitesRepo = createSatellitesRepo(db);
  const modelsRepo = createModelsRepo(db);
  const settings = createSettingsService({
    db,
    clock,
    audit,
    bus,
    satellites: satellitesRepo,
    refs: { model: (id) => models.refuseModelRef(id) },
  });
  const models = createModelsService({ db, clock, audit, storage, repo: modelsRepo });
  const workers = createWorkersService({ kv, queue: infra.queue, clock });
  const apiKeys = createApiKeysService({ db, clock, audit, repo: apiKeysRepo });
  const satellites = createSatellitesService({ db, clock, audit, repo: satellitesRepo, settings, broker, storage });
  const departureHandlers: DepartureHandler[] = [
    (tx, tenantId, userId) => apiKeys.revokeCreatedBy(tx, tenantId, userId).then(() => {}),
    (tx, tenantId, userId, opts) => satellites.release(tx, tenantId, userId, opts.keepDevices),
  ];
  const teams = createTeamsService({ db, clock, audit, repo: teamsRepo, settings, departureHandlers });
  const joining = createJoiningService({
    db,
    clock,
    kv,
    mail,
    audit,
    repo: createJoiningRepo(db),
    teams,
    settings,
    publicUrl: config.publicUrl,
  });
  const invites = createInvitesService({
    db,
    clock,
    audit,
    repo: invitesRepo,
    teams,
    publicUrl: config.publicUrl,
    onInviteCreated: [joining.liftBlockByEmail],
    onInviteUsed: [joining.liftBlock],
  });
  const auth = createAuthService({
    db,
    clock,
    audit,
    mail,
    jwt,
    users: usersRepo,
    repo: authRepo,
    settings,
    invites,
    teams,
    publicUrl: config.publicUrl,
    sessionTtlSeconds: config.sessionTtlSeconds,
    secondFactor: () => mfa.secondFactor,
  });
  const mfa = createMfaService({
    db,
    clock,
    audit,
    jwt,
    users: usersRepo,
    repo: createMfaRepo(db),
    sessions: auth,
    secret: config.secret,
    publicUrl: config.publicUrl,
  });
  const users = createUsersService({ db, clock, audit, users: usersRepo, authRepo, teams, settings, mfa });
  const auditRepo = createAuditRepo(db);
  const audioRepo = createAudioRepo(db);
  const audio = createAudioService({ repo: audioRepo, storage });
  const spectrograms = createSpectrogramService({ repo: audioRepo, storage });
  const calibration = createCalibrationService({ db, clock, audit, repo: createCalibrationRepo(db) });
  // One reader of what each team shows, for every list, count, summary and share.
  const visibility = createCategoryVisibility(settings);
  const sessions = createSessionsService({ repo: createSessionsRepo(db), calibrated: calibration.calibrated, visibility });
  const detectionsRepo = createDetectionsRepo(db);
  const reviewRepo = createReviewRepo(db);
  const detections = createDetectionsService({
    repo: detectionsRepo,
    review: reviewRepo,
    readers: { calibrated: calibration.calibrated, aggregationRule: (t) => readAggregationRule(db, t), visibility },
  });
  const review = createReviewService({ db, clock, audit, repo: reviewRepo, settings });
  const detectionSummary = createSummaryService({ repo: reviewRepo, aggregationRule: (t) => readAggregationRule(db, t), visibility });

  const share = createShareService({
    detections: detectionsRepo,
    visibility,
    audio,
    spectrograms,
    calibrated: calibration.calibrated,
    clock,
    secret: config.secret,
    publicUrl: config.publicUrl,
  });

  const resolver = createAuthResolver({ internalKey: config.internalKey, jwt, credentials: createCredentialsRepo(db), clock });
  const guard = createGuard({
    teamResolvers: {
      membership: teamsRepo.teamOfMembership,
      invite: invitesRepo.teamOfInvite,
      apiKey: apiKeysRepo.teamOfKey,
      chunk: audioRepo.teamOfChunk,
      detection: detectionsRepo.teamOfDetection,
      satellite: async (id) => (await satellitesRepo.deviceFacts(id))?.tenantId ?? null,
    },
    teamExists: teamsRepo.teamExists,
    deviceFacts: satellitesRepo.deviceFacts,
  });
  const live = createLiveHub({
    db,
    clock,
    audit,
    bus,
    broker,
    deviceFacts: satellitesRepo.deviceFacts,
    warn: (obj, msg) => warn(`${msg}: ${String((obj as { err?: unknown }).err ?? '')}`),
  });

  const routes: RouteDef[] = [
    ...systemRoutes(clock),
    ...authRoutes(auth),
    ...mfaRoutes(mfa),
    ...accountRoutes(users, settings),
    ...teamsRoutes(teams),
    ...invitesRoutes(invites),
    ...apiKeysRoutes(apiKeys),
    ...adminRoutes(users, teams),
    ...joiningRoutes(joining),
    ...satellitesRoutes(satellites, settings, clock, latestRelease(settings)),
    ...versionsRoutes(settings),
    ...audioRoutes(audio),
    ...spectrogramRoutes(spectrograms),
    ...shareRoutes(share),
    ...detectionsRoutes(detections),
    ...calibrationRoutes(calibration),
    ...sessionsRoutes(sessions),
    ...detectionReviewRoutes(review, detectionSummary),
    ...speciesRoutes(speciesCatalog, createSpeciesRepo(db)),
    ...auditRoutes(auditRepo),
    ...settingsRoutes(settings),
    ...modelsRoutes(models),
    ...workersRoutes(workers),
  ];

  return {
    audit,
    jwt,
    settings,
    apiKeys,
    teams,
    invites,
    joining,
    satellites,
    auth,
    mfa,
    users,
    resolver,
    guard,
    routes,
    departureHandlers,
    live,
    detections,
    share,
    models,
    modelsRepo,
    workers,
  };
}

export type Services = ReturnType<typeof createServices>;

export async function buildApp(
  infra: Infra,
  opts: AppOptions = {},
): Promise<{ app: FastifyInstance; services: Services; registry: Permission[] }> {
  const { config } = infra;
  const app = Fastify({
    logger:
      opts.logger === false
        ? false
        : { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'] },
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimitBytes,
    // Per-request lines cost throughput; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
  });
  const services = createServices(infra, opts, (m) => app.log.warn(m));

  installValidators(app);
  // Bodies are JSON only: Fastify's built-in text/plain parser would let a text body reach
  // validation as a string (400) instead of being refused as the wrong media type (415).
  app.removeContentTypeParser('text/plain');
  installErrorHandling(app);
  enforceRegistry(app, PREFIX_DECLARATIONS);

  await app.register(cookie);
  // Multipart uploads (models, and any other upload route): limits are set per request by each route.
  await app.register(multipart);

  if (config.mode === 'dispatcher' || config.mode === 'worker') {
    // DESIGN.md §3: a dispatcher (and an inference worker) serves no HTTP API, only its health endpoint.
    const registry = registerRoutes(
      app,
      services.routes.filter((r) => r.url === '/health'),
      services.guard,
      services.resolver,
    );
    return { app, services, registry };
  }

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Chorus hub API', version: HUB_VERSION, description: 'Multi-tenant hub for acoustic bird monitoring' },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'chorus_session' },
          bearer: { type: 'http', scheme: 'bearer', description: 'JWT from login, a team or satellite API key, or the internal key' },
        },
      },
      security: [{ session: [] }, { bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: `${API_PREFIX}/docs` });

  const registry = registerRoutes(app, services.routes, services.guard, services.resolver);
  app.get(`${API_PREFIX}/docs/openapi.json`, { schema: { hide: true }, config: { permission: PREFIX_DECLARATIONS[0] } }, async () =>
    app.swagger(),
  );
  await app.register(websocket, { options: { maxPayload: MAX_CLIENT_FRAME_BYTES } });
  const live = registerLiveRoutes(app, { hub: services.live, guard: services.guard, resolver: services.resolver, clock: infra.clock });

  const web = await registerWebRoutes(app);

  const all = [...registry, ...PREFIX_DECLARATIONS, ...live, ...web];
  // Each action names one route across the whole registry, sockets and static files included.
  checkDeclarations(all);
  return { app, services, registry: all };
}
