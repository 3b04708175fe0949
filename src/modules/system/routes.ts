import { Type } from 'typebox';
import type { Clock } from '../../core/clock.ts';
import { access, defineRoute } from '../../core/permissions.ts';
import { Uuid } from '../../core/schemas.ts';
import { HUB_VERSION } from './version.ts';
import { type ReleaseSettings, versions } from './releases.ts';

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
