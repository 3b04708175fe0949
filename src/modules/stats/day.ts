/**
 * The day at a glance (issue 36 point 1): species × local hour of one day in the team's zone,
 * each cell with its count of calls and best calibrated confidence, species heard most recently
 * first. The dashboard's grid (GET /stats/day) and the public page's (public/day.ts) are built
 * here; the public one may make some species coarse (sensitive species: a day total only).
 */
import type { Clock } from '../../core/clock.ts';
import { badRequest } from '../../core/errors.ts';
import { localTime } from '../../core/local-time.ts';
import type { Db } from '../../infra/db/index.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { SettingsService } from '../settings/service.ts';
import { createDayRepo, type DayScope } from './day-repo.ts';
import type { DayGrid, DayQuery } from './day-schemas.ts';
import { addDays, localDate, localMidnight, zoneOf } from './window.ts';

type Calibrated = (rows: ReadonlyArray<{ tenantId: string; modelId: string; confidence: number }>) => Promise<number[]>;

const QUARTER_HOUR = 15 * 60_000;

/**
 * Where each local hour starts and ends within [from, to): walked in quarter hours (every zone's
 * offset changes on one), so a day that skips an hour (DST) has null there and a day that repeats
 * one spans both.
 */
export function hoursOfDay(from: Date, to: Date, timeZone: string): DayGrid['hours'] {
  const hours: DayGrid['hours'] = Array.from({ length: 24 }, (_, hour) => ({ hour, from: null, to: null }));
  for (let t = from.getTime(); t < to.getTime(); t += QUARTER_HOUR) {
    const h = hours[Number(localTime(new Date(t), timeZone).time.slice(0, 2))];
    h.from ??= new Date(t).toISOString();
    h.to = new Date(Math.min(t + QUARTER_HOUR, to.getTime())).toISOString();
  }
  return hours;
}

/** A local date that exists, or a 400 in the stats' window error. */
export function checkedDate(date: string): string {
  const t = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== date) throw badRequest(`${date} is not a date`, 'INVALID_WINDOW');
  return date;
}

export function createDayGridService(deps: {
  db: Db;
  clock: Clock;
  settings: Pick<SettingsService, 'teamSetting' | 'hubSetting'>;
  visibility: Pick<CategoryVisibility, 'of'>;
  calibrated: Calibrated;
}) {
  const repo = createDayRepo(deps.db);

  /**
   * The grid of `date` (default today) over `scope`. `coarse`: lower-case codes given as a day
   * total only, after the others (by code: their place among species ordered by time would say
   * when they were heard). `nameOf` renames species (the public page's language).
   */
  async function build(
    scope: DayScope,
    timeZone: string,
    date: string | undefined,
    opts: { coarse?: ReadonlySet<string>; nameOf?: (code: string, fallback: string) => string } = {},
  ): Promise<DayGrid> {
    const today = localDate(deps.clock.now(), timeZone);
    const day = date ? checkedDate(date) : today;
    const from = localMidnight(day, timeZone);
    const to = localMidnight(addDays(day, 1), timeZone);
    const rows = await repo.cells(scope, from, to, timeZone);
    const calibrated = rows.length
      ? await deps.calibrated(rows.map((r) => ({ tenantId: r.tenantId, modelId: r.modelId, confidence: r.best })))
      : [];

    type Row = DayGrid['species'][number] & { key: string; lastMs: number };
    const byKey = new Map<string, Row>();
    rows.forEach((r, i) => {
      const best = calibrated[i] ?? r.best;
      let s = byKey.get(r.key);
      if (!s) {
        s = {
          key: r.key,
          code: r.code,
          commonName: opts.nameOf ? opts.nameOf(r.code, r.commonName) : r.commonName,
          scientificName: r.scientificName,
          count: 0,
          bestConfidence: 0,
          lastDetectedAt: null,
          lastMs: 0,
          coarse: opts.coarse?.has(r.key) ?? false,
          hours: Array.from({ length: 24 }, () => ({ count: 0, bestConfidence: null })),
        };
        byKey.set(r.key, s);
      }
      s.count += r.n;
      s.bestConfidence = Math.max(s.bestConfidence, best);
      if (s.coarse) return;
      const cell = s.hours[r.hour];
      cell.count += r.n;
      cell.bestConfidence = Math.max(cell.bestConfidence ?? 0, best);
      const last = new Date(r.last).getTime();
      if (last > s.lastMs) {
        s.lastMs = last;
        s.lastDetectedAt = new Date(last).toISOString();
      }
    });
    const all = [...byKey.values()];
    const precise = all.filter((s) => !s.coarse).sort((a, b) => b.lastMs - a.lastMs || a.key.localeCompare(b.key));
    const coarse = all.filter((s) => s.coarse).sort((a, b) => a.key.localeCompare(b.key));
    return {
      timeZone,
      date: day,
      from: from.toISOString(),
      to: to.toISOString(),
      previous: addDays(day, -1),
      next: day < today ? addDays(day, 1) : null,
      today,
      hours: hoursOfDay(from, to, timeZone),
      total: all.reduce((n, s) => n + s.count, 0),
      species: [...precise, ...coarse].map(({ key: _key, lastMs: _lastMs, ...s }) => s),
    };
  }

  return {
    build,

    /** GET /stats/day: the team's zone for one team, the hub's over several (like every stats view). */
    async day(tenantIds: readonly string[] | null, q: DayQuery): Promise<DayGrid> {
      const [timeZone, categories] = await Promise.all([zoneOf(tenantIds, deps.settings), deps.visibility.of(tenantIds)]);
      return build({ tenantIds, categories, satelliteId: q.satelliteId }, timeZone, q.date);
    },
  };
}

export type DayGridService = ReturnType<typeof createDayGridService>;
