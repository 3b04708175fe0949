/** Who is signed in, which team is active, the theme, toasts: the state every page shares. */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { accountKeys, type Me, type Preferences, type Role, type TeamRef } from './api/hooks/account';
import { I18nContext, pickLang, setActiveLang, translator } from './i18n';
import { formatBytes, formatCoords, formatDecimal, formatPercent } from './format';

interface SessionValue {
  me: Me;
  team: TeamRef | null;
  role: Role | undefined;
  setTeamId(id: string): void;
}

const SessionContext = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}

const TEAM_KEY = 'chorus.team';

export function SessionProvider({ me, children }: { me: Me; children: ReactNode }) {
  const [teamId, setTeamIdState] = useState<string | null>(() => localStorage.getItem(TEAM_KEY));
  const team = me.tenants.find((t) => t.id === teamId) ?? me.tenants[0] ?? null;
  const qc = useQueryClient();
  const setTeamId = useCallback(
    (id: string) => {
      localStorage.setItem(TEAM_KEY, id);
      setTeamIdState(id);
      // Team-scoped data of the previous team must not flash on the next one.
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== accountKeys.me[0] });
    },
    [qc],
  );
  const value = useMemo(() => ({ me, team, role: team?.role, setTeamId }), [me, team, setTeamId]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function LanguageProvider({ prefs, children }: { prefs: Preferences | null; children: ReactNode }) {
  const lang = pickLang(prefs?.primaryLanguage ?? navigator.language);
  const value = useMemo(() => {
    setActiveLang(lang);
    return { lang, t: translator(lang) };
  }, [lang]);
  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export type ThemeChoice = 'system' | 'light' | 'dark';
const THEME_KEY = 'chorus.theme';

/** The toggle overrides prefers-color-scheme; 'system' hands the choice back to the browser. */
export function useTheme(): [ThemeChoice, (t: ThemeChoice) => void] {
  const [theme, setTheme] = useState<ThemeChoice>(() => (localStorage.getItem(THEME_KEY) as ThemeChoice) || 'system');
  useEffect(() => {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    localStorage.setItem(THEME_KEY, theme);
  }, [theme]);
  return [theme, setTheme];
}

/** A date in one of the preference formats (YYYY-MM-DD, DD.MM.YYYY, D MMM YYYY, …). */
export function formatDate(d: Date, pattern: string, lang: string): string {
  const month = new Intl.DateTimeFormat(lang, { month: 'short' }).format(d);
  const pad = (n: number) => String(n).padStart(2, '0');
  return pattern.replace(/YYYY|MMM|MM|DD|D/g, (tok) =>
    tok === 'YYYY'
      ? String(d.getFullYear())
      : tok === 'MMM'
        ? month
        : tok === 'MM'
          ? pad(d.getMonth() + 1)
          : tok === 'DD'
            ? pad(d.getDate())
            : String(d.getDate()),
  );
}

/** Dates and times as the person's preferences say (date format, 24h or 12h clock). */
export function useFormat() {
  const { me } = useSession();
  const lang = pickLang(me.preferences.primaryLanguage);
  const hour12 = me.preferences.timeFormat === '12h';
  const pattern = me.preferences.dateFormatPrimary || 'YYYY-MM-DD';
  const second =
    me.preferences.dateFormatSecondary && me.preferences.dateFormatSecondary !== 'none' ? me.preferences.dateFormatSecondary : null;
  return useMemo(() => {
    const time = new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12 });
    return {
      dateTime: (iso: string | null | undefined) => {
        if (!iso) return '—';
        const d = new Date(iso);
        const date = formatDate(d, pattern, lang);
        return second && second !== pattern ? `${date} (${formatDate(d, second, lang)}) ${time.format(d)}` : `${date} ${time.format(d)}`;
      },
      /** A calendar day (a Date in local time) in the person's date format(s), without the time. */
      date: (d: Date) => {
        const date = formatDate(d, pattern, lang);
        return second && second !== pattern ? `${date} (${formatDate(d, second, lang)})` : date;
      },
      pct: (x: number | null | undefined) => formatPercent(x, lang),
      /** Exactly `digits` decimals in the person's language (0,912), for scores and measurements. */
      fixed: (n: number | null | undefined, digits: number) => formatDecimal(n, lang, digits),
      coords: (lat: number, lon: number, digits: number) => formatCoords(lat, lon, lang, digits),
      bytes: (n: number | null | undefined) => formatBytes(n, lang),
      number: (n: number | null | undefined, digits = 0) =>
        n === null || n === undefined ? '—' : new Intl.NumberFormat(lang, { maximumFractionDigits: digits }).format(n),
    };
  }, [lang, hour12, pattern, second]);
}

// Toasts: a tiny queue, announced politely to screen readers.
export interface Toast {
  id: number;
  text: string;
  tone: 'info' | 'rare' | 'alert' | 'error';
}
const ToastContext = createContext<(text: string, tone?: Toast['tone']) => void>(() => {});
export const useToast = () => useContext(ToastContext);

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const push = useCallback((text: string, tone: Toast['tone'] = 'info') => {
    const id = Date.now() + Math.random();
    setToasts((ts) => [...ts.slice(-3), { id, text, tone }]);
    setTimeout(() => setToasts((ts) => ts.filter((x) => x.id !== id)), 8000);
  }, []);
  return (
    <ToastContext.Provider value={push}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((x) => (
          <div key={x.id} className={`toast toast-${x.tone}`} data-testid="toast">
            {x.text}
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}
