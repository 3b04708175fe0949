/**
 * The offline monitor (satellite protocol §3 "Satellite online status", §8): every 60 seconds,
 * a satellite whose last heartbeat is older than its team's offline threshold is marked offline
 * once and a `satellite.offline` event goes out on the bus for the alerting rules to route.
 * Archived satellites are never offline-alerted. The next heartbeat clears the mark.
 */
import type { Bus } from '../infra/bus/index.ts';
import type { Clock } from '../core/clock.ts';
import type { SettingsService } from '../modules/settings/service.ts';
import { findSetting } from '../modules/settings/registry.ts';
import type { DeviceService } from '../modules/satellites/device-service.ts';

export const OFFLINE_CHECK_INTERVAL_MS = 60_000;
const THRESHOLD_KEY = 'offline_threshold_minutes';

export interface OfflineMonitor {
  /** One check; returns the satellites it marked offline now. */
  tick(): Promise<Array<{ tenantId: string; satelliteId: string; name: string; lastSeenAt: string }>>;
  stop(): Promise<void>;
}

export function startOfflineMonitor(deps: {
  devices: Pick<DeviceService, 'silentSince' | 'markOffline'>;
  bus: Pick<Bus, 'publish'>;
  clock: Clock;
  settings: Pick<SettingsService, 'teamSetting'>;
  onError: (err: unknown) => void;
  /** Tests pass false and call tick() themselves after moving the clock. */
  interval?: boolean;
}): OfflineMonitor {
  const { devices, bus, clock, settings } = deps;
  const def = findSetting(THRESHOLD_KEY);
  const minThresholdMin = def && def.type === 'integer' ? def.min : 1;
  let running: Promise<unknown> | null = null;

  async function check() {
    const now = clock.now();
    const candidates = await devices.silentSince(new Date(now.getTime() - minThresholdMin * 60_000));
    const byTeam = new Map<string, typeof candidates>();
    for (const c of candidates) byTeam.set(c.tenantId, [...(byTeam.get(c.tenantId) ?? []), c]);
    const marked: Awaited<ReturnType<OfflineMonitor['tick']>> = [];
    for (const [tenantId, sats] of byTeam) {
      const thresholdMin = await settings.teamSetting(tenantId, THRESHOLD_KEY);
      const cutoff = new Date(now.getTime() - thresholdMin * 60_000);
      const silent = sats.filter((s) => new Date(s.lastSeenAt) < cutoff);
      if (silent.length === 0) continue;
      const claimed = await devices.markOffline(
        tenantId,
        silent.map((s) => s.id),
        cutoff,
        now,
      );
      for (const s of claimed) {
        const event = { tenantId, satelliteId: s.id, name: s.name, lastSeenAt: new Date(s.lastSeenAt).toISOString() };
        marked.push(event);
        await bus.publish('satellite.offline', event);
      }
    }
    return marked;
  }

  const tick: OfflineMonitor['tick'] = async () => {
    // One check at a time: the interval and a test's tick() never overlap.
    while (running) await running.catch(() => {});
    const p = check();
    running = p;
    try {
      return await p;
    } finally {
      running = null;
    }
  };

  const timer = deps.interval === false ? null : setInterval(() => tick().catch(deps.onError), OFFLINE_CHECK_INTERVAL_MS);
  timer?.unref();

  return {
    tick,
    async stop() {
      if (timer) clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
