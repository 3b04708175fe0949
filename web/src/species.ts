/**
 * Species names in the person's languages: one bulk translate call per set of codes on screen
 * (a page of detections, one detail), cached for the session. English stays the fallback while
 * the names load or when the catalog has no translation.
 */
import { useCallback, useMemo } from 'react';
import { fetchSpeciesNames, useTranslatedNames } from './api/hooks/species';
import { useSession } from './session';

export interface SpeciesNames {
  /** The name in the primary language. */
  primary: string;
  /** Names in the secondary languages that differ from the primary one. */
  others: string[];
}

/** The person's languages, primary first, without repeats. */
export function useLanguages(): string[] {
  const { me } = useSession();
  const primary = me.preferences.primaryLanguage || 'en';
  const secondary = me.preferences.secondaryLanguages;
  return useMemo(() => [...new Set([primary, ...(secondary ?? [])])], [primary, secondary]);
}

export function useSpeciesNames(codes: readonly string[]): (code: string, english: string) => SpeciesNames {
  const languages = useLanguages();
  const unique = useMemo(() => [...new Set(codes)].sort(), [codes]);
  const englishOnly = languages.length === 1 && languages[0] === 'en';
  const q = useTranslatedNames(unique, languages, unique.length > 0 && !englishOnly);
  const byCode = useMemo(() => new Map((q.data?.species ?? []).map((s) => [s.speciesCode, s.names])), [q.data]);
  return useCallback(
    (code: string, english: string) => {
      const names = byCode.get(code);
      if (!names) return { primary: english, others: [] };
      const primary = names[languages[0]] || english;
      const others = [
        ...new Set(
          languages
            .slice(1)
            .map((l) => names[l])
            .filter((n): n is string => !!n && n !== primary),
        ),
      ];
      return { primary, others };
    },
    [byCode, languages],
  );
}

/**
 * Names one species for a toast: "Eurasian Hoopoe · Wiedehopf", the name in each of the
 * person's languages (primary first). The English name stands in when the catalog has no
 * translation or the lookup fails.
 */
export function useNameInLanguages(): (speciesCode: string, english: string) => Promise<string> {
  const languages = useLanguages().join(',');
  return useCallback(
    async (speciesCode: string, english: string) => {
      try {
        const names = await fetchSpeciesNames(speciesCode, languages || 'en');
        return names.length > 0 ? names.join(' · ') : english;
      } catch {
        return english;
      }
    },
    [languages],
  );
}
