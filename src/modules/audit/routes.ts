import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Paging, Uuid } from '../../core/schemas.ts';
import type { AuditLogService } from './service.ts';
import { AuditLog } from './schemas.ts';

/** Filters shared by the hub's audit log and a team's activity feed. */
const Filters = {
  action: Type.Optional(Type.String({ maxLength: 100 })),
  actorUserId: Type.Optional(Uuid),
  targetId: Type.Optional(Type.String({ maxLength: 100 })),
  from: Type.Optional(Type.String({ format: 'date-time' })),
  to: Type.Optional(Type.String({ format: 'date-time' })),
  ...Paging,
};

export function auditRoutes(log: AuditLogService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/admin/audit-log',
      action: 'admin.audit_log.list',
      access: access.hubAdmin,
      audit: [],
      summary: 'Audit log, newest first; filter by action (or prefix "user.*"), team, actor, target and time',
      tags: ['admin'],
      schema: {
        querystring: Type.Object({ tenantId: Type.Optional(Uuid), ...Filters }, { additionalProperties: false }),
        response: { 200: AuditLog },
      },
      handler: async ({ query }) => log.listHub(query),
    }),

    defineRoute({
      method: 'GET',
      url: '/audit-log',
      action: 'teams.audit_log.list',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "The team's activity: its audit entries, newest first, filtered and paged like /admin/audit-log",
      tags: ['teams'],
      schema: {
        querystring: Type.Object({ tenantId: Type.Optional(Uuid), ...Filters }, { additionalProperties: false }),
        response: { 200: AuditLog },
      },
      handler: async ({ actor, query }) => {
        const { tenantId: _named, ...filters } = query;
        return log.listTeam(actor, filters);
      },
    }),
  ];
}
