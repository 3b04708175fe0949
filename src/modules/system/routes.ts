import { Type } from 'typebox';
import type { Clock } from '../../core/clock.ts';
import { access, defineRoute } from '../../core/permissions.ts';
import { Uuid } from '../../core/schemas.ts';
import { HUB_VERSION } from './version.ts';

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

    defineRoute({
      method: 'GET',
      url: '/system/versions',
      action: 'system.versions',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary: 'Latest SemVer per stream (hub, satellite, mobile); null until a release of that stream exists',
      tags: ['system'],
      schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }) },
      handler: async () => ({ hub: HUB_VERSION, satellite: null, mobile: null }),
    }),
  ];
}
