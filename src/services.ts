/**
 * The hub's services, each built once from the ports (src/infra) and wired to the others it
 * needs: the composition of src/modules. Routes are listed in src/routes.ts, HTTP in src/app.ts.
 */
import path from 'node:path';
import type { Infra } from './infra/types.ts';
import { createAuditWriter } from './modules/audit/writer.ts';
import { createJwtService } from './core/jwt.ts';
import { createAuthResolver } from './modules/auth/resolver.ts';
import { cacheCredentials } from './modules/auth/principal-cache.ts';
import { createGuard } from './core/guard.ts';
import { createAuthService } from './modules/auth/service.ts';
import { createSessionStore } from './modules/auth/sessions.ts';
import { createMfaService } from './modules/mfa/service.ts';
import { createEnrollmentGate } from './modules/mfa/enrollment-gate.ts';
import { createUserAccounts, createUsersService } from './modules/users/service.ts';
import { createEmailChangeService } from './modules/email-change/service.ts';
import { createSettingsService } from './modules/settings/service.ts';
import { createSettingReleases } from './modules/settings/releases.ts';
import { createSatellitesService } from './modules/satellites/service.ts';
import { createSatelliteConfigHistory } from './modules/satellites/config-history.ts';
import { createDeviceService } from './modules/satellites/device-service.ts';
import { speciesCatalog } from './modules/species/catalog.ts';
import { createSpeciesService } from './modules/species/service.ts';
import { createAudioService } from './modules/audio/service.ts';
import { createSpectrogramService } from './modules/audio/spectrogram.ts';
import { createShareService } from './modules/share/service.ts';
import { createCategoryVisibility } from './modules/detections/visibility.ts';
import { createTeamsService, type DepartureHandler } from './modules/teams/service.ts';
import { createInvitesService } from './modules/invites/service.ts';
import { createApiKeysService } from './modules/api-keys/service.ts';
import { createJoiningService } from './modules/joining/service.ts';
import { createAuditLogService } from './modules/audit/service.ts';
import { observationRuleOf } from './modules/detections/observations.ts';
import { createDetectionsService } from './modules/detections/service.ts';
import { createCalibrationService } from './modules/calibration/service.ts';
import { createSpeciesThresholds } from './modules/species-thresholds/service.ts';
import { createSessionsService } from './modules/sessions/service.ts';
import { createReviewService } from './modules/detections/review-service.ts';
import { createSummaryService } from './modules/detections/summary-service.ts';
import { createSimilarityIndexReader, createSimilarityService } from './modules/similarity/service.ts';
import { createSystemStatusService } from './modules/system/status.ts';
import { createMetrics } from './infra/metrics/index.ts';
import { installCollectors } from './metrics-collectors.ts';
import { createModelsService } from './modules/models/service.ts';
import { createRangeService } from './modules/range/service.ts';
import { createModelInstaller } from './modules/models/install-service.ts';
import { createWorkersService } from './modules/workers/service.ts';
import { createLiveHub } from './modules/live/hub.ts';
import { createAlerting } from './modules/alerts/index.ts';
import { createAlertsService } from './modules/alerts/alerts-service.ts';
import { createExportsService } from './modules/exports/service.ts';
import { createScheduledExports } from './modules/exports/scheduled.ts';
import { createPublishedAudio } from './modules/published-audio/service.ts';
import { createRetentionService } from './modules/audio/retention.ts';
import { createStorageUsageService } from './modules/storage-usage/service.ts';
import { createJobsService } from './modules/jobs/service.ts';
import { createMobileService } from './modules/mobile/service.ts';
import { createFieldNotesService } from './modules/field-notes/service.ts';
import { createSpeciesImagesService } from './modules/species-images/service.ts';
import { parseAllowList } from './infra/outbound/index.ts';
import { createSensitiveSpecies } from './modules/sensitive/service.ts';
import { createPublicPagesService } from './modules/public/service.ts';
import { createStatsService } from './modules/stats/service.ts';
import { createDayGridService } from './modules/stats/day.ts';
import { createPublicDayService } from './modules/public/day.ts';
import { createOpenMeteoClient } from './modules/weather/client.ts';
import { createWeatherService } from './modules/weather/service.ts';
import { createEbirdClient } from './modules/ebird/client.ts';
import { createEbirdService } from './modules/ebird/service.ts';
import { createMapService } from './modules/stats/map-service.ts';
import { createWeatherCorrelationService } from './modules/stats/weather-correlation.ts';
import { createExpectedSpeciesService } from './modules/stats/expected-species.ts';
import { createGeoStatsService } from './modules/stats/geo-service.ts';

