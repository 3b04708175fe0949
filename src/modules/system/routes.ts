import { Type } from 'typebox';
import type { Clock } from '../../core/clock.ts';
import { access, defineRoute } from '../../core/permissions.ts';
import { Uuid } from '../../core/schemas.ts';
import { HUB_VERSION } from './version.ts';
import { type ReleaseSettings, versions } from './releases.ts';
import type { SystemStatusService } from './status.ts';
import { Readiness, SystemStatus } from './schemas.ts';

export function systemRoutes(clock: Clock) {
  return [
    defineRoute({
      method: 'GET',
      url: '/health',
      action: 'system.health',
      access: access.public,
      audit: [],
      summary: 'Liveness with the hub version',
      tags: ['system'],
      schema: {
        response: { 200: Type.Object({ status: Type.String(), version: Type.String(), timestamp: Type.String() }) },
      },
      handler: async () => ({ status: 'ok', version: HUB_VERSION, timestamp: clock.now().toISOString() }),
    }),
  ];
}

/** GET /system/versions, apart from systemRoutes because it reads the hub settings. */
export function versionsRoutes(settings: ReleaseSettings, mobileLatest: () => Promise<string | null>) {
  return [
    defineRoute({
      method: 'GET',
      url: '/system/versions',
      action: 'system.versions',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary:
        'Latest SemVer per stream: the hub version, the highest satellite release of the hub setting satellite_releases (null without one), the highest mobile release (GET /mobile/latest; null without one)',
      tags: ['system'],
      schema: {
        querystring: Type.Object({ tenantId: Type.Optional(Uuid) }),
        response: {
          200: Type.Object({
            hub: Type.String(),
            satellite: Type.Union([Type.String(), Type.Null()]),
            mobile: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
      handler: () => versions(settings, mobileLatest),
    }),
  ];
}

/**
 * GET /system/info: what a person sees before signing in (the sign-in page's "Create an account"
 * link) and what the fleet page writes into the satellite command (the hub's public URL).
 */
/** `mail`: whether the hub sends mail at all (SMTP_URL): the forgot-password page says so when it does not. */
export function infoRoutes(settings: ReleaseSettings, publicUrl: string, mail = true) {
  return [
    defineRoute({
      method: 'GET',
      url: '/system/info',
      action: 'system.info',
      access: access.public,
      audit: [],
      summary: 'The hub version, its public URL, whether people may register and create teams, and whether the hub sends mail',
      tags: ['system'],
      schema: {
        response: {
          200: Type.Object({
            version: Type.String(),
            publicUrl: Type.String(),
            selfRegistration: Type.Boolean(),
            teamCreation: Type.Boolean(),
            /** False when the hub has no mail server (SMTP_URL): no reset links, invitations or alert mails leave it. */
            mail: Type.Boolean(),
          }),
        },
      },
      handler: async () => {
        const [selfRegistration, teamCreation] = await Promise.all([
          settings.hubSetting('allow_self_registration'),
          settings.hubSetting('allow_tenant_creation'),
        ]);
        return { version: HUB_VERSION, publicUrl, selfRegistration, teamCreation, mail };
      },
    }),
  ];
}

/** GET /system/status (hub admins) and GET /health/ready (anyone: what a load balancer or an orchestrator asks). */
export function statusRoutes(status: SystemStatusService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/health/ready',
      action: 'system.ready',
      access: access.public,
      audit: [],
      summary:
        'Readiness: 200 when the database (and, in the modes that hold it, the broker) answers; 503 with the failing checks otherwise',
      tags: ['system'],
      schema: { response: { 200: Readiness, 503: Readiness } },
      handler: async ({ reply }) => {
        const r = await status.readiness();
        if (!r.ready) reply.code(503);
        return r;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/system/status',
      action: 'system.status',
      access: access.hubAdmin,
      audit: [],
      summary:
        'Hub processes from the service registry (entries live 30 s), connectivity and latency of the database, key-value store, broker and object storage, and the data summary',
      tags: ['system'],
      schema: { response: { 200: SystemStatus } },
      handler: () => status.status(),
    }),
  ];
}
