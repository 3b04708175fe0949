/**
 * Cutting a window into what the period aggregates hold (migrations 0021, 0025): whole UTC years,
 * whole UTC months, whole UTC days, and edges finer than a day read from detections. Each edge is
 * snapped to the nearest UTC midnight, each day edge to the nearest month start and each month
 * edge to the nearest year start when that needs fewer rows; what a snap adds or leaves out is
 * corrected by signed pieces (a local month in Berlin is its UTC month plus the hour before it
 * minus the hours after it), so any year-long window costs about three rows per key (a year and a
 * month at each end) and a few hours of rows. The signed sum is exact for any window in any zone.
 */
const DAY = 86_400_000;

export interface Range {
  from: Date;
  to: Date;
  /** the group this range counts into (a local month of the migration grid, the whole window, …) */
  group: number;
}

export interface Pieces {
  /** aggregate rows: grain, period (YYYY-MM-DD, a UTC day or the first of a UTC month), group, +1 or −1 */
  periods: Array<{ grain: 'day' | 'month' | 'year'; period: string; group: number; sign: number }>;
  /** spans read row by row, added (+1) or taken away (−1) */
  raws: Array<Range & { sign: number }>;
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const monthStart = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
const nextMonth = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};
const yearStart = (ms: number) => Date.UTC(new Date(ms).getUTCFullYear(), 0, 1);
const nextYear = (ms: number) => Date.UTC(new Date(ms).getUTCFullYear() + 1, 0, 1);
/** The nearest first of January (at a UTC midnight). */
const yearRound = (ms: number) => {
  const lo = yearStart(ms);
  const hi = nextYear(ms);
  return ms - lo <= hi - ms ? lo : hi;
};
/** Whole months from x up to y (both firsts of a month); negative when y is before x. */
const monthsBetween = (x: number, y: number) => {
  const a = new Date(x);
  const b = new Date(y);
  return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth();
};

/** The nearest UTC midnight. */
const dayRound = (ms: number) => Math.round(ms / DAY) * DAY;
/** The nearest first of a month (at a UTC midnight). */
const monthRound = (ms: number) => {
  const lo = monthStart(ms);
  const hi = nextMonth(ms);
  return ms - lo <= hi - ms ? lo : hi;
};

export function piecesOf(ranges: readonly Range[]): Pieces {
  const out: Pieces = { periods: [], raws: [] };
  const raw = (x: number, y: number, group: number, sign: number) => {
    if (x < y) out.raws.push({ from: new Date(x), to: new Date(y), group, sign });
  };
  const days = (x: number, y: number, group: number, sign: number) => {
    for (let t = x; t < y; t += DAY) out.periods.push({ grain: 'day', period: iso(t), group, sign });
  };
  const months = (x: number, y: number, group: number, sign: number) => {
    for (let t = x; t < y; t = nextMonth(t)) out.periods.push({ grain: 'month', period: iso(t), group, sign });
  };
  for (const r of ranges) {
    const a = r.from.getTime();
    const b = r.to.getTime();
    if (b <= a) continue;
    // Under two days the rows cost less than a day's aggregate rows.
    if (b - a < 2 * DAY) {
      raw(a, b, r.group, 1);
      continue;
    }
    const a1 = dayRound(a);
    const b1 = dayRound(b);
    raw(a, a1, r.group, 1);
    raw(a1, a, r.group, -1);
    raw(b1, b, r.group, 1);
    raw(b, b1, r.group, -1);
    const m1 = monthRound(a1);
    const m2 = monthRound(b1);
    if (m1 < m2) {
      const y1 = yearRound(m1);
      const y2 = yearRound(m2);
      const years = monthsBetween(y1, y2) / 12;
      // Years pay off when a year row plus the months that correct its ends are fewer than the months.
      if (years > 0 && years + Math.abs(monthsBetween(y1, m1)) + Math.abs(monthsBetween(m2, y2)) < monthsBetween(m1, m2)) {
        for (let t = y1; t < y2; t = nextYear(t)) out.periods.push({ grain: 'year', period: iso(t), group: r.group, sign: 1 });
        months(m1, y1, r.group, 1);
        months(y1, m1, r.group, -1);
        months(y2, m2, r.group, 1);
        months(m2, y2, r.group, -1);
      } else for (let t = m1; t < m2; t = nextMonth(t)) out.periods.push({ grain: 'month', period: iso(t), group: r.group, sign: 1 });
      days(a1, m1, r.group, 1);
      days(m1, a1, r.group, -1);
      days(m2, b1, r.group, 1);
      days(b1, m2, r.group, -1);
    } else days(a1, b1, r.group, 1);
  }
  return out;
}
