import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Uuid } from '../../core/schemas.ts';
import type { StorageUsageService } from './service.ts';
import { HubStorage, TeamStorage } from './schemas.ts';

/** Storage in sight (issue 23): the Fleet page's storage panel and the System area's. */
export function storageUsageRoutes(usage: StorageUsageService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/satellites/storage',
      action: 'satellites.storage',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary:
        "Audio bytes stored per satellite of the team and in total, growth per day over the last 7 days, each satellite's free space from its latest telemetry (lowFreeSpace below the team setting satellite_storage_warning_mb), and the free space where the hub writes with the days it lasts (warning below the hub setting storage_warning_days)",
      tags: ['satellites'],
      schema: { querystring: Type.Object({ tenantId: Uuid }), response: { 200: TeamStorage } },
      handler: ({ actor }) => usage.ofTeam(actor.teamId),
    }),
    defineRoute({
      method: 'GET',
      url: '/system/storage',
      action: 'system.storage',
      access: access.hubAdmin,
      audit: [],
      summary:
        "The hub's stored audio in total and per team, growth per day over the last 7 days, the free space where the hub writes (null with a reason on S3) and the days it lasts, with the warning of the hub setting storage_warning_days",
      tags: ['system'],
      schema: { response: { 200: HubStorage } },
      handler: () => usage.ofHub(),
    }),
  ];
}
