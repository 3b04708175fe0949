/**
 * What every Statistics view shares: the filter (window and satellite) kept in the URL so it
 * survives switching views and reloading, the note naming the window and time zone the hub
 * counted in, number and local-day formatting in the person's language and date format, and
 * links to a species' profile.
 */
import { useCallback, useMemo, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useSatellites } from '../../api/hooks/satellites';
import type { StatsFilter } from '../../api/hooks/stats';
import { useLang, useT } from '../../i18n';
import { formatDate, useSession } from '../../session';
import { useSpeciesNames } from '../../species';
import { DateInput } from '../../components/DateInput';

export const DAY_CHOICES = [30, 90, 365] as const;

/** The filter of the URL: ?days=90, or ?from=2026-01-01&to=2026-02-01 (to exclusive), and ?satellite=<id>. */
export function useStatsFilter(defaultDays = 30): StatsFilter {
  const { team } = useSession();
  const [params] = useSearchParams();
  const from = params.get('from') ?? undefined;
  const to = params.get('to') ?? undefined;
  const days = Number(params.get('days')) || defaultDays;
  const satelliteId = params.get('satellite') ?? undefined;
  return useMemo(
    () => ({ tenantId: team?.id ?? null, satelliteId, ...(from || to ? { from, to } : { days }) }),
    [team?.id, satelliteId, from, to, days],
  );
}

/** The URL's search string, for links between views that keep the filter. */
export function useFilterSearch(): string {
  const [params] = useSearchParams();
  const keep = new URLSearchParams();
  for (const k of ['days', 'from', 'to', 'satellite']) {
    const v = params.get(k);
    if (v) keep.set(k, v);
  }
  const s = keep.toString();
  return s ? `?${s}` : '';
}

const isoDay = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
const nextDay = (day: string) => {
  const [y, m, d] = day.split('-').map(Number);
  return isoDay(new Date(y, m - 1, d + 1));
};
const prevDay = (day: string) => {
  const [y, m, d] = day.split('-').map(Number);
  return isoDay(new Date(y, m - 1, d - 1));
};

/**
 * The window picker and satellite filter. A custom window is picked as two dates, both
 * included; the hub reads `to` as exclusive, so the URL holds the day after the last one.
 */
