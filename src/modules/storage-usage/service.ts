/**
 * Storage in sight (issue 23): how many bytes of audio the hub holds per satellite, per team and
 * in total, how fast that grows, how long the free space where the hub writes lasts at that
 * rate, and which satellites report little free space of their own.
 *
 * - Bytes come from the audio module's aggregates (0024), never from walking the object store.
 * - Growth per day is the net bytes (arrived minus removed by retention) over the last 7 days,
 *   divided by the part of those days there was data for (from the first chunk's arrival): a hub
 *   two days old is not credited with five empty days. Before MIN_HISTORY_DAYS of data there is
 *   no rate (null, "not enough history yet"): the first minutes of a new satellite, scaled to a
 *   day, once read 574 MB as 2.3 GB per day (issue 36 point 6).
 * - When the disk would fill within the warning window, a retention limit is suggested: the days
 *   of audio that fit in what the disk holds for audio (free space and the audio already on it)
 *   at the current rate, with a tenth kept spare.
 * - Days remaining use the hub-wide growth: every team writes to the same disk.
 */
import type { Clock } from '../../core/clock.ts';
import type { ObjectStorage } from '../../infra/storage/types.ts';
import type { AudioService, SatelliteUsageRow } from '../audio/service.ts';
import type { DeviceService } from '../satellites/device-service.ts';
import type { SettingsService } from '../settings/service.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const WINDOW_DAYS = 7;
/** Days of data before a growth rate is given at all. */
export const MIN_HISTORY_DAYS = 2;
const MB = 1024 * 1024;

/** The start of the growth window: whole UTC hours, since the hour rows are what gets summed. */
export function windowStart(now: Date): Date {
  return new Date(Math.floor((now.getTime() - WINDOW_DAYS * DAY_MS) / HOUR_MS) * HOUR_MS);
}

/**
 * Net bytes per day over the window for a set of satellites' rows (see the file comment); 0 with
 * no audio at all, null while the first arrival is less than MIN_HISTORY_DAYS ago.
 */
export function growthPerDay(rows: readonly SatelliteUsageRow[], now: Date): number | null {
  const firsts = rows.map((r) => r.firstReceivedAt?.getTime()).filter((t): t is number => t !== undefined);
  if (firsts.length === 0) return 0;
  const first = Math.min(...firsts);
  if (now.getTime() - first < MIN_HISTORY_DAYS * DAY_MS) return null;
  const start = Math.max(windowStart(now).getTime(), first);
  const span = Math.max(HOUR_MS, now.getTime() - start);
  const net = rows.reduce((n, r) => n + r.recentNetBytes, 0);
  return Math.round((net * DAY_MS) / span);
}

const sum = (rows: readonly SatelliteUsageRow[], k: 'bytes' | 'chunks') => rows.reduce((n, r) => n + r[k], 0);

export function createStorageUsageService(deps: {
  clock: Clock;
  storage: Pick<ObjectStorage, 'kind' | 'freeSpace'>;
  audio: Pick<AudioService, 'usageOfTeam' | 'usageOfHub'>;
  devices: Pick<DeviceService, 'storageReports'>;
  settings: Pick<SettingsService, 'hubSetting' | 'teamSetting'>;
  teamName: (tenantId: string) => Promise<string | null>;
}) {
  const { clock, storage, audio, devices, settings } = deps;

  /** The disk the hub writes to, judged against the hub's growth and storage_warning_days. */
  async function hubDisk(hubRows: readonly SatelliteUsageRow[], now: Date) {
    const [space, warningDays] = await Promise.all([
      storage.freeSpace().then(
        (s) => ({ ok: true as const, s }),
        () => ({ ok: false as const, s: null }),
      ),
      settings.hubSetting('storage_warning_days'),
    ]);
    const growthBytesPerDay = growthPerDay(hubRows, now);
    const freeBytes = space.s?.freeBytes ?? null;
    const daysRemaining =
      freeBytes !== null && growthBytesPerDay !== null && growthBytesPerDay > 0
        ? Math.round((freeBytes / growthBytesPerDay) * 10) / 10
        : null;
    const warning = daysRemaining !== null && daysRemaining < warningDays;
    // What the disk holds for audio is its free space and the audio already on it (retention frees that).
    const fit = warning ? Math.floor((0.9 * (freeBytes! + sum(hubRows, 'bytes'))) / growthBytesPerDay!) : null;
    return {
      storage: storage.kind,
      freeBytes,
      totalBytes: space.s?.totalBytes ?? null,
      freeUnknownReason: !space.ok ? ('unavailable' as const) : space.s === null ? ('object_storage_s3' as const) : null,
      growthBytesPerDay,
      daysRemaining,
      warningDays,
      warning,
      /** A retention limit (audio_retention_days) that keeps the audio on the disk; only with the warning. */
      suggestedRetentionDays: fit === null ? null : Math.max(1, fit),
    };
  }

  return {
    /** GET /satellites/storage: one team's satellites, its total, and the hub's disk. */
    async ofTeam(tenantId: string) {
      const now = clock.now();
      const since = windowStart(now);
      const [teamRows, hubRows, reports, warningMb] = await Promise.all([
        audio.usageOfTeam(tenantId, since),
        audio.usageOfHub(since),
        devices.storageReports(tenantId),
        settings.teamSetting(tenantId, 'satellite_storage_warning_mb'),
      ]);
      const satelliteWarningBytes = warningMb * MB;
      const bySatellite = new Map(teamRows.map((r) => [r.satelliteId, r]));
      return {
        tenantId,
        totalBytes: sum(teamRows, 'bytes'),
        chunks: sum(teamRows, 'chunks'),
        growthBytesPerDay: growthPerDay(teamRows, now),
        windowDays: WINDOW_DAYS,
        minHistoryDays: MIN_HISTORY_DAYS,
        satelliteWarningBytes,
        satellites: reports.map((s) => {
          const row = bySatellite.get(s.id);
          return {
            id: s.id,
            name: s.name,
            archived: s.archived,
            storedBytes: row?.bytes ?? 0,
            chunks: row?.chunks ?? 0,
            growthBytesPerDay: row ? growthPerDay([row], now) : 0,
            freeBytes: s.freeBytes,
            freeReportedAt: s.reportedAt?.toISOString() ?? null,
            lowFreeSpace: s.freeBytes !== null && s.freeBytes < satelliteWarningBytes,
          };
        }),
        hub: await hubDisk(hubRows, now),
      };
    },

    /** GET /system/storage: the hub's total, each team's share, and the disk. */
    async ofHub() {
      const now = clock.now();
      const rows = await audio.usageOfHub(windowStart(now));
      const byTeam = new Map<string, SatelliteUsageRow[]>();
      for (const r of rows) byTeam.set(r.tenantId, [...(byTeam.get(r.tenantId) ?? []), r]);
      const teams = await Promise.all(
        [...byTeam].map(async ([tenantId, own]) => ({
          tenantId,
          name: (await deps.teamName(tenantId)) ?? '',
          storedBytes: sum(own, 'bytes'),
          chunks: sum(own, 'chunks'),
          satellites: own.length,
          growthBytesPerDay: growthPerDay(own, now),
        })),
      );
      teams.sort((a, b) => b.storedBytes - a.storedBytes || a.name.localeCompare(b.name));
      return {
        totalBytes: sum(rows, 'bytes'),
        chunks: sum(rows, 'chunks'),
        windowDays: WINDOW_DAYS,
        minHistoryDays: MIN_HISTORY_DAYS,
        disk: await hubDisk(rows, now),
        teams,
      };
    },
  };
}

export type StorageUsageService = ReturnType<typeof createStorageUsageService>;
