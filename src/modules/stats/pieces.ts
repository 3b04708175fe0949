/**
 * Cutting a window into what the period aggregates hold (migration 0021): whole UTC months, whole
 * UTC days, and a remainder (the partial days at the edges) that is read from detections. The
 * sum over the pieces is exact for any window in any zone.
 */
const DAY = 86_400_000;

export interface Range {
  from: Date;
  to: Date;
  /** the group this range counts into (a local month of the migration grid, the whole window, …) */
  group: number;
}

export interface Pieces {
  /** aggregate rows: grain, period (YYYY-MM-DD, a UTC day or the first of a UTC month), group */
  periods: Array<{ grain: 'day' | 'month'; period: string; group: number }>;
  /** remainders read row by row */
  raws: Range[];
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayCeil = (ms: number) => Math.ceil(ms / DAY) * DAY;
const dayFloor = (ms: number) => Math.floor(ms / DAY) * DAY;
const monthStart = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
const nextMonth = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

export function piecesOf(ranges: readonly Range[]): Pieces {
  const out: Pieces = { periods: [], raws: [] };
  for (const r of ranges) {
    const a = r.from.getTime();
    const b = r.to.getTime();
    if (b <= a) continue;
    const d1 = dayCeil(a);
    const d2 = dayFloor(b);
    if (d1 >= d2) {
      out.raws.push(r);
      continue;
    }
    if (a < d1) out.raws.push({ from: r.from, to: new Date(d1), group: r.group });
    if (d2 < b) out.raws.push({ from: new Date(d2), to: r.to, group: r.group });
    const m1 = monthStart(d1) === d1 ? d1 : nextMonth(d1);
    const m2 = monthStart(d2);
    const days = (x: number, y: number) => {
      for (let t = x; t < y; t += DAY) out.periods.push({ grain: 'day', period: iso(t), group: r.group });
    };
    if (m1 < m2) {
      days(d1, m1);
      for (let t = m1; t < m2; t = nextMonth(t)) out.periods.push({ grain: 'month', period: iso(t), group: r.group });
      days(m2, d2);
    } else days(d1, d2);
  }
  return out;
}
