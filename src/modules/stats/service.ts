/**
 * The /stats views (issue 19, spec §4 "Stats"). Every count covers what the Detections page lists
 * (promoted, one row per stitched call, categories the team shows); days and hours are local to
 * the zone window.ts picks. The counts come from the aggregates of migration 0021 (repo.ts).
 */
import type { Static } from 'typebox';
import type { Clock } from '../../core/clock.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import type { Db } from '../../infra/db/index.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { SettingsService } from '../settings/service.ts';
import { diversityFromTerms, overlap } from './indices.ts';
import { createStatsRepo, type Scope } from './repo.ts';
import type * as S from './schemas.ts';
import {
  addDays,
  hourAligned,
  offsetSegments,
  localDate,
  localDates,
  localMidnight,
  resolveWindow,
  zoneOf,
  type StatsWindow,
} from './window.ts';

type Query = Static<typeof S.StatsQuery>;
type Teams = readonly string[] | null;

const iso = (d: Date) => d.toISOString();
const zeros = () => Array.from({ length: 24 }, () => 0);

export function createStatsService(deps: {
  db: Db;
  clock: Clock;
  settings: Pick<SettingsService, 'teamSetting' | 'hubSetting'>;
  visibility: Pick<CategoryVisibility, 'of'>;
}) {
  const repo = createStatsRepo(deps.db);

  async function prepare(tenantIds: Teams, q: Query) {
    const [timeZone, categories] = await Promise.all([zoneOf(tenantIds, deps.settings), deps.visibility.of(tenantIds)]);
    const w = resolveWindow(q, timeZone, deps.clock.now());
    const scope: Scope = { tenantIds, categories, satelliteId: q.satelliteId, species: q.species?.toLowerCase() };
    return { w, scope, head: { timeZone, from: iso(w.from), to: iso(w.to) } };
  }
  const whole = (w: StatsWindow) => [{ from: w.from, to: w.to, group: 0 }];

  async function named<T extends { code: string }>(tenantIds: Teams, rows: T[]) {
    const names = await repo.speciesNames(
      tenantIds,
      rows.map((r) => r.code),
    );
    return rows.map((r) => {
      const n = names.get(r.code);
      return { ...r, code: n?.code ?? r.code, commonName: n?.commonName ?? r.code, scientificName: n?.scientificName ?? r.code };
    });
  }

  return {
    async dashboard(tenantIds: Teams, q: Query): Promise<Static<typeof S.Dashboard>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const today = localDate(deps.clock.now(), w.timeZone);
      const ranges = [...whole(w), { from: localMidnight(today, w.timeZone), to: localMidnight(addDays(today, 1), w.timeZone), group: 1 }];
      const [totals, species, sats, chunkCount] = await Promise.all([
        repo.periodic(scope, ranges, { satellite: false, code: false }),
        repo.periodic(scope, whole(w), { satellite: false, code: true }),
        repo.periodic(scope, whole(w), { satellite: true, code: false }),
        repo.chunkCount(tenantIds, w.from, w.to, q.satelliteId),
      ]);
      const all = totals.find((r) => r.grp === 0);
      return {
        ...head,
        speciesCount: species.filter((r) => r.listed > 0).length,
        detectionCount: all?.listed ?? 0,
        chunkCount,
        satelliteCount: sats.filter((r) => r.listed > 0).length,
        todayCount: totals.find((r) => r.grp === 1)?.listed ?? 0,
        confirmedCount: all?.confirmed ?? 0,
      };
    },

    async trends(tenantIds: Teams, q: Query): Promise<Static<typeof S.Trends>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const rows = await repo.hourly(scope, w, { day: true, hour: false }, hourAligned(w));
      const byDay = new Map(rows.map((r) => [r.day, r.n]));
      return { ...head, days: localDates(w).map((date) => ({ date, count: byDay.get(date) ?? 0 })) };
    },

    async topSpecies(tenantIds: Teams, q: Query & { limit?: number }): Promise<Static<typeof S.TopSpecies>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const rows = await repo.periodic(scope, whole(w), { satellite: false, code: true });
      const top = rows
        .sort((a, b) => b.listed - a.listed || a.code.localeCompare(b.code))
        .slice(0, q.limit ?? 10)
        .map((r) => ({ code: r.code, count: r.listed }));
      const species = (await named(tenantIds, top)).map((r) => ({
        code: r.code,
        commonName: r.commonName,
        scientificName: r.scientificName,
        count: r.count,
      }));
      return { ...head, species };
    },

    async activity(tenantIds: Teams, q: Query): Promise<Static<typeof S.Activity>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const rows = await repo.hourly(scope, w, { day: false, hour: true }, hourAligned(w));
      const hours = zeros();
      for (const r of rows) hours[r.hour] += r.n;
      return { ...head, hours: hours.map((count, hour) => ({ hour, count })) };
    },

    async verification(tenantIds: Teams, q: Query): Promise<Static<typeof S.Verification>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const [r] = await repo.periodic(scope, whole(w), { satellite: false, code: false });
      const total = r?.listed ?? 0;
      const pendingReview = r?.pendingReview ?? 0;
      const confirmed = r?.confirmed ?? 0;
      const rejected = r?.rejected ?? 0;
      return {
        ...head,
        total,
        unverified: total - pendingReview - confirmed - rejected,
        pendingReview,
        confirmed,
        rejected,
        progress: total === 0 ? null : (confirmed + rejected) / total,
      };
    },

    async leaderboard(tenantIds: Teams, q: Query & { limit?: number }): Promise<Static<typeof S.Leaderboard>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      return { ...head, contributors: await repo.leaderboard(scope, w.from, w.to, q.limit ?? 20) };
    },

    async speciesList(tenantIds: Teams, q: Query & { limit?: number }): Promise<Static<typeof S.SpeciesList>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const [totals, perSpecies] = await Promise.all([
        repo.periodic(scope, whole(w), { satellite: false, code: true }),
        repo.satellitesPerSpecies(scope, whole(w)),
      ]);
      const sats = new Map(perSpecies.map((x) => [x.code, x.satellites]));
      const rows = totals.sort((a, b) => b.listed - a.listed || a.code.localeCompare(b.code)).slice(0, q.limit ?? 500);
      const names = await repo.speciesNames(
        tenantIds,
        rows.map((r) => r.code),
      );
      return {
        ...head,
        species: rows.map((r) => {
          const n = names.get(r.code);
          return {
            code: n?.code ?? r.code,
            commonName: n?.commonName ?? r.code,
            scientificName: n?.scientificName ?? r.code,
            category: n?.category ?? 'other',
            count: r.listed,
            satelliteCount: sats.get(r.code) ?? 0,
            confirmed: r.confirmed,
            rejected: r.rejected,
          };
        }),
      };
    },

    async speciesProfile(tenantIds: Teams, code: string, q: Query): Promise<Static<typeof S.SpeciesProfile>> {
      const key = code.toLowerCase();
      const { w, scope: base, head } = await prepare(tenantIds, q);
      const names = await repo.speciesNames(tenantIds, [key]);
      const n = names.get(key);
      if (!n) throw notFound('No such species');
      const scope: Scope = { ...base, species: key };
      const [totals, pairs, hourRows, firstLast, bins, recent, satellites] = await Promise.all([
        repo.periodic(scope, whole(w), { satellite: false, code: false }),
        repo.periodic(scope, whole(w), { satellite: true, code: false }),
        repo.hourly(scope, w, { day: true, hour: true }, hourAligned(w)),
        repo.firstLast(scope, w.from, w.to),
        repo.confidenceBins(scope, w.from, w.to),
        repo.recent(scope, w.from, w.to, 10),
        repo.satellites(tenantIds),
      ]);
      const t = totals[0];
      const byDay = new Map<string, number>();
      const hourly = zeros();
      for (const r of hourRows) {
        byDay.set(r.day, (byDay.get(r.day) ?? 0) + r.n);
        hourly[r.hour] += r.n;
      }
      const satName = new Map(satellites.map((s) => [s.id, s.name]));
      const binCount = new Map(bins.map((b) => [b.bin, b.n]));
      return {
        ...head,
        species: { code: n.code, commonName: n.commonName, scientificName: n.scientificName, category: n.category },
        count: t?.listed ?? 0,
        satelliteCount: pairs.filter((p) => p.listed > 0).length,
        confirmed: t?.confirmed ?? 0,
        rejected: t?.rejected ?? 0,
        firstDetectedAt: firstLast.first,
        lastDetectedAt: firstLast.last,
        trend: localDates(w).map((date) => ({ date, count: byDay.get(date) ?? 0 })),
        hourly,
        satellites: pairs
          .filter((p) => p.listed > 0)
          .sort((a, b) => b.listed - a.listed || a.satellite.localeCompare(b.satellite))
          .map((p) => ({ satelliteId: p.satellite, name: satName.get(p.satellite) ?? '', count: p.listed })),
        confidence: Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, count: binCount.get(i) ?? 0 })),
        recent: recent.map((r) => ({ ...r, detectedAt: iso(new Date(r.detectedAt)) })),
      };
    },

    async compare(tenantIds: Teams, q: Query & { satelliteIds: string }): Promise<Static<typeof S.Compare>> {
      const ids = [...new Set(q.satelliteIds.split(',').map((s) => s.trim().toLowerCase()))].filter(Boolean);
      if (ids.length < 2 || ids.length > 20) throw badRequest('satelliteIds names two to twenty satellites', 'INVALID_SATELLITES');
      if (ids.some((i) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(i)))
        throw badRequest('satelliteIds are satellite ids', 'INVALID_SATELLITES');
      const { w, scope, head } = await prepare(tenantIds, { ...q, satelliteId: undefined });
      const found = await repo.satellites(tenantIds, ids);
      if (found.length !== ids.length) throw notFound('No such satellite');
      const rows = await repo.periodic(scope, whole(w), { satellite: true, code: true }, ids);
      const sets = new Map(ids.map((i) => [i, new Set<string>()]));
      const counts = new Map(ids.map((i) => [i, 0]));
      for (const r of rows) {
        if (r.listed <= 0) continue;
        sets.get(r.satellite)?.add(r.code);
        counts.set(r.satellite, (counts.get(r.satellite) ?? 0) + r.listed);
      }
      const name = new Map(found.map((s) => [s.id, s.name]));
      const pairs = [];
      for (let i = 0; i < ids.length; i++)
        for (let j = i + 1; j < ids.length; j++) pairs.push({ a: ids[i], b: ids[j], ...overlap(sets.get(ids[i])!, sets.get(ids[j])!) });
      return {
        ...head,
        satellites: ids.map((id) => ({
          satelliteId: id,
          name: name.get(id) ?? '',
          speciesCount: sets.get(id)!.size,
          detectionCount: counts.get(id)!,
        })),
        pairs,
      };
    },

    async migration(tenantIds: Teams, q: Query): Promise<Static<typeof S.Migration>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const months = [...new Set(localDates(w).map((d) => d.slice(0, 7)))];
      const ranges = months.map((m, group) => {
        const start = localMidnight(`${m}-01`, w.timeZone);
        const next = new Date(Date.UTC(Number(m.slice(0, 4)), Number(m.slice(5, 7)), 1)).toISOString().slice(0, 10);
        const end = localMidnight(next, w.timeZone);
        return { from: start < w.from ? w.from : start, to: end > w.to ? w.to : end, group };
      });
      const rows = await repo.periodic(scope, ranges, { satellite: false, code: true });
      const bySpecies = new Map<string, number[]>();
      for (const r of rows) {
        const counts = bySpecies.get(r.code) ?? months.map(() => 0);
        counts[r.grp] += r.listed;
        bySpecies.set(r.code, counts);
      }
      const list = [...bySpecies].map(([code, counts]) => ({ code, counts, total: counts.reduce((a, b) => a + b, 0) }));
      list.sort((a, b) => b.total - a.total || a.code.localeCompare(b.code));
      const species = (await named(tenantIds, list)).map((r) => ({
        code: r.code,
        commonName: r.commonName,
        scientificName: r.scientificName,
        total: r.total,
        counts: r.counts,
      }));
      return { ...head, months, species };
    },

    async biodiversity(tenantIds: Teams, q: Query): Promise<Static<typeof S.Biodiversity>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const [terms, satellites] = await Promise.all([
        repo.diversityTerms(scope, whole(w)),
        repo.satellites(tenantIds, q.satelliteId ? [q.satelliteId] : undefined),
      ]);
      const per = new Map(terms.map((t) => [t.satellite.toLowerCase(), t]));
      return {
        ...head,
        satellites: satellites.map((s) => ({ satelliteId: s.id, name: s.name, ...diversityFromTerms(per.get(s.id.toLowerCase())) })),
      };
    },

    async activityHeatmap(tenantIds: Teams, q: Query): Promise<Static<typeof S.ActivityHeatmap>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const rows = await repo.hourly(scope, w, { day: true, hour: true }, hourAligned(w));
      const byDay = new Map(localDates(w).map((d) => [d, zeros()]));
      for (const r of rows) {
        const hours = byDay.get(r.day);
        if (hours) hours[r.hour] += r.n;
      }
      return { ...head, days: [...byDay].map(([date, hours]) => ({ date, hours })) };
    },

    async satelliteActivity(tenantIds: Teams, q: Query): Promise<Static<typeof S.SatelliteActivity>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const per = new Map<string, number[]>();
      const add = (sat: string, hour: number, n: number) => {
        const hours = per.get(sat) ?? zeros();
        hours[hour] += n;
        per.set(sat, hours);
      };
      const satellites = repo.satellites(tenantIds, q.satelliteId ? [q.satelliteId] : undefined);
      if (hourAligned(w) && !scope.species) {
        // Per offset stretch, a UTC hour of day is one local hour of day (docs/stats.md).
        const segments = offsetSegments(w);
        for (const r of await repo.satelliteHours(scope, segments))
          add(r.satellite, ((((r.hod * 60 + segments[r.grp].offset) / 60) % 24) + 24) % 24, r.n);
      } else {
        for (const r of await repo.hourly(scope, w, { day: false, hour: true, bySatellite: true }, false)) add(r.key, r.hour, r.n);
      }
      return {
        ...head,
        satellites: (await satellites).map((s) => {
          const hours = per.get(s.id) ?? zeros();
          const detectionCount = hours.reduce((a, b) => a + b, 0);
          const max = Math.max(...hours);
          return { satelliteId: s.id, name: s.name, detectionCount, peakHour: detectionCount === 0 ? null : hours.indexOf(max), hours };
        }),
      };
    },

    async speciesAccuracy(tenantIds: Teams, q: Query): Promise<Static<typeof S.SpeciesAccuracy>> {
      const { w, scope, head } = await prepare(tenantIds, q);
      const rows = await repo.periodic(scope, whole(w), { satellite: false, code: true });
      const reviewed = rows
        .filter((r) => r.confirmed + r.rejected > 0)
        .sort((a, b) => b.confirmed + b.rejected - (a.confirmed + a.rejected) || a.code.localeCompare(b.code))
        .map((r) => ({ code: r.code, confirmed: r.confirmed, rejected: r.rejected, accuracy: r.confirmed / (r.confirmed + r.rejected) }));
      const species = (await named(tenantIds, reviewed)).map((r) => ({
        code: r.code,
        commonName: r.commonName,
        scientificName: r.scientificName,
        confirmed: r.confirmed,
        rejected: r.rejected,
        accuracy: r.accuracy,
      }));
      return { ...head, species };
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
