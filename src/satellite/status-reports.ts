/**
 * Heartbeat and telemetry (satellite protocol §4): a heartbeat every heartbeatIntervalSec with
 * filterStats and outboxStats (the protocol's six counters, then refusedCount,
 * oldestUnsentAgeSeconds, backoffSeconds and retryInSeconds: integers, as the field allows); telemetry on connect and every `telemetryIntervalMs`. Each
 * schedules the next only while connected.
 */
import fs from 'node:fs';
import type { BrokerConnection } from './connection.ts';
import type { SatelliteContext } from './types.ts';
import { saveFilterStats, type SilenceGate } from './gate.ts';
import { freeBytes } from './outbox.ts';
import type { UploadState } from './uploader.ts';

export class StatusReporter {
  private cancelHeartbeat: (() => void) | null = null;
  private cancelTelemetry: (() => void) | null = null;
  private startedAt = 0;

  constructor(
    private readonly ctx: Pick<SatelliteContext, 'id' | 'tenantId' | 'options' | 'outbox' | 'status' | 'clock' | 'log' | 'file'>,
    private readonly gate: SilenceGate,
    private readonly connection: Pick<BrokerConnection, 'publish' | 'lastLatencyMs'>,
    /** Whether the hub asked to send again later (backoffSeconds, retryInSeconds). */
    private readonly upload: () => UploadState,
  ) {}

  /** Uptime counts from here. */
  markStarted(): void {
    this.startedAt = this.ctx.clock.now().getTime();
  }

  /** Stops the periodic reports (disconnected or stopping); the next connect starts them again. */
  cancel(): void {
    this.cancelHeartbeat?.();
    this.cancelTelemetry?.();
    this.cancelHeartbeat = this.cancelTelemetry = null;
  }

  scheduleHeartbeat(): void {
    this.cancelHeartbeat?.();
    this.cancelHeartbeat = this.ctx.clock.after(this.heartbeatMs(), () => {
      this.cancelHeartbeat = null;
      void this.heartbeat();
    });
  }

  /** Sends one heartbeat now (and schedules the next). */
  async heartbeat(): Promise<boolean> {
    const { ctx } = this;
    if (ctx.status.connected) this.scheduleHeartbeat();
    await this.saveStats();
    return this.connection.publish(
      'heartbeat',
      {
        satelliteId: ctx.id,
        tenantId: ctx.tenantId,
        uptimeSeconds: this.uptimeSeconds(),
        state: ctx.status.state,
        noiseFloorRms: this.gate.noiseFloorRms,
        version: ctx.options.version,
        stream: 'satellite',
        timestamp: ctx.clock.now().toISOString(),
        filterStats: { ...this.gate.stats },
        outboxStats: { ...(await ctx.outbox.stats()), ...this.upload() },
      },
      1,
    );
  }

  async telemetry(): Promise<boolean> {
    const { ctx } = this;
    this.cancelTelemetry?.();
    this.cancelTelemetry = null;
    if (ctx.status.connected) {
      this.cancelTelemetry = ctx.clock.after(ctx.options.telemetryIntervalMs, () => {
        this.cancelTelemetry = null;
        void this.telemetry();
      });
    }
    return this.connection.publish(
      'telemetry',
      {
        satelliteId: ctx.id,
        tenantId: ctx.tenantId,
        batteryLevel: null,
        storageFreeBytes: freeBytes(ctx.options.dataDir ?? ctx.outbox.dir),
        cpuTemp: cpuTemp(),
        networkLatencyMs: this.connection.lastLatencyMs,
        packetLossPct: null,
        uptimeSeconds: this.uptimeSeconds(),
        timestamp: ctx.clock.now().toISOString(),
      },
      1,
    );
  }

  /** Persists the silence gate's counters (they survive restarts). */
  async saveStats(): Promise<void> {
    const { ctx } = this;
    if (!ctx.options.dataDir) return;
    await saveFilterStats(ctx.file('filter-stats.json'), this.gate.stats).catch((err) =>
      ctx.log('warn', `saving filter stats: ${(err as Error).message}`),
    );
  }

  private heartbeatMs(): number {
    return this.ctx.options.heartbeatIntervalMs > 0
      ? this.ctx.options.heartbeatIntervalMs
      : this.ctx.status.config.heartbeatIntervalSec * 1000;
  }

  private uptimeSeconds(): number {
    return Math.floor((this.ctx.clock.now().getTime() - this.startedAt) / 1000);
  }
}

function cpuTemp(): number | null {
  try {
    const milli = Number(fs.readFileSync('/sys/class/thermal/thermal_zone0/temp', 'utf8').trim());
    return Number.isFinite(milli) ? milli / 1000 : null;
  } catch {
    return null;
  }
}
