/**
 * UI strings in English and German. The language follows the signed-in person's
 * primaryLanguage preference (any other language falls back to English), and the browser's
 * language before sign-in.
 */
import { createContext, useContext, useMemo } from 'react';
import { en, type Key } from './locales/en';
import { de } from './locales/de';
import { formatMessage } from './message-format';

export type { Key };

export const DICTIONARIES = { en, de } as const;
export type Lang = keyof typeof DICTIONARIES;
export const LANGS: Lang[] = ['en', 'de'];

export function pickLang(pref: string | undefined | null): Lang {
  const base = (pref ?? '').toLowerCase().split(/[-_]/)[0];
  return (LANGS as string[]).includes(base) ? (base as Lang) : 'en';
}

export type T = (key: Key, vars?: Record<string, string | number>) => string;

export function translator(lang: Lang): T {
  const dict: Record<Key, string> = DICTIONARIES[lang];
  // Plural forms ({n, plural, one {…} other {…}}) are chosen by Intl.PluralRules of the language on screen.
  return (key, vars) => formatMessage(dict[key] ?? en[key] ?? key, vars, lang);
}

export const I18nContext = createContext<{ lang: Lang; t: T }>({ lang: 'en', t: translator('en') });
export const useT = () => useContext(I18nContext).t;
export const useLang = () => useContext(I18nContext).lang;

/** A team role's name in the interface language (the hub's value stays the option value). */
export function useRoleName(): (role: string) => string {
  const t = useT();
  return (r) => (r === 'owner' || r === 'admin' || r === 'member' || r === 'viewer' ? t(`role.${r}`) : r);
}

/**
 * The translator of the language on screen, for code outside React (the API client's fallback
 * messages, the passkey helpers). LanguageProvider keeps it current.
 */
let active: T = translator('en');
let activeLanguage: Lang = 'en';
export function setActiveLang(lang: Lang) {
  active = translator(lang);
  activeLanguage = lang;
}
/** The language on screen, for code outside React (the API client's messages for error codes). */
export const activeLang = (): Lang => activeLanguage;
export const tActive: T = (key, vars) => active(key, vars);

/** A language tag's name in the interface language ("de" → "German" or "Deutsch"); the tag when the browser has none. */
export function useLanguageName(): (tag: string) => string {
  const lang = useLang();
  return useMemo(() => {
    let names: Intl.DisplayNames | null = null;
    try {
      names = new Intl.DisplayNames([lang], { type: 'language' });
    } catch {
      names = null;
    }
    return (tag: string) => {
      try {
        return names?.of(tag) ?? tag;
      } catch {
        return tag;
      }
    };
  }, [lang]);
}
