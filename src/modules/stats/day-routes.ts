/**
 * The day at a glance (issue 36 point 1): GET /stats/day like every stats view (Viewer+, the team
 * from ?tenantId= or the caller's teams). The public page's day is in src/modules/public/day-routes.ts.
 */
import { access, defineRoute } from '../../core/permissions.ts';
import { readableTeams } from '../../core/actor.ts';
import { DayGrid, DayQuery } from './day-schemas.ts';
import type { DayGridService } from './day.ts';

export function dayRoutes(dayGrid: DayGridService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/stats/day',
      action: 'stats.day',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary:
        'One local day (?date=, default today) as species × local hour: counted calls and best calibrated confidence per cell, the species heard most recently first, with the previous and next day',
      tags: ['stats'],
      schema: { querystring: DayQuery, response: { 200: DayGrid } },
      handler: ({ actor, query }) => dayGrid.day(readableTeams(actor), query),
    }),
  ];
}
