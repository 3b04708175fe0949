/** A team's public page as anyone sees it, signed in or not (GET /public/teams/:slug). */
import { useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type PublicTeamPage = Body<'/api/public/teams/{slug}', 'get'>;

export const publicPageKeys = { page: (slug: string, lang: string) => ['public-team-page', slug, lang] as const };

export function usePublicTeamPage(slug: string, lang: string) {
  return useQuery({
    queryKey: publicPageKeys.page(slug, lang),
    queryFn: () => data(api.GET('/api/public/teams/{slug}', { params: { path: { slug }, query: { lang } } })),
    retry: false,
    // The hub keeps the page 10 minutes; asking more often gains nothing.
    staleTime: 5 * 60_000,
  });
}
