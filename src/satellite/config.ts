/**
 * The config the hub pushes (satellite protocol §2): its shape, the registry defaults that hold
 * before the first push, how a push merges over them, and applying one: at once (silence gate,
 * outbox caps, heartbeat interval, gain, schedule) and kept in `<dataDir>/config.json` for the
 * next start.
 */
import fs from 'node:fs';
import type { ScheduleWindow } from '../protocol/schedule.ts';
import { CHUNK_DURATION_MS, SAMPLE_RATE } from '../protocol/wav.ts';
import type { SatelliteConfig, SatelliteContext } from './types.ts';
import type { SilenceGate } from './gate.ts';
import { capsFromConfig, writeFileDurable, type OutboxCaps } from './outbox.ts';
import type { StatusReporter } from './status-reports.ts';

/** Before the first push every field takes the registry default (config push rule 2). */
export const DEFAULT_CONFIG: SatelliteConfig = {
  recordingProfile: {
    type: 'continuous',
    schedule: [],
    sampleRate: SAMPLE_RATE,
    chunkDurationMs: CHUNK_DURATION_MS,
    overlapMs: 0,
    gain: 0,
  },
  heartbeatIntervalSec: 30,
  filterEnabled: true,
  filterMinRms: 0.003,
  classifierMinBirdProb: 0.1,
  excludedClassifierCategories: ['anthropogenic', 'human_voice', 'amphibian', 'insect', 'other_animal'],
  outboxSoftSizeMb: 512,
  outboxHardSizeMb: 1024,
  outboxMaxAgeHours: 168,
  deviceInference: false,
};

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A pushed body over the defaults: a field that is absent or of the wrong type keeps the default. */
export function mergeConfig(body: Record<string, unknown>, base: SatelliteConfig = DEFAULT_CONFIG): SatelliteConfig {
  const p = (body.recordingProfile ?? {}) as Record<string, unknown>;
  const bp = base.recordingProfile;
  return {
    recordingProfile: {
      type: typeof p.type === 'string' ? p.type : bp.type,
      schedule: Array.isArray(p.schedule) ? (p.schedule as ScheduleWindow[]) : bp.schedule,
      sampleRate: isNum(p.sampleRate) ? p.sampleRate : bp.sampleRate,
      chunkDurationMs: isNum(p.chunkDurationMs) ? p.chunkDurationMs : bp.chunkDurationMs,
      overlapMs: isNum(p.overlapMs) ? p.overlapMs : bp.overlapMs,
      gain: isNum(p.gain) ? p.gain : bp.gain,
    },
    heartbeatIntervalSec:
      isNum(body.heartbeatIntervalSec) && body.heartbeatIntervalSec > 0 ? body.heartbeatIntervalSec : base.heartbeatIntervalSec,
    filterEnabled: typeof body.filterEnabled === 'boolean' ? body.filterEnabled : base.filterEnabled,
    filterMinRms: isNum(body.filterMinRms) ? body.filterMinRms : base.filterMinRms,
    classifierMinBirdProb: isNum(body.classifierMinBirdProb) ? body.classifierMinBirdProb : base.classifierMinBirdProb,
    excludedClassifierCategories: Array.isArray(body.excludedClassifierCategories)
      ? body.excludedClassifierCategories.map(String)
      : base.excludedClassifierCategories,
    outboxSoftSizeMb: isNum(body.outboxSoftSizeMb) ? body.outboxSoftSizeMb : base.outboxSoftSizeMb,
    outboxHardSizeMb: isNum(body.outboxHardSizeMb) ? body.outboxHardSizeMb : base.outboxHardSizeMb,
    outboxMaxAgeHours: isNum(body.outboxMaxAgeHours) ? body.outboxMaxAgeHours : base.outboxMaxAgeHours,
    deviceInference: typeof body.deviceInference === 'boolean' ? body.deviceInference : base.deviceInference,
  };
}

/** The config kept by an earlier run, or null when there is none (or it is unreadable). */
export function loadSavedConfig(file: string): SatelliteConfig | null {
  try {
    return mergeConfig(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return null;
  }
}

/** The outbox caps in force: the smaller of the pushed caps and the device's own limits. */
export function effectiveCaps(config: SatelliteConfig, localCaps: Partial<OutboxCaps> | undefined): OutboxCaps {
  const pushed = capsFromConfig(config);
  const local = localCaps ?? {};
  return {
    softBytes: Math.min(pushed.softBytes, local.softBytes ?? Infinity),
    hardBytes: Math.min(pushed.hardBytes, local.hardBytes ?? Infinity),
    maxAgeMs: Math.min(pushed.maxAgeMs, local.maxAgeMs ?? Infinity),
  };
}

/** Applies config pushes to the running satellite and keeps them for the next start. */
export class ConfigApplier {
  private applying: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: Pick<SatelliteContext, 'id' | 'tenantId' | 'options' | 'outbox' | 'status' | 'log' | 'emit' | 'file'>,
    private readonly gate: SilenceGate,
    private readonly reports: Pick<StatusReporter, 'scheduleHeartbeat'>,
  ) {}

  /**
   * Applies one push once those before it are applied. Pushes can overlap (the answer to the
   * connect-time config-request and a settings change); applied side by side, their writes of
   * config.json race and the older push could be the one kept for the next start.
   */
  apply(body: Record<string, unknown>): Promise<void> {
    const run = this.applying.then(() => this.applyNow(body));
    this.applying = run.catch(() => {});
    return run;
  }

  private async applyNow(body: Record<string, unknown>): Promise<void> {
    const { ctx } = this;
    if ((body.satelliteId && body.satelliteId !== ctx.id) || (body.tenantId && body.tenantId !== ctx.tenantId)) {
      return ctx.log('warn', 'config for another satellite ignored');
    }
    const previous = ctx.status.config;
    const next = mergeConfig(body);
    ctx.status.config = next;
    this.gate.configure({ filterEnabled: next.filterEnabled, filterMinRms: next.filterMinRms });
    await ctx.outbox.setCaps(effectiveCaps(ctx.status.config, ctx.options.localCaps));
    if (previous.heartbeatIntervalSec !== next.heartbeatIntervalSec && ctx.status.connected) this.reports.scheduleHeartbeat();
    if (next.recordingProfile.overlapMs && next.recordingProfile.overlapMs !== previous.recordingProfile.overlapMs) {
      ctx.log('info', `overlapMs ${next.recordingProfile.overlapMs} noted; the reference satellite records back-to-back chunks`);
    }
    ctx.log(
      'info',
      `config applied: profile ${next.recordingProfile.type}, gain ${next.recordingProfile.gain} dB, heartbeat ${next.heartbeatIntervalSec} s, ` +
        `silence gate ${next.filterEnabled ? `on at RMS ${next.filterMinRms}` : 'off'}, outbox ${next.outboxSoftSizeMb}/${next.outboxHardSizeMb} MB, ${next.outboxMaxAgeHours} h`,
    );
    if (ctx.options.dataDir)
      await writeFileDurable(ctx.file('config.json'), JSON.stringify(next)).catch((err) =>
        ctx.log('warn', `saving config: ${(err as Error).message}`),
      );
    ctx.emit('config', next);
  }
}