export interface ServiceOptions {
  /** Refuse audit actions a route did not declare (tests). */
  strictAudit?: boolean;
}

export function createServices(infra: Infra, opts: ServiceOptions = {}) {
  // Each service is built after every service it calls, so none holds a closure over one built
  // later, and nothing handed to a service is filled in afterwards (test/composition.test.ts).
  // docs/architecture.md "Wiring order" lists the order and why each step stands where it does.
  const { db, clock, mail, bus, kv, config, broker, storage } = infra;
  const warn = (m: string) => infra.log.warn(m);
  const audit = createAuditWriter(clock, { strict: opts.strictAudit ?? false, warn });
  // Per hub instance (several test hubs share one process); the collectors read the ports at each scrape.
  const metrics = createMetrics({ labels: { mode: config.mode } });
  installCollectors(metrics, infra);
  // Abuse limits (docs/security.md), each created once: its counts live in the store behind it.
  const limits = {
    register: kv.limiter('register', config.limits.register),
    resetMail: kv.limiter('reset-mail', config.limits.resetMail),
    inviteAccept: kv.limiter('invite-accept', config.limits.inviteAccept),
    tokenGuesses: kv.limiter('token-guesses', config.limits.tokenGuesses),
    apiKeys: kv.limiter('api-keys', config.limits.apiKeys),
  };
  const jwt = createJwtService(config.secret, config.jwtTtlSeconds, clock);

  // 1. Services on the ports alone (or on each other in this order).
  const species = createSpeciesService({ db });
  // Species photos (issue 20): credited photos from the configured providers, stored once, served with bird-centred squares.
  const speciesImages = createSpeciesImagesService({
    db,
    clock,
    audit,
    queue: infra.queue,
    storage,
    config: config.images,
    allow: parseAllowList(config.outboundAllowHosts),
    scientificName: async (code) => (await species.find(code))?.scientificName ?? null,
  });
  const systemStatus = createSystemStatusService({
    db,
    kv,
    clock,
    mode: config.mode,
    broker,
    storage,
    queue: infra.queue,
    speciesImages: () => speciesImages.totals(),
    similarityIndex: createSimilarityIndexReader(db),
  });
  const models = createModelsService({ db, clock, audit, storage, species, settingReleases: createSettingReleases(db) });
  const modelInstaller = createModelInstaller({ models, kv, clock });
  const workers = createWorkersService({ kv, queue: infra.queue, clock });
  const apiKeys = createApiKeysService({ db, clock, audit, createLimit: limits.apiKeys });
  const auditLog = createAuditLogService({ db });

  // 2. Settings: what a change reaches comes from the satellites module's config history, a
  // service on the database alone, so the satellites service can read settings without a loop.
  // Caches built from settings (the public pages) key on settings.generation().
  const settings = createSettingsService({
    db,
    clock,
    audit,
    bus,
    kv,
    satellites: createSatelliteConfigHistory({ db }),
    refs: { model: (id) => models.refuseModelRef(id) },
  });

  // 3. Satellites, after the modules whose rows a deletion counts and keeps: field notes (which
  // name a satellite through the device service) and the alerts a team received.
  const devices = createDeviceService({ db, clock, audit });
  const fieldNotes = createFieldNotesService({ db, clock, audit, storage, satelliteName: devices.nameOf });
  const alertLog = createAlertsService({ db, clock });
  const satellites = createSatellitesService({
    db,
    clock,
    audit,
    settings,
    apiKeys,
    broker,
    storage,
    linked: { alerts: alertLog.countOfSatellite, fieldNotes: fieldNotes.countOfSatellite, keepName: fieldNotes.keepSatelliteName },
  });

  // 4. Teams, whose departures revoke the leaver's keys and release their devices.
  const departureHandlers: DepartureHandler[] = [
    (tx, tenantId, userId) => apiKeys.revokeCreatedBy(tx, tenantId, userId).then(() => {}),
    (tx, tenantId, userId, opts) => satellites.release(tx, tenantId, userId, opts.keepDevices),
  ];
  const teams = createTeamsService({ db, clock, audit, settings, departureHandlers });
  const joining = createJoiningService({
    db,
    clock,
    kv,
    mail,
    audit,
    teams,
    settings,
    publicUrl: config.publicUrl,
  });
  const invites = createInvitesService({
    db,
    clock,
    audit,
    teams,
    publicUrl: config.publicUrl,
    onInviteCreated: [joining.liftBlockByEmail],
    onInviteUsed: [joining.liftBlock],
    acceptLimit: limits.inviteAccept,
  });

  // 5. People, bottom up: account rows and the session store, then the second factor (which
  // issues sessions), sign-in (which asks the second factor), and the account services (which
  // end sessions and show the second factor).
  const accounts = createUserAccounts({ db });
  const sessionStore = createSessionStore({ db, clock, sessionTtlSeconds: config.sessionTtlSeconds });
  const mfa = createMfaService({
    db,
    clock,
    audit,
    jwt,
    users: accounts,
    sessions: sessionStore,
    secret: config.secret,
    publicUrl: config.publicUrl,
  });
  const auth = createAuthService({
    db,
    clock,
    audit,
    mail,
    jwt,
    users: accounts,
    settings,
    invites,
    teams,
    apiKeys,
    publicUrl: config.publicUrl,
    limits: { register: limits.register, resetMail: limits.resetMail },
    sessions: sessionStore,
    secondFactor: mfa.secondFactor,
  });
  const emailChanges = createEmailChangeService({
    db,
    clock,
    audit,
    mail,
    publicUrl: config.publicUrl,
    users: accounts,
    sessions: sessionStore,
    // Each change mails two inboxes: the per-account budget of reset mails, counted apart.
    requestLimit: kv.limiter('email-change', config.limits.resetMail),
  });
  const users = createUsersService({ db, clock, audit, teams, settings, auditLog, sessions: sessionStore, mfa, emailChanges });

  // 6. Audio and detections.
  const audio = createAudioService({ db, storage });
  const spectrograms = createSpectrogramService({ db, storage });
  const calibration = createCalibrationService({ db, clock, audit });
  // Per-species thresholds (issue 35 item 2): learned on votes, applied when recording and alerting.
  const speciesThresholds = createSpeciesThresholds({ db, clock, audit, settings });
  // One reader of what each team shows, for every list, count, summary and share.
  const visibility = createCategoryVisibility(settings);
  const sessions = createSessionsService({ db, calibrated: calibration.calibrated, visibility });
  const detections = createDetectionsService({
    db,
    clock,
    readers: {
      calibrated: calibration.calibrated,
      aggregationRule: settings.aggregationRule,
      visibility,
      modelAttribution: (id) => models.attributionOf(id),
      speciesThresholds: speciesThresholds.appliedFor,
      observationRule: async (tenantId) => observationRuleOf(await settings.teamSettings(tenantId)),
    },
  });
  const review = createReviewService({
    db,
    clock,
    audit,
    settings,
    onConfirmed: async (tenantId, id) => {
      const detection = await detections.announcementOf(tenantId, id);
      if (detection) await bus.publish('detection.announced', { trigger: 'confirmed', detection });
    },
    onVerifiedChanged: async (tenantId, speciesCode) => void (await speciesThresholds.recompute(tenantId, speciesCode)),
  });
  const detectionSummary = createSummaryService({ db, aggregationRule: settings.aggregationRule, visibility });
  // Search by sound (issue 35 point 4): votes it casts go through the review rules.
  const similarity = createSimilarityService({ db, visibleCategories: visibility.visible, verify: review.verify });

  // Sensitive species (issue 20): what leaves a team of them is generalised.
  const sensitive = createSensitiveSpecies(settings);
  const share = createShareService({
    detections,
    visibility,
    audio,
    spectrograms,
    calibrated: calibration.calibrated,
    modelAttribution: (id) => models.attributionOf(id),
    clock,
    secret: config.secret,
    publicUrl: config.publicUrl,
    settings,
    sensitive,
    devices,
  });

  // 7. The live hub (its sockets ask the satellites who a device is), then alerting, which sends
  // its alert frames through it.
  const live = createLiveHub({
    db,
    clock,
    audit,
    bus,
    broker,
    deviceFacts: satellites.deviceFacts,
    warn: (obj, msg) => infra.log.warn(obj, msg),
  });
  const alerting = createAlerting({
    alerts: alertLog,
    isSensitive: sensitive.isSensitive,
    db,
    clock,
    audit,
    bus,
    kv,
    mail,
    queue: infra.queue,
    metrics,
    config,
    timeZone: (tenantId) => settings.teamSetting(tenantId, 'time_zone'),
    hubAllowHosts: () => settings.hubSetting('outbound_allow_hosts'),
    locale: async (tenantId) => ({
      language: await settings.teamSetting(tenantId, 'team_language'),
      timeZone: await settings.teamSetting(tenantId, 'time_zone'),
    }),
    calibrated: async (tenantId, modelId, confidence) =>
      modelId ? ((await calibration.calibrated([{ tenantId, modelId, confidence }]))[0] ?? confidence) : confidence,
    categoryOf: (code) => speciesCatalog().byCode(code)?.category ?? 'bird',
    speciesThreshold: speciesThresholds.thresholdOf,
    chunkAudio: audio.bytesOf,
    teamName: (tenantId) => teams.teamName(tenantId),
    sendToTeam: (tenantId, event) => live.sendToTeam(tenantId, event),
    warn: (obj, msg) => infra.log.warn(obj, msg),
  });

  // 8. Exports, mobile releases, retention, failed jobs.
  const teamTimeZone = (tenantId: string) => settings.teamSetting(tenantId, 'time_zone');
  // Public links to the recordings a team's submitted files name (issue 34 item 4).
  const publishedAudio = createPublishedAudio({
    db,
    clock,
    audit,
    secret: config.secret,
    publicUrl: config.publicUrl,
    audio,
    settings,
    sensitiveCodes: sensitive.codesOf,
  });
  const exportsService = createExportsService({
    sensitiveCodes: sensitive.codesOf,
    calibrationCurves: calibration.curvesOf,
    publishing: publishedAudio,
    db,
    clock,
    queue: infra.queue,
    storage,
    detections,
    audio: audio.bytesOf,
    timeZone: teamTimeZone,
    teamName: teams.teamName,
    license: (tenantId) => settings.teamSetting(tenantId, 'publication_license'),
    publicUrl: config.publicUrl,
  });
  const scheduledExports = createScheduledExports({
    db,
    clock,
    audit,
    exports: exportsService,
    files: alerting.files,
    teamTimeZone,
    publicUrl: config.publicUrl,
  });
  const mobile = createMobileService({
    db,
    clock,
    audit,
    storage,
    tempDir: path.join(config.dataDir, 'tmp'),
    maxBytes: config.mobileMaxBytes,
  });

  // Audio retention (issue 22): each team's audio_retention_days, while the hub switch retention_enabled is on.
  const retention = createRetentionService({
    db,
    clock,
    audit,
    storage,
    retentionDays: (tenantId) => settings.teamSetting(tenantId, 'audio_retention_days'),
    enabled: async () => (await settings.hubSetting('retention_enabled')) !== false,
  });

  // Failed inference jobs (issue 21): marked by the worker, re-driven with a bound, listed and retried by hub admins.
  const jobs = createJobsService({ db, clock, audit, queue: infra.queue, failures: audio.inferenceFailures });

  // 9. Public team pages (issue 20), statistics and what reaches outside.
  const publicPages = createPublicPagesService({
    db,
    kv,
    clock,
    settings,
    visibility,
    sensitive,
    catalog: speciesCatalog,
    // Species without a photo yet are asked for, so a later visit (after the 10-minute cache) has them.
    photosOf: async (codes) =>
      new Map(
        (await speciesImages.photosFor(codes, { queue: true })).map((p) => [
          p.code,
          { url: p.url, credit: p.author, licence: p.licence, licenceUrl: p.licenceUrl, sourceUrl: p.sourceUrl },
        ]),
      ),
    publicUrl: config.publicUrl,
  });
  // Statistics that reach outside (issue 19): weather at the satellites, eBird's expected species, the map.
  const sources = config.statsSources;
  const weather = createWeatherService({
    db,
    clock,
    client: createOpenMeteoClient({
      forecastUrl: sources.weatherForecastUrl,
      archiveUrl: sources.weatherArchiveUrl,
      timeoutMs: sources.timeoutMs,
    }),
  });
  const ebird = createEbirdService({
    db,
    clock,
    client: sources.ebirdApiKey
      ? createEbirdClient({ baseUrl: sources.ebirdApiUrl, apiKey: sources.ebirdApiKey, timeoutMs: sources.timeoutMs })
      : null,
  });
  // The range filter (issue 35): the hub's range model judges what the worker heard; the expected-species view reads it.
  const range = createRangeService({ db, clock, storage, models, devices, settings, catalog: speciesCatalog, ebird });
  const geoStats = createGeoStatsService({
    clock,
    settings,
    map: createMapService({ db, devices, visibility }),
    weather: createWeatherCorrelationService({ db, devices, visibility, weather }),
    expected: createExpectedSpeciesService({ db, devices, visibility, ebird, range, catalog: speciesCatalog }),
  });
  const stats = createStatsService({ db, clock, settings, visibility });
  // The day at a glance (issue 36): the dashboard's grid and the public page's.
  const dayGrid = createDayGridService({ db, clock, settings, visibility, calibrated: calibration.calibrated });
  const publicDay = createPublicDayService({
    kv,
    clock,
    pages: publicPages,
    settings,
    visibility,
    sensitive,
    catalog: speciesCatalog,
    dayGrid,
  });
  const storageUsage = createStorageUsageService({ clock, storage, audio, devices, settings, teamName: teams.teamName });

  // 10. Who calls: credentials, and the guard with a team resolver per resource.
  const credentials = cacheCredentials(auth.credentials);
  const resolver = createAuthResolver({ internalKey: config.internalKey, jwt, credentials, clock });
  const guard = createGuard({
    teamResolvers: {
      membership: teams.teamOfMembership,
      invite: invites.teamOfInvite,
      apiKey: apiKeys.teamOfKey,
      chunk: audio.teamOfChunk,
      detection: detections.teamOfDetection,
      satellite: async (id) => (await satellites.deviceFacts(id))?.tenantId ?? null,
      alert: alerting.alerts.teamOfAlert,
      alertRule: alerting.rules.teamOfRule,
      alertChannel: alerting.channels.teamOfChannel,
      exportJob: exportsService.teamOfJob,
      scheduledExport: scheduledExports.teamOfScheduled,
      fieldNote: fieldNotes.teamOfNote,
      publishedAudio: publishedAudio.teamOf,
    },
    teamExists: teams.teamExists,
    deviceFacts: satellites.deviceFacts,
    callerGate: createEnrollmentGate(settings),
  });

  return {
    audit,
    accounts,
    jwt,
    settings,
    apiKeys,
    teams,
    invites,
    joining,
    satellites,
    devices,
    audio,
    auth,
    mfa,
    users,
    emailChanges,
    resolver,
    credentials,
    guard,
    departureHandlers,
    live,
    detections,
    share,
    models,
    range,
    modelInstaller,
    workers,
    limits,
    alerting,
    exports: exportsService,
    scheduledExports,
    publishedAudio,
    retention,
    jobs,
    mobile,
    fieldNotes,
    geoStats,
    weather,
    ebird,
    metrics,
    systemStatus,
    speciesImages,
    sensitive,
    publicPages,
    // Read by the route list only.
    auditLog,
    calibration,
    speciesThresholds,
    sessions,
    review,
    detectionSummary,
    similarity,
    spectrograms,
    species,
    stats,
    dayGrid,
    publicDay,
    storageUsage,
  };
}

export type Services = ReturnType<typeof createServices>;
