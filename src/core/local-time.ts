/**
 * Wall-clock time of an instant in an IANA zone, for exports, reports and alert windows: Intl is
 * asked once per zone and quarter hour (every zone's offset changes only on a quarter hour), the
 * rest is arithmetic, so a million rows cost a few thousand Intl calls.
 */

export interface LocalTime {
  /** YYYY-MM-DD */
  date: string;
  /** HH:MM:SS (24 h) */
  time: string;
  /** ±HH:MM, the zone's offset at that instant */
  offset: string;
  /** Days since 1970-01-01 of the local date: compares local days across rows. */
  day: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

const SLOT_MS = 15 * 60_000;
/** Offsets by zone and 15-minute slot: every zone's offset changes only on a quarter hour. */
const offsets = new Map<string, Map<number, number>>();

/** The zone's offset from UTC in minutes at an instant (Intl once per zone and quarter hour). */
function offsetMinutes(ms: number, timeZone: string): number {
  let byZone = offsets.get(timeZone);
  if (!byZone) offsets.set(timeZone, (byZone = new Map()));
  const slot = Math.floor(ms / SLOT_MS);
  let minutes = byZone.get(slot);
  if (minutes === undefined) {
    const at = slot * SLOT_MS;
    const p: Record<string, number> = {};
    for (const part of formatter(timeZone).formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
    minutes = Math.round((Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - at) / 60_000);
    if (byZone.size > 100_000) byZone.clear();
    byZone.set(slot, minutes);
  }
  return minutes;
}

/** An instant (ISO string or Date) as a wall-clock time in an IANA zone. */
export function localTime(at: string | Date, timeZone: string): LocalTime {
  const ms = typeof at === 'string' ? Date.parse(at) : at.getTime();
  const minutes = offsetMinutes(ms, timeZone);
  // The wall clock as if it were UTC: its UTC fields are the local date and time.
  const wall = new Date(Math.floor(ms / 1000) * 1000 + minutes * 60_000);
  const abs = Math.abs(minutes);
  return {
    date: `${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}`,
    time: `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}`,
    offset: `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`,
    day: Math.floor(wall.getTime() / 86_400_000),
  };
}

/**
 * localTime's date and time as one `YYYY-MM-DD HH:MM:SS` (an export writes one on every row):
 * one Date and its ISO string instead of localTime's parts, for years 0–9999.
 */
export function localStamp(at: string, timeZone: string): string {
  const ms = Date.parse(at);
  const wall = Math.floor(ms / 1000) * 1000 + offsetMinutes(ms, timeZone) * 60_000;
  if (!(wall >= -62_167_219_200_000 && wall < 253_402_300_800_000)) {
    const t = localTime(at, timeZone);
    return `${t.date} ${t.time}`;
  }
  const iso = new Date(wall).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** localTime's `day` alone (days since 1970-01-01 of the local date): what a writer compares on every row. */
export function localDay(at: string, timeZone: string): number {
  const ms = Date.parse(at);
  return Math.floor((Math.floor(ms / 1000) * 1000 + offsetMinutes(ms, timeZone) * 60_000) / 86_400_000);
}
