/** The public page's day at a glance (issue 36 point 1): GET /public/teams/:slug/day. */
import { access, defineRoute } from '../../core/permissions.ts';
import { DayGrid, PublicDayQuery } from '../stats/day-schemas.ts';
import { SlugParams } from './schemas.ts';
import type { PublicDayService } from './day.ts';

export function publicDayRoutes(publicDay: PublicDayService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/public/teams/:slug/day',
      action: 'public.team_day',
      access: access.public,
      audit: [],
      summary:
        "A team's public day at a glance (?date=, ?lang=): the figures the public page counts; sensitive species left out, or a day total only when the team shows them; the page's 404; cached 10 minutes",
      tags: ['public'],
      schema: { params: SlugParams, querystring: PublicDayQuery, response: { 200: DayGrid } },
      handler: ({ params, query }) => publicDay.day(params.slug, query.date, query.lang),
    }),
  ];
}
