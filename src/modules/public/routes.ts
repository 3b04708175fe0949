import { access, defineRoute } from '../../core/permissions.ts';
import { NotJson } from '../../core/schemas.ts';
import { LangQuery, PublicPage, SlugParams } from './schemas.ts';
import type { PublicPagesService } from './service.ts';

export function publicRoutes(pages: PublicPagesService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/public/teams/:slug',
      action: 'public.team_page',
      access: access.public,
      audit: [],
      summary:
        "A team's public page (?lang= for species names): counts, top species with credited photos, recent firsts, 30 daily totals, towns if opted in, a join hint; 404 unless allow_public_pages and public_page are on; cached 10 minutes",
      tags: ['public'],
      schema: { params: SlugParams, querystring: LangQuery, response: { 200: PublicPage } },
      handler: ({ params, query }) => pages.page(params.slug, query.lang),
    }),

    defineRoute({
      method: 'GET',
      url: '/public/teams/:slug/og',
      action: 'public.team_og',
      access: access.public,
      audit: [],
      summary: "Link-preview HTML (Open Graph, Twitter card) of a team's public page for bots; every value escaped; the same 404",
      tags: ['public'],
      schema: { params: SlugParams, querystring: LangQuery, response: { 200: NotJson('text/html', 'The preview page') } },
      handler: async ({ params, query, reply }) => {
        const html = await pages.og(params.slug, query.lang);
        reply.header('content-type', 'text/html; charset=utf-8');
        return html;
      },
    }),
  ];
}
