/**
 * Wall-clock time of an instant in an IANA zone, for exports, reports and alert windows: Intl is
 * asked twice per zone and six hours (and some twenty times more where the offset changes, to
 * find the second it does), the rest is arithmetic, so a million rows cost a few thousand Intl calls.
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

/**
 * A zone's offsets over six hours: `before` until the instant `at`, `after` from it (no zone
 * changes its offset twice in six hours; `at` is Infinity when it does not change at all).
 */
interface Block {
  at: number;
  before: number;
  after: number;
}

const BLOCK_MS = 6 * 3600_000;
/** Blocks by zone and index, from Intl: a year of rows costs some 1,500 Intl calls, a transition some 20 more. */
const blocks = new Map<string, Map<number, Block>>();
/** The block asked last: rows come in time order, so nearly every row asks for the block before them (no Map lookups). */
let lastZone = '';
let lastIndex = NaN;
let lastBlock: Block = { at: Infinity, before: 0, after: 0 };

/** The zone's offset from UTC in minutes at an instant. */
function offsetMinutes(ms: number, timeZone: string): number {
  const index = Math.floor(ms / BLOCK_MS);
  if (index !== lastIndex || timeZone !== lastZone) {
    lastBlock = blockOf(index, timeZone);
    lastZone = timeZone;
    lastIndex = index;
  }
  return ms < lastBlock.at ? lastBlock.before : lastBlock.after;
}

function blockOf(index: number, timeZone: string): Block {
  let byZone = blocks.get(timeZone);
  if (!byZone) blocks.set(timeZone, (byZone = new Map()));
  let block = byZone.get(index);
  if (block) return block;
  const from = index * BLOCK_MS;
  const to = from + BLOCK_MS - 1000;
  const before = intlMinutes(from, timeZone);
  const after = intlMinutes(to, timeZone);
  // Offsets change on a whole second (St John's changed at 00:01 local until 2011, not on a quarter hour): found by halving.
  let lo = from;
  let hi = to;
  if (before === after) hi = Infinity;
  else
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (intlMinutes(mid, timeZone) === before) lo = mid;
      else hi = mid;
    }
  block = { at: hi, before, after };
  if (byZone.size > 100_000) byZone.clear();
  byZone.set(index, block);
  return block;
}

/** The zone's offset at an instant (whole seconds), from Intl. */
function intlMinutes(at: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Math.round((Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - at) / 60_000);
}

/** An instant (ISO string or Date) as a wall-clock time in an IANA zone. */
export function localTime(at: string | Date, timeZone: string): LocalTime {
  const ms = typeof at === 'string' ? Date.parse(at) : at.getTime();
  const minutes = offsetMinutes(ms, timeZone);
  // The wall clock as if it were UTC: its UTC fields are the local date and time.
  const wall = new Date(Math.floor(ms / 1000) * 1000 + minutes * 60_000);
  return {
    date: `${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}`,
    time: `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}`,
    offset: offsetText(minutes),
    day: Math.floor(wall.getTime() / 86_400_000),
  };
}

const HOUR_MS = 3_600_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => pad(i));
/** The wall-clock hour a stamp was made in last, its `YYYY-MM-DD` and `HH` (a wall hour is the same text in every zone). */
let stampHour = NaN;
let stampDate = '';
let stampHh = '';

/** `YYYY-MM-DD{sep}HH:MM:SS` of a wall-clock time (ms as if UTC), or null outside years 0–9999. */
function wallStamp(wall: number, sep: string): string | null {
  if (!(wall >= -62_167_219_200_000 && wall < 253_402_300_800_000)) return null;
  // The hour's date and hour once per hour (rows come in time order), minutes and seconds from a table.
  const hour = Math.floor(wall / HOUR_MS);
  if (hour !== stampHour) {
    const iso = new Date(hour * HOUR_MS).toISOString();
    stampDate = iso.slice(0, 10);
    stampHh = iso.slice(11, 13);
    stampHour = hour;
  }
  const inHour = wall - hour * HOUR_MS;
  return `${stampDate}${sep}${stampHh}:${TWO_DIGITS[Math.floor(inHour / 60_000)]}:${TWO_DIGITS[Math.floor(inHour / 1000) % 60]}`;
}

/** An offset in minutes as `±HH:MM` (localTime's `offset`). */
function offsetText(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
let lastOffsetMinutes = NaN;
let lastOffsetText = '';

/**
 * localTime's date and time as one `YYYY-MM-DD HH:MM:SS` (an export writes one on every row):
 * the date and hour once per wall-clock hour instead of localTime's parts.
 */
export function localStamp(at: string, timeZone: string): string {
  const ms = Date.parse(at);
  const stamp = wallStamp(Math.floor(ms / 1000) * 1000 + offsetMinutes(ms, timeZone) * 60_000, ' ');
  if (stamp !== null) return stamp;
  const t = localTime(at, timeZone);
  return `${t.date} ${t.time}`;
}

/** `YYYY-MM-DD{sep}HH:MM:SS±HH:MM` (localTime's date, time and offset): iNaturalist's and Darwin Core's per-row times. */
export function localStampOffset(at: string, timeZone: string, sep: ' ' | 'T'): string {
  const ms = Date.parse(at);
  const minutes = offsetMinutes(ms, timeZone);
  if (minutes !== lastOffsetMinutes) {
    lastOffsetText = offsetText(minutes);
    lastOffsetMinutes = minutes;
  }
  const stamp = wallStamp(Math.floor(ms / 1000) * 1000 + minutes * 60_000, sep);
  if (stamp !== null) return sep === ' ' ? `${stamp} ${lastOffsetText}` : `${stamp}${lastOffsetText}`;
  const t = localTime(at, timeZone);
  return sep === ' ' ? `${t.date} ${t.time} ${t.offset}` : `${t.date}T${t.time}${t.offset}`;
}

/** localTime's `day` alone (days since 1970-01-01 of the local date): what a writer compares on every row. */
export function localDay(at: string, timeZone: string): number {
  const ms = Date.parse(at);
  return Math.floor((Math.floor(ms / 1000) * 1000 + offsetMinutes(ms, timeZone) * 60_000) / 86_400_000);
}
