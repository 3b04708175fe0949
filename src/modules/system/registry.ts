/**
 * The service registry (spec hub-http-api §4 GET /system/status, §8 "Service registry entry
 * lifetime: 30 seconds"). Every hub process, whatever its mode, writes one entry
 * `services:{id}` in the key-value store every 10 s; an entry lives 30 s, so a process that
 * died leaves the list within 30 s. The value carries its own expiry on the hub clock as well:
 * Redis expires keys on its own time, the readers decide by the clock (tests move it), as for
 * every kv rule.
 */
import os from 'node:os';
import crypto from 'node:crypto';
import type { Kv } from '../../infra/kv/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { HubMode } from '../../config.ts';
import { HUB_VERSION } from './version.ts';
import { localIp } from '../workers/reporter.ts';

export const SERVICE_TTL_SECONDS = 30;
export const SERVICE_BEAT_MS = 10_000;
export const SERVICE_KEY_PREFIX = 'services:';

export interface ServiceEntry {
  id: string;
  mode: HubMode;
  version: string;
  startedAt: string;
  lastSeen: string;
  /** lastSeen + 30 s: past it the entry is gone, whatever the store still holds. */
  expiresAt: string;
  uptimeSeconds: number;
  memory: { rss: number; heapUsed: number };
  ip: string;
  hostname: string;
  pid: number;
  /** Mode-specific: queue depth, MQTT clients of the embedded broker, inference jobs done. */
  details: Record<string, unknown>;
}

export interface ServiceRegistration {
  readonly id: string;
  /** Writes the entry now (the timer calls it every 10 s; tests call it themselves). */
  register(): Promise<void>;
  /** Stops the timer and removes the entry. */
  stop(): Promise<void>;
}

export function createServiceRegistration(deps: {
  kv: Kv;
  clock: Clock;
  mode: HubMode;
  /** Mode-specific details, read at each beat; a failure leaves them out for that beat. */
  details?: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** false: no timer (tests call register()). */
  timers?: boolean;
  identity?: { id?: string; ip?: string; hostname?: string; pid?: number };
  warn?: (obj: object, msg: string) => void;
}): ServiceRegistration {
  const { kv, clock } = deps;
  const hostname = deps.identity?.hostname ?? os.hostname();
  const pid = deps.identity?.pid ?? process.pid;
  const id = deps.identity?.id ?? `${deps.mode}-${hostname}-${pid}-${crypto.randomBytes(3).toString('hex')}`;
  const ip = deps.identity?.ip ?? localIp();
  const startedAt = clock.now();
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();

  async function write(): Promise<void> {
    const now = clock.now();
    let details: Record<string, unknown> = {};
    try {
      details = (await deps.details?.()) ?? {};
    } catch (err) {
      deps.warn?.({ err }, 'service registry: reading the details failed');
    }
    const mem = process.memoryUsage();
    const entry: ServiceEntry = {
      id,
      mode: deps.mode,
      version: HUB_VERSION,
      startedAt: startedAt.toISOString(),
      lastSeen: now.toISOString(),
      expiresAt: new Date(now.getTime() + SERVICE_TTL_SECONDS * 1000).toISOString(),
      uptimeSeconds: Math.max(0, Math.round((now.getTime() - startedAt.getTime()) / 1000)),
      memory: { rss: mem.rss, heapUsed: mem.heapUsed },
      ip,
      hostname,
      pid,
      details,
    };
    if (stopped) return;
    await kv.set(SERVICE_KEY_PREFIX + id, JSON.stringify(entry), SERVICE_TTL_SECONDS);
  }

  // One write at a time; a failed write is logged and the next beat retries.
  const register = () => {
    chain = chain.then(write).catch((err) => deps.warn?.({ err }, 'service registry: could not write to the key-value store'));
    return chain;
  };
  let timer: NodeJS.Timeout | null = null;
  if (deps.timers !== false) {
    void register();
    timer = setInterval(() => void register(), SERVICE_BEAT_MS);
    timer.unref();
  }
  return {
    id,
    register,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await chain;
      await kv.del(SERVICE_KEY_PREFIX + id).catch(() => {});
    },
  };
}

/** Every entry alive on the hub clock, by mode then id. */
export async function readServices(kv: Kv, clock: Clock): Promise<ServiceEntry[]> {
  const now = clock.now().getTime();
  const out: ServiceEntry[] = [];
  for (const { value } of await kv.scan(SERVICE_KEY_PREFIX)) {
    try {
      const e = JSON.parse(value) as ServiceEntry;
      if (Date.parse(e.expiresAt) > now) out.push(e);
    } catch {
      // A corrupt entry is skipped; its process rewrites it within one beat.
    }
  }
  return out.sort((a, b) => a.mode.localeCompare(b.mode) || a.id.localeCompare(b.id));
}
