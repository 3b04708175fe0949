/**
 * The window of every stats endpoint (issue 19): `days` (the last N local days, today included;
 * default 30) or `from`/`to` (`to` exclusive), resolved in the team's local zone (team setting
 * `time_zone`). A plain date (YYYY-MM-DD) is that local day's midnight; an instant is taken as is.
 * Over several teams (no tenantId, a member of more than one team or a hub admin) the hub's value
 * of `time_zone` is used: one zone per answer, named in the response.
 */
import { badRequest } from '../../core/errors.ts';
import { localTime } from '../../core/local-time.ts';
import type { SettingsService } from '../settings/service.ts';

export const TIME_ZONE_KEY = 'time_zone';
export const DEFAULT_DAYS = 30;
/** Longest window (a leap year): what the aggregates are sized for. */
export const MAX_WINDOW_DAYS = 366;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface StatsWindow {
  /** inclusive */
  from: Date;
  /** exclusive */
  to: Date;
  timeZone: string;
}

/** The zone's offset from UTC in minutes at an instant. */
export function offsetMinutes(ms: number, timeZone: string): number {
  const o = localTime(new Date(ms), timeZone).offset;
  const m = Number(o.slice(1, 3)) * 60 + Number(o.slice(4, 6));
  return o[0] === '-' ? -m : m;
}

/** The local date (YYYY-MM-DD) of an instant. */
export const localDate = (at: Date, timeZone: string): string => localTime(at, timeZone).date;

/**
 * The instant of a local date's midnight (the first instant of that local day: where a zone skips
 * midnight, the first wall-clock time after it).
 */
export function localMidnight(date: string, timeZone: string): Date {
  const wall = Date.parse(`${date}T00:00:00Z`);
  let t = wall - offsetMinutes(wall, timeZone) * 60_000;
  // The offset at the guess may differ from the offset at the answer (a change within a day).
  t = wall - offsetMinutes(t, timeZone) * 60_000;
  // A skipped midnight: the guess lands on the previous day; the day starts at the change.
  if (localDate(new Date(t), timeZone) < date) {
    let lo = t;
    let hi = t + 3 * HOUR;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 2 / 60_000) * 60_000;
      if (localDate(new Date(mid), timeZone) < date) lo = mid;
      else hi = mid;
    }
    t = hi;
  }
  return new Date(t);
}

/** The local date `n` days after `date` (calendar arithmetic, no zone involved). */
export function addDays(date: string, n: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
}

function parseEdge(value: string, timeZone: string, name: string): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    if (Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw badRequest(`${name} is not a date`, 'INVALID_WINDOW');
    return localMidnight(value, timeZone);
  }
  const t = Date.parse(value);
  if (Number.isNaN(t) || !/(Z|[+-]\d{2}:?\d{2})$/i.test(value))
    throw badRequest(`${name} must be a date (YYYY-MM-DD) or an ISO 8601 instant with its offset`, 'INVALID_WINDOW');
  return new Date(t);
}

/** The window of a stats query in `timeZone`, `now` from the injected clock. */
export function resolveWindow(q: { days?: number; from?: string; to?: string }, timeZone: string, now: Date): StatsWindow {
  if (q.from !== undefined || q.to !== undefined) {
    if (q.days !== undefined) throw badRequest('Give either days or from/to, not both', 'INVALID_WINDOW');
    if (q.from === undefined || q.to === undefined) throw badRequest('from and to go together', 'INVALID_WINDOW');
    const from = parseEdge(q.from, timeZone, 'from');
    const to = parseEdge(q.to, timeZone, 'to');
    if (to <= from) throw badRequest('to must be after from', 'INVALID_WINDOW');
    if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY + 2 * HOUR)
      throw badRequest(`The window spans at most ${MAX_WINDOW_DAYS} days`, 'INVALID_WINDOW');
    return { from, to, timeZone };
  }
  const days = q.days ?? DEFAULT_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_WINDOW_DAYS)
    throw badRequest(`days is a whole number from 1 to ${MAX_WINDOW_DAYS}`, 'INVALID_WINDOW');
  const today = localDate(now, timeZone);
  return { from: localMidnight(addDays(today, 1 - days), timeZone), to: localMidnight(addDays(today, 1), timeZone), timeZone };
}

/** The local dates of a window, in order (the last one holds the instant before `to`). */
export function localDates(w: StatsWindow): string[] {
  const out: string[] = [];
  const last = localDate(new Date(w.to.getTime() - 1), w.timeZone);
  for (let d = localDate(w.from, w.timeZone); d <= last; d = addDays(d, 1)) out.push(d);
  return out;
}

/**
 * Whether every UTC hour of the window lies in one local hour: the zone's offset is a whole number
 * of hours throughout (checked at both edges and each UTC midnight between, offsets change at most
 * a few times a year and never between whole-hour and fractional within a day in any zone
 * in use), and both edges fall on whole UTC hours. Then the hourly aggregates regroup exactly.
 */
export function hourAligned(w: StatsWindow): boolean {
  if (w.from.getTime() % HOUR !== 0 || w.to.getTime() % HOUR !== 0) return false;
  for (let t = w.from.getTime(); t < w.to.getTime() + DAY; t += DAY) {
    if (offsetMinutes(Math.min(t, w.to.getTime() - 1), w.timeZone) % 60 !== 0) return false;
  }
  return true;
}

/**
 * The stretches of a window with one offset each (split where daylight saving starts or ends), for
 * an hour-aligned window: found day by day, then hour by hour inside the day that changed.
 */
export function offsetSegments(w: StatsWindow): Array<{ from: Date; to: Date; offset: number }> {
  const out: Array<{ from: Date; to: Date; offset: number }> = [];
  const end = w.to.getTime();
  let start = w.from.getTime();
  let offset = offsetMinutes(start, w.timeZone);
  for (let day = start; day < end; day += DAY) {
    const next = Math.min(day + DAY, end - HOUR);
    if (offsetMinutes(next, w.timeZone) === offset) continue;
    for (let t = day + HOUR; t <= next; t += HOUR) {
      const o = offsetMinutes(t, w.timeZone);
      if (o !== offset) {
        out.push({ from: new Date(start), to: new Date(t), offset });
        start = t;
        offset = o;
      }
    }
  }
  out.push({ from: new Date(start), to: new Date(end), offset });
  return out;
}

/**
 * The zone of a stats answer: the team's `time_zone` for one team, the hub's value over several
 * (or every) team.
 */
export async function zoneOf(
  tenantIds: readonly string[] | null,
  settings: Pick<SettingsService, 'teamSetting' | 'hubSetting'>,
): Promise<string> {
  if (tenantIds && tenantIds.length === 1) return settings.teamSetting(tenantIds[0], TIME_ZONE_KEY);
  return settings.hubSetting(TIME_ZONE_KEY);
}
