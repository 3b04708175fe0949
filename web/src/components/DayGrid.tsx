/**
 * The day at a glance (issue 36 point 1): species down, the 24 local hours across, each cell the
 * hour's calls (shade: how many, beside the day's busiest cell) with the best confidence in its
 * title. Shared by the dashboard's Day page (cells open the Detections page for that species and
 * hour) and the public team page (no links). A coarse row (a sensitive species on the public
 * page) gives the day's total only.
 */
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { DayGrid as Grid } from '../api/hooks/day';
import { formatPercent } from '../format';
import { useLang, useT } from '../i18n';
import './day-grid.css';

type Species = Grid['species'][number];

const hh = (h: number) => String(h).padStart(2, '0');

/** The shade of a cell, 1–4, by its count against the busiest cell of the day. */
const level = (n: number, max: number) => (n <= 0 ? 0 : Math.min(4, Math.ceil((n / max) * 4)));

/** The Detections page filtered to one species and one local hour of the grid's day. */
export function hourDetectionsHref(code: string, hour: Grid['hours'][number]): string | null {
  if (!hour.from || !hour.to) return null;
  return `/detections?${new URLSearchParams({ species: code, start: hour.from, end: hour.to })}`;
}

export function DayGrid({
  grid,
  nameOf = (s) => s.commonName,
  photoOf,
  linkCells = false,
}: {
  grid: Grid;
  /** The name to show (the dashboard's languages). */
  nameOf?: (s: Species) => string;
  photoOf?: (s: Species, name: string) => ReactNode;
  /** Cells open the Detections page (signed-in team members). */
  linkCells?: boolean;
}) {
  const t = useT();
  const lang = useLang();
  const max = Math.max(1, ...grid.species.flatMap((s) => s.hours.map((c) => c.count)));
  return (
    <div className="day-grid-wrap">
      <table className="day-grid" data-testid="day-grid">
        <caption className="sr-only">{t('day.caption')}</caption>
        <thead>
          <tr>
            <th scope="col" className="day-species">
              {t('day.species')}
            </th>
            {grid.hours.map((h) => (
              <th key={h.hour} scope="col" className={`day-hour${h.hour % 3 ? ' minor' : ''}`} abbr={`${hh(h.hour)}:00`}>
                {hh(h.hour)}
              </th>
            ))}
            <th scope="col" className="day-total">
              {t('day.total')}
            </th>
          </tr>
        </thead>
        <tbody>
          {grid.species.map((s) => {
            const name = nameOf(s);
            return (
              <tr key={s.code} data-testid="day-row" data-code={s.code}>
                <th scope="row" className="day-species">
                  <span className="day-name">
                    {photoOf?.(s, name)}
                    <span>
                      <strong>{name}</strong> <em className="muted">{s.scientificName}</em>
                    </span>
                  </span>
                </th>
                {s.coarse ? (
                  <td colSpan={24} className="day-coarse" data-testid="day-coarse">
                    {t('day.coarse')}
                  </td>
                ) : (
                  s.hours.map((c, h) => {
                    if (c.count === 0) return <td key={h} />;
                    const label = t('day.cell', {
                      name,
                      from: `${hh(h)}:00`,
                      to: `${hh((h + 1) % 24)}:00`,
                      n: c.count,
                      best: formatPercent(c.bestConfidence, lang),
                    });
                    const href = linkCells ? hourDetectionsHref(s.code, grid.hours[h]) : null;
                    return (
                      <td key={h} data-level={level(c.count, max)} data-hour={h}>
                        {href ? (
                          <Link to={href} title={label} aria-label={label} data-testid="day-cell">
                            {c.count}
                          </Link>
                        ) : (
                          <span title={label} aria-label={label} data-testid="day-cell">
                            {c.count}
                          </span>
                        )}
                      </td>
                    );
                  })
                )}
                <td className="day-total" title={t('day.best', { best: formatPercent(s.bestConfidence, lang) })}>
                  {s.count}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A local date (YYYY-MM-DD) as words: the day is the team's, so no zone conversion (read at noon UTC). */
export function dayLabel(date: string, lang: string): string {
  return new Date(`${date}T12:00:00Z`).toLocaleDateString(lang, {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
}

/** Yesterday and tomorrow (none past today), a date picker, and a way back to today. */
export function DayNav({ grid, onGo }: { grid: Grid; onGo: (date: string | null) => void }) {
  const t = useT();
  const lang = useLang();
  return (
    <nav className="day-nav" aria-label={t('day.nav')}>
      <button type="button" className="secondary" onClick={() => onGo(grid.previous)} data-testid="day-prev">
        ← {t('day.previous')}
      </button>
      <span className="day-date" data-testid="day-date" aria-live="polite">
        {grid.date === grid.today ? `${t('day.today')}, ` : ''}
        {dayLabel(grid.date, lang)}
      </span>
      {grid.next ? (
        <button type="button" className="secondary" onClick={() => onGo(grid.next)} data-testid="day-next">
          {t('day.next')} →
        </button>
      ) : null}
      <label className="inline">
        <span className="sr-only">{t('day.pick')}</span>
        <input
          type="date"
          aria-label={t('day.pick')}
          value={grid.date}
          max={grid.today}
          onChange={(e) => (e.target.value ? onGo(e.target.value > grid.today ? grid.today : e.target.value) : undefined)}
        />
      </label>
      {grid.date !== grid.today ? (
        <button type="button" className="secondary" onClick={() => onGo(null)} data-testid="day-today">
          {t('day.backToToday')}
        </button>
      ) : null}
    </nav>
  );
}