export function StatsFilters({ satellite = true, defaultDays = 30 }: { satellite?: boolean; defaultDays?: number }) {
  const t = useT();
  const { team } = useSession();
  const [params, setParams] = useSearchParams();
  const sats = useSatellites(team?.id ?? null);
  const custom = params.has('from') || params.has('to');
  const [draft, setDraft] = useState(() => ({
    from: params.get('from') ?? isoDay(new Date(Date.now() - 29 * 86_400_000)),
    through: params.get('to') ? prevDay(params.get('to')!) : isoDay(new Date()),
  }));
  const [picking, setPicking] = useState(custom);

  const update = useCallback(
    (change: (p: URLSearchParams) => void) =>
      setParams(
        (prev) => {
          const next = new URLSearchParams(prev);
          change(next);
          return next;
        },
        { replace: true },
      ),
    [setParams],
  );

  function chooseWindow(value: string) {
    if (value === 'custom') {
      setPicking(true);
      return;
    }
    setPicking(false);
    update((p) => {
      p.delete('from');
      p.delete('to');
      p.set('days', value);
    });
  }

  function applyDates(e: FormEvent) {
    e.preventDefault();
    update((p) => {
      p.delete('days');
      p.set('from', draft.from);
      p.set('to', nextDay(draft.through));
    });
  }

  const windowValue = picking ? 'custom' : String(Number(params.get('days')) || defaultDays);
  return (
    <form className="stats-filters" aria-label={t('stats.filters')} onSubmit={applyDates}>
      <div className="field">
        <label htmlFor="stats-window">{t('stats.window')}</label>
        <select id="stats-window" value={windowValue} onChange={(e) => chooseWindow(e.target.value)}>
          {DAY_CHOICES.map((d) => (
            <option key={d} value={d}>
              {t('stats.window.days', { n: d })}
            </option>
          ))}
          <option value="custom">{t('stats.window.custom')}</option>
        </select>
      </div>
      {picking ? (
        <>
          <div className="field">
            <label htmlFor="stats-from">{t('stats.from')}</label>
            <DateInput
              id="stats-from"
              type="date"
              required
              value={draft.from}
              onChange={(e) => setDraft({ ...draft, from: e.target.value })}
            />
          </div>
          <div className="field">
            <label htmlFor="stats-through">{t('stats.through')}</label>
            <DateInput
              id="stats-through"
              type="date"
              required
              min={draft.from}
              value={draft.through}
              onChange={(e) => setDraft({ ...draft, through: e.target.value })}
            />
          </div>
          <button type="submit">{t('stats.apply')}</button>
        </>
      ) : null}
      {satellite ? (
        <div className="field">
          <label htmlFor="stats-satellite">{t('stats.satellite')}</label>
          <select
            id="stats-satellite"
            value={params.get('satellite') ?? ''}
            onChange={(e) =>
              update((p) => {
                if (e.target.value) p.set('satellite', e.target.value);
                else p.delete('satellite');
              })
            }
          >
            <option value="">{t('stats.satellite.all')}</option>
            {(sats.data?.satellites ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
    </form>
  );
}

/** Numbers, percentages, local days and months in the person's language and date format. */
export function useStatsFormat() {
  const lang = useLang();
  const { me } = useSession();
  const pattern = me.preferences.dateFormatPrimary || 'YYYY-MM-DD';
  const hour12 = me.preferences.timeFormat === '12h';
  return useMemo(() => {
    const int = new Intl.NumberFormat(lang, { maximumFractionDigits: 0 });
    const dec = new Intl.NumberFormat(lang, { minimumFractionDigits: 3, maximumFractionDigits: 3 });
    const pct = new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: 1 });
    const month = new Intl.DateTimeFormat(lang, { month: 'short', year: 'numeric' });
    const hourFmt = new Intl.DateTimeFormat(lang, { hour: 'numeric', hour12 });
    const short = new Intl.DateTimeFormat(lang, { day: 'numeric', month: 'numeric' });
    const dayOf = (day: string) => {
      const [y, m, d] = day.slice(0, 10).split('-').map(Number);
      return new Date(y, m - 1, d);
    };
    return {
      int: (n: number | null | undefined) => (n === null || n === undefined ? '—' : int.format(n)),
      dec: (n: number | null | undefined) => (n === null || n === undefined ? '—' : dec.format(n)),
      pct: (n: number | null | undefined) => (n === null || n === undefined ? '—' : pct.format(n)),
      /** A local day YYYY-MM-DD in the person's date format (no time zone shift: it is a calendar day). */
      day: (day: string) => formatDate(dayOf(day), pattern, lang),
      /** A local day as day and month only, for crowded axes. */
      shortDay: (day: string) => short.format(dayOf(day)),
      /** A local month YYYY-MM as "Mar 2026" / "März 2026". */
      month: (ym: string) => month.format(dayOf(`${ym}-01`)),
      /** A wall-clock hour 0–23 as "07" or "7 AM". */
      hour: (h: number) => (hour12 ? hourFmt.format(new Date(2000, 0, 1, h)) : String(h).padStart(2, '0')),
      dayOf,
    };
  }, [lang, pattern, hour12]);
}

export type StatsFormat = ReturnType<typeof useStatsFormat>;

/** Which window and zone the hub counted in; every figure of the view uses them. */
export function ZoneNote({ answer }: { answer?: { timeZone: string; from: string; to: string } | null }) {
  const t = useT();
  const fmt = useStatsFormat();
  if (!answer) return null;
  // `to` is exclusive: the last counted day is the one before it, in the team's zone.
  const last = new Date(Date.parse(answer.to) - 1);
  const lastDay = new Intl.DateTimeFormat('en-CA', { timeZone: answer.timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    last,
  );
  const firstDay = new Intl.DateTimeFormat('en-CA', {
    timeZone: answer.timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(new Date(answer.from));
  return (
    <p className="muted small" data-testid="stats-zone">
      {t('stats.zoneNote', { from: fmt.day(firstDay), to: fmt.day(lastDay), zone: answer.timeZone })}
    </p>
  );
}

/** A species' name in the person's language, linking to its profile (keeping the filter). */
export function SpeciesLink({ code, name, scientific, names }: { code: string; name: string; scientific?: string; names: SpeciesNamer }) {
  const search = useFilterSearch();
  const n = names(code, name);
  return (
    <>
      <Link to={`/stats/species/${encodeURIComponent(code)}${search}`} data-testid="species-link">
        {n.primary}
      </Link>
      {scientific ? <em className="muted small"> {scientific}</em> : null}
    </>
  );
}

export type SpeciesNamer = ReturnType<typeof useSpeciesNames>;

/** Names for the species codes of a list, in the person's languages. */
export function useNamer(codes: string[]): SpeciesNamer {
  return useSpeciesNames(codes);
}

export function Tile({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="stat-tile" data-testid={testId}>
      <strong>{value}</strong>
      <span>{label}</span>
    </div>
  );
}
