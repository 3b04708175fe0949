/**
 * GET /stats/map and /stats/map/detections: where the team's satellites are, what each counted
 * over the window, and where a moving (phone) satellite was at each of its detections.
 */
import type { Db } from '../../infra/db/index.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { DeviceService, SatellitePosition } from '../satellites/device-service.ts';
import { createGeoRepo } from './geo-repo.ts';

/** The window and filters the four geo views take (from the common stats query). */
export interface GeoWindow {
  /** The teams counted; null: every team (a hub admin without ?tenantId=). */
  tenantIds: readonly string[] | null;
  start: Date;
  end: Date;
  timeZone: string;
  satelliteId?: string;
  species?: string;
}

export const MAP_POINTS_DEFAULT = 1000;
export const MAP_POINTS_MAX = 5000;

export type PositionSource = 'telemetry' | 'profile';

export interface Located {
  latitude: number | null;
  longitude: number | null;
  positionSource: PositionSource | null;
  positionAt: string | null;
}

/**
 * A satellite's position: its latest telemetry GPS fix, which is where the device last was,
 * else the position in its profile (set at registration); none when it has neither.
 */
export function positionOf(p: SatellitePosition): Located {
  if (p.fixLatitude !== null && p.fixLongitude !== null)
    return {
      latitude: p.fixLatitude,
      longitude: p.fixLongitude,
      positionSource: 'telemetry',
      positionAt: p.fixAt ? new Date(p.fixAt).toISOString() : null,
    };
  if (p.profileLatitude !== null && p.profileLongitude !== null)
    return { latitude: p.profileLatitude, longitude: p.profileLongitude, positionSource: 'profile', positionAt: null };
  return { latitude: null, longitude: null, positionSource: null, positionAt: null };
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function createMapService(deps: { db: Db; devices: Pick<DeviceService, 'positions'>; visibility: Pick<CategoryVisibility, 'of'> }) {
  const repo = createGeoRepo(deps.db);
  const frame = (w: GeoWindow) => ({ timeZone: w.timeZone, from: w.start.toISOString(), to: w.end.toISOString() });

  return {
    async map(w: GeoWindow) {
      const [sats, visible] = await Promise.all([deps.devices.positions(w.tenantIds, w.satelliteId), deps.visibility.of(w.tenantIds)]);
      const bySatellite = sats.length
        ? await repo.satelliteSummaries({ ...w, visible, satelliteIds: sats.map((s) => s.satelliteId) })
        : new Map<string, { detectionCount: number; speciesCount: number; lastDetectionAt: Date | null }>();
      return {
        ...frame(w),
        satellites: sats.map((s) => {
          const sum = bySatellite.get(s.satelliteId.toLowerCase());
          return {
            satelliteId: s.satelliteId,
            name: s.name,
            stream: s.stream,
            ...positionOf(s),
            detectionCount: sum?.detectionCount ?? 0,
            speciesCount: sum?.speciesCount ?? 0,
            lastDetectionAt: iso(sum?.lastDetectionAt ?? null),
          };
        }),
      };
    },

    /**
     * Per-detection points of moving satellites: those reporting the mobile stream, or the one
     * satellite named (any kind). Newest first, at most `limit`; `truncated` says more exist.
     */
    async points(w: GeoWindow, limit: number) {
      const [sats, visible] = await Promise.all([deps.devices.positions(w.tenantIds, w.satelliteId), deps.visibility.of(w.tenantIds)]);
      const moving = w.satelliteId ? sats : sats.filter((s) => s.stream === 'mobile');
      const rows = moving.length ? await repo.points({ ...w, visible, satelliteIds: moving.map((s) => s.satelliteId) }, limit) : [];
      return {
        ...frame(w),
        satelliteIds: moving.map((s) => s.satelliteId),
        points: rows.slice(0, limit).map((r) => ({ ...r, detectedAt: new Date(r.detectedAt).toISOString() })),
        truncated: rows.length > limit,
      };
    },
  };
}

export type MapService = ReturnType<typeof createMapService>;
