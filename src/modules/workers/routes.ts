import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Uuid } from '../../core/schemas.ts';
import { roleAtLeast, type Actor } from '../../core/actor.ts';
import type { WorkersService } from './service.ts';
import { RecentJobs, WorkersOverview } from './schemas.ts';

/** Hub admins and the internal key see every worker's address and every team's jobs. */
const isHubWide = (actor: Actor) => actor.isPlatformAdmin || actor.kind === 'internal';

/** Teams whose jobs the caller sees: the named team, else those the caller administers (null = all). */
function jobTeams(actor: Actor): string[] | null {
  if (actor.teamId) return [actor.teamId];
  if (isHubWide(actor)) return null;
  if (actor.kind === 'api_key') return [actor.tenantId!];
  return actor.memberships.filter((m) => roleAtLeast(m.role, 'admin')).map((m) => m.tenantId);
}

export function workersRoutes(workers: WorkersService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/workers',
      action: 'workers.list',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary: 'Inference queue counts and the connected workers (one per IP) with their job counts; addresses for hub admins only',
      tags: ['workers'],
      schema: {
        querystring: Type.Object({ tenantId: Type.Optional(Uuid) }, { additionalProperties: false }),
        response: { 200: WorkersOverview },
      },
      handler: ({ actor }) => workers.overview(isHubWide(actor)),
    }),

    defineRoute({
      method: 'GET',
      url: '/workers/jobs',
      action: 'workers.jobs',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary: "Recent finished inference jobs, newest first; a team admin sees their teams' jobs only",
      tags: ['workers'],
      schema: {
        querystring: Type.Object(
          { tenantId: Type.Optional(Uuid), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })) },
          { additionalProperties: false },
        ),
        response: { 200: RecentJobs },
      },
      handler: ({ actor, query }) => workers.recentJobs(jobTeams(actor), query.limit ?? 50),
    }),
  ];
}
