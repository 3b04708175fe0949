import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Paging, Uuid } from '../../core/schemas.ts';
import type { createAuditRepo } from './repo.ts';

export function auditRoutes(repo: ReturnType<typeof createAuditRepo>) {
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
        querystring: Type.Object(
          {
            action: Type.Optional(Type.String({ maxLength: 100 })),
            tenantId: Type.Optional(Uuid),
            actorUserId: Type.Optional(Uuid),
            targetId: Type.Optional(Type.String({ maxLength: 100 })),
            from: Type.Optional(Type.String({ format: 'date-time' })),
            to: Type.Optional(Type.String({ format: 'date-time' })),
            ...Paging,
          },
          { additionalProperties: false },
        ),
      },
      handler: async ({ query }) => {
        const limit = query.limit ?? 50;
        const offset = query.offset ?? 0;
        const { rows, total } = await repo.list({
          ...query,
          from: query.from ? new Date(query.from) : undefined,
          to: query.to ? new Date(query.to) : undefined,
          limit,
          offset,
        });
        return {
          entries: rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() })),
          total,
          limit,
          offset,
        };
      },
    }),
  ];
}
