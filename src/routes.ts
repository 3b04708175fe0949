/**
 * The API's route list: each module's routes bound to its services. Every route here carries its
 * permission declaration (src/core/permissions.ts); buildApp registers them behind the one guard.
 */
import type { Infra } from './infra/types.ts';
import type { RouteDef } from './core/permissions.ts';
import { authRoutes } from './modules/auth/routes.ts';
import { mfaRoutes } from './modules/mfa/routes.ts';
import { accountRoutes } from './modules/account/routes.ts';
import { emailChangeRoutes } from './modules/email-change/routes.ts';
import { speciesRoutes } from './modules/species/routes.ts';
import { speciesCatalog } from './modules/species/catalog.ts';
import { satellitesRoutes } from './modules/satellites/routes.ts';
import { audioRoutes } from './modules/audio/routes.ts';
import { spectrogramRoutes } from './modules/audio/spectrogram-routes.ts';
import { shareRoutes } from './modules/share/routes.ts';
import { settingsRoutes } from './modules/settings/routes.ts';
import { teamsRoutes } from './modules/teams/routes.ts';
import { invitesRoutes } from './modules/invites/routes.ts';
import { apiKeysRoutes } from './modules/api-keys/routes.ts';
import { adminRoutes } from './modules/admin/routes.ts';
import { joiningRoutes } from './modules/joining/routes.ts';
import { auditRoutes } from './modules/audit/routes.ts';
import { detectionsRoutes } from './modules/detections/routes.ts';
import { calibrationRoutes } from './modules/calibration/routes.ts';
import { speciesThresholdsRoutes } from './modules/species-thresholds/routes.ts';
import { sessionsRoutes } from './modules/sessions/routes.ts';
import { detectionReviewRoutes } from './modules/detections/review-routes.ts';
import { similarityRoutes } from './modules/similarity/routes.ts';
import { infoRoutes, statusRoutes, systemRoutes, versionsRoutes } from './modules/system/routes.ts';
import { latestRelease } from './modules/system/releases.ts';
import { modelsRoutes } from './modules/models/routes.ts';
import { rangeRoutes } from './modules/range/routes.ts';
import { modelInstallRoutes } from './modules/models/install-routes.ts';
import { workersRoutes } from './modules/workers/routes.ts';
import { alertRulesRoutes, alertsRoutes } from './modules/alerts/routes.ts';
import { exportsRoutes } from './modules/exports/routes.ts';
import { publishedAudioRoutes } from './modules/published-audio/routes.ts';
import { retentionRoutes } from './modules/audio/retention-routes.ts';
import { storageUsageRoutes } from './modules/storage-usage/routes.ts';
import { jobsRoutes } from './modules/jobs/routes.ts';
import { mobileRoutes } from './modules/mobile/routes.ts';
import { fieldNotesRoutes } from './modules/field-notes/routes.ts';
import { speciesImagesRoutes } from './modules/species-images/routes.ts';
import { publicRoutes } from './modules/public/routes.ts';
import { statsRoutes } from './modules/stats/routes.ts';
import { dayRoutes } from './modules/stats/day-routes.ts';
import { publicDayRoutes } from './modules/public/day-routes.ts';
import { statsGeoRoutes } from './modules/stats/geo-routes.ts';

import type { Services } from './services.ts';

/** Every API route of src/modules, with the services behind it. */
export function apiRoutes(s: Services, infra: Infra): RouteDef[] {
  const { clock, config } = infra;
  const { systemStatus, auth, mfa, users, settings, teams, invites, apiKeys, joining, satellites, mobile, audio, spectrograms } = s;
  const { share, detections, calibration, sessions, review, detectionSummary, species, auditLog, models, workers, alerting } = s;
  const {
    exports: exportsService,
    scheduledExports,
    retention,
    storageUsage,
    jobs,
    fieldNotes,
    speciesImages,
    publicPages,
    stats,
    geoStats,
  } = s;
  return [
    ...systemRoutes(clock),
    ...statusRoutes(systemStatus),
    ...authRoutes(auth),
    ...mfaRoutes(mfa),
    ...accountRoutes(users, settings),
    ...emailChangeRoutes(s.emailChanges),
    ...teamsRoutes(teams),
    ...invitesRoutes(invites),
    ...apiKeysRoutes(apiKeys),
    ...adminRoutes(users, teams),
    ...joiningRoutes(joining),
    ...satellitesRoutes(satellites, settings, clock, latestRelease(settings)),
    ...versionsRoutes(settings, mobile.latestVersion),
    ...infoRoutes(settings, config.publicUrl, config.smtpUrl !== null),
    ...audioRoutes(audio),
    ...spectrogramRoutes(spectrograms),
    ...shareRoutes(share),
    ...detectionsRoutes(detections),
    ...calibrationRoutes(calibration),
    ...speciesThresholdsRoutes(s.speciesThresholds),
    ...sessionsRoutes(sessions),
    ...detectionReviewRoutes(review, detectionSummary),
    ...similarityRoutes(s.similarity),
    ...speciesRoutes(speciesCatalog, species),
    ...auditRoutes(auditLog),
    ...settingsRoutes(settings),
    ...modelsRoutes(models),
    ...rangeRoutes(s.range),
    ...modelInstallRoutes(s.modelInstaller),
    ...workersRoutes(workers),
    ...alertsRoutes(alerting.alerts),
    ...alertRulesRoutes(alerting.rules, alerting.channels),
    ...exportsRoutes(exportsService, scheduledExports),
    ...publishedAudioRoutes(s.publishedAudio),
    ...retentionRoutes(retention),
    ...storageUsageRoutes(storageUsage),
    ...jobsRoutes(jobs),
    ...mobileRoutes(mobile),
    ...fieldNotesRoutes(fieldNotes),
    ...speciesImagesRoutes(speciesImages),
    ...publicRoutes(publicPages),
    ...statsRoutes(stats),
    ...dayRoutes(s.dayGrid),
    ...publicDayRoutes(s.publicDay),
    ...statsGeoRoutes(geoStats),
  ];
}
