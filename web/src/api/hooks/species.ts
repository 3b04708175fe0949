/** Species names: the catalog's languages and names translated in bulk. */
import { useQuery } from '@tanstack/react-query';
import { api, data } from '../client';

export const speciesKeys = {
  languages: ['species-languages'] as const,
  names: (languages: string[], codes: string[]) => ['species-names', languages.join(','), codes.join(',')] as const,
};

export function useCatalogLanguages() {
  return useQuery({ queryKey: speciesKeys.languages, staleTime: Infinity, queryFn: () => data(api.GET('/api/species/languages')) });
}

/** Names of `codes` (at most 200) in `languages`, cached for the session. */
export function useTranslatedNames(codes: string[], languages: string[], enabled: boolean) {
  return useQuery({
    queryKey: speciesKeys.names(languages, codes),
    enabled,
    staleTime: Infinity,
    queryFn: () => data(api.POST('/api/species/translate', { body: { speciesCodes: codes.slice(0, 200), languages } })),
  });
}

/**
 * One species' names in `languages` (comma-separated), fetched outside a query: the live toasts
 * name a species once, as its event arrives. Each language's name once, in the hub's order.
 */
export async function fetchSpeciesNames(speciesCode: string, languages: string): Promise<string[]> {
  const tr = await data<{ names: Record<string, string> }>(
    api.GET('/api/species/translate', { params: { query: { speciesCode, languages } } }),
  );
  return [...new Set(Object.values(tr.names))];
}
