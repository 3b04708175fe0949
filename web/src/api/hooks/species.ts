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
