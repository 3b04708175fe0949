/**
 * The pre-upload silence gate (satellite protocol §2 "Config push": filterEnabled, filterMinRms):
 * a chunk whose RMS (full scale 1) is under filterMinRms is not uploaded. filterEnabled false
 * turns the gates off, so every chunk goes on. When the satellite runs a sound classifier
 * (sound-filter.ts), a chunk it drops is moved from totalSent to its counter. The gate also tracks a noise floor (the heartbeat's
 * noiseFloorRms): a slow moving average of chunk RMS that follows quiet chunks more readily.
 */
import fs from 'node:fs';
import { rms } from './signal.ts';
import { writeFileDurable } from './outbox.ts';

/** The heartbeat's filterStats (satellite protocol §2); counters persist across restarts. */
export interface FilterStats {
  totalProcessed: number;
  totalSent: number;
  rejectedSilence: number;
  rejectedClassifier: number;
  rejectedAmphibian: number;
  rejectedInsect: number;
  rejectedAnthropogenic: number;
  rejectedHumanVoice: number;
  rejectedOtherAnimal: number;
  rejectedOther: number;
}

export const emptyFilterStats = (): FilterStats => ({
  totalProcessed: 0,
  totalSent: 0,
  rejectedSilence: 0,
  rejectedClassifier: 0,
  rejectedAmphibian: 0,
  rejectedInsect: 0,
  rejectedAnthropogenic: 0,
  rejectedHumanVoice: 0,
  rejectedOtherAnimal: 0,
  rejectedOther: 0,
});

export interface GateConfig {
  filterEnabled: boolean;
  filterMinRms: number;
}

export interface GateResult {
  pass: boolean;
  rms: number;
  reason: 'silence' | null;
}

export class SilenceGate {
  private noiseFloor: number | null = null;

  constructor(
    private config: GateConfig,
    readonly stats: FilterStats = emptyFilterStats(),
  ) {}

  configure(config: GateConfig): void {
    this.config = { ...config };
  }

  get settings(): GateConfig {
    return { ...this.config };
  }

  /** RMS estimate of the background (0 before the first chunk). */
  get noiseFloorRms(): number {
    return this.noiseFloor ?? 0;
  }

  /** Judges one chunk and counts it. */
  check(samples: Int16Array): GateResult {
    const level = rms(samples);
    this.noiseFloor =
      this.noiseFloor === null ? level : this.noiseFloor + (level < this.noiseFloor ? 0.3 : 0.02) * (level - this.noiseFloor);
    this.stats.totalProcessed++;
    if (this.config.filterEnabled && level < this.config.filterMinRms) {
      this.stats.rejectedSilence++;
      return { pass: false, rms: level, reason: 'silence' };
    }
    this.stats.totalSent++;
    return { pass: true, rms: level, reason: null };
  }
}

/** Moves a chunk the gate passed to a rejection counter: the sound classifier dropped it after the silence gate. */
export function withdrawSent(stats: FilterStats, counter: Exclude<keyof FilterStats, 'totalProcessed' | 'totalSent'>): void {
  if (stats.totalSent > 0) stats.totalSent--;
  stats[counter]++;
}

/** Loads persisted counters (missing or unreadable file: zeros). */
export function loadFilterStats(file: string): FilterStats {
  try {
    const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<FilterStats>;
    const out = emptyFilterStats();
    for (const k of Object.keys(out) as Array<keyof FilterStats>) {
      const v = raw[k];
      if (Number.isInteger(v) && (v as number) >= 0) out[k] = v as number;
    }
    return out;
  } catch {
    return emptyFilterStats();
  }
}

export function saveFilterStats(file: string, stats: FilterStats): Promise<void> {
  return writeFileDurable(file, JSON.stringify(stats));
}
