/**
 * Recording: chunks from the source through the recording schedule and the silence gate into the
 * durable outbox, one at a time and in order. Recording goes on while disconnected: chunks wait
 * in the outbox within its caps.
 */
import { resolveSchedule } from '../protocol/schedule.ts';
import { CHUNK_DURATION_MS, SAMPLE_RATE, makeWav } from '../protocol/wav.ts';
import type { RecordingProfile, SatelliteContext } from './types.ts';
import { withdrawSent, type SilenceGate } from './gate.ts';
import { judgeSound, REJECTED_COUNTER } from './sound-filter.ts';
import type { OutboxRow } from './outbox.ts';
import { applyGain } from './signal.ts';

export type RecordOutcome = 'recorded' | 'gated' | 'scheduled_off' | 'end' | 'error' | 'waiting';

/** Whether the recording profile records at `now` (continuous, or inside a schedule window). */
export function isRecordingTime(
  profile: RecordingProfile,
  now: Date,
  position: { latitude: number | null; longitude: number | null },
): boolean {
  if (profile.type === 'continuous' || profile.schedule.length === 0) return true;
  let resolvable = 0;
  // Yesterday's windows too: a window may run past midnight.
  for (const offset of [-1, 0]) {
    const day = new Date(now.getTime() + offset * 86_400_000);
    const r = resolveSchedule({
      profile: profile.type,
      windows: profile.schedule,
      latitude: position.latitude,
      longitude: position.longitude,
      day,
    });
    for (const w of r.windows) {
      if (!w.startsAt || !w.endsAt) continue;
      resolvable++;
      if (now >= new Date(w.startsAt) && now < new Date(w.endsAt)) return true;
    }
  }
  // Sun-relative windows without a position cannot be placed: record rather than go deaf.
  return resolvable === 0;
}

export class Recorder {
  private cancelRecordTimer: (() => void) | null = null;
  private recording: Promise<unknown> = Promise.resolve();
  private lastRecordedAt = 0;
  private lastCaptured: { wav: Buffer; recordedAt: Date; fresh: boolean } | null = null;

  constructor(
    private readonly ctx: Pick<SatelliteContext, 'options' | 'outbox' | 'status' | 'clock' | 'isStopped' | 'log' | 'emit'>,
    private readonly gate: SilenceGate,
    /** Called after a chunk went into the outbox. */
    private readonly onRecorded: () => void,
  ) {}

  /** Records the next chunk after `chunkIntervalMs`, and so on, until stopped, exhausted or at the limit. */
  schedule(): void {
    const { ctx } = this;
    if (
      ctx.isStopped() ||
      ctx.status.sourceEnded ||
      ctx.options.chunkIntervalMs <= 0 ||
      ctx.status.recordedCount >= ctx.options.recordLimit
    )
      return;
    // A live source holding more than the next chunk is ahead of the recorder's timer (timers run
    // late, a sound card does not): take the backlog at once.
    const delay = (ctx.options.source.buffered ?? 0) > 1 ? 0 : ctx.options.chunkIntervalMs;
    this.cancelRecordTimer = ctx.clock.after(delay, () => {
      this.cancelRecordTimer = null;
      void this.record()
        .catch((err) => ctx.log('error', `recording failed: ${(err as Error).message}`))
        .finally(() => this.schedule());
    });
  }

  /** Stops the scheduled recording (the satellite is stopping). */
  cancel(): void {
    this.cancelRecordTimer?.();
    this.cancelRecordTimer = null;
  }

  /** Resolves once the chunk being recorded (if any) is done. */
  idle(): Promise<unknown> {
    return this.recording.catch(() => {});
  }

  /**
   * Captures one chunk now: through the schedule and the silence gate into the outbox.
   * Chunks are recorded one at a time, in order.
   */
  record(): Promise<RecordOutcome> {
    const run = this.recording.then(() => this.recordOne());
    this.recording = run.catch(() => {});
    return run;
  }

  /** The chunk captured last if no one took it yet (the live feed takes each at most once). */
  takeFreshCapture(): { wav: Buffer; recordedAt: Date } | null {
    const captured = this.lastCaptured;
    if (!captured?.fresh) return null;
    captured.fresh = false;
    return { wav: captured.wav, recordedAt: captured.recordedAt };
  }

  private async recordOne(): Promise<RecordOutcome> {
    const { ctx } = this;
    const { status, options: o } = ctx;
    if (status.sourceEnded) return 'end';
    let chunk;
    try {
      chunk = o.source.next();
    } catch (err) {
      status.state = 'error';
      status.sourceEnded = true;
      ctx.log('error', `source failed: ${(err as Error).message}`);
      ctx.emit('source-end', err);
      return 'error';
    }
    // A live source between chunks, or restarting after a failure (it reported that itself).
    if (chunk === 'waiting') return 'waiting';
    if (!chunk) {
      status.sourceEnded = true;
      status.state = 'paused';
      ctx.log('info', `source exhausted (${o.source.description})`);
      ctx.emit('source-end');
      return 'end';
    }
    // An imported recording's chunk brings its own time; the schedule is asked at that time too.
    const now = chunk.recordedAt ? new Date(chunk.recordedAt.getTime() + CHUNK_DURATION_MS) : ctx.clock.now();
    // The chunk covers the 3 s that just ended; recordedAt strictly grows (the drain order).
    let at = now.getTime() - CHUNK_DURATION_MS;
    if (at <= this.lastRecordedAt) at = this.lastRecordedAt + 1;
    this.lastRecordedAt = at;
    const recordedAt = new Date(at);
    const samples = applyGain(chunk.samples, status.config.recordingProfile.gain);
    const wav = makeWav(samples);
    this.lastCaptured = { wav, recordedAt, fresh: true };

    if (!isRecordingTime(status.config.recordingProfile, now, { latitude: o.latitude ?? null, longitude: o.longitude ?? null })) {
      if (status.state !== 'scheduled_off') ctx.log('info', 'outside the recording schedule: not recording');
      status.state = 'scheduled_off';
      return 'scheduled_off';
    }
    if (status.state === 'scheduled_off') ctx.log('info', 'recording window open: recording');
    // The padded piece a dying capture process left is recorded, but the source is still down.
    status.state = o.source.health?.().state === 'restarting' ? 'error' : 'recording';

    const verdict = this.gate.check(samples);
    if (!verdict.pass) {
      ctx.emit('gated', { rms: verdict.rms, origin: chunk.origin });
      return 'gated';
    }
    const classifier = o.soundClassifier;
    if (classifier && status.config.filterEnabled) {
      let sound;
      try {
        sound = judgeSound(await classifier.classify(samples), status.config);
      } catch (err) {
        // A failing model must not cost recordings: the chunk goes up and the hub classifies it.
        ctx.log('warn', `sound classifier failed, uploading unfiltered: ${(err as Error).message}`);
        sound = null;
      }
      if (sound && !sound.pass) {
        withdrawSent(this.gate.stats, sound.reason === 'classifier' ? 'rejectedClassifier' : REJECTED_COUNTER[sound.reason]);
        ctx.emit('filtered', { reason: sound.reason, birdProb: sound.birdProb, origin: chunk.origin });
        return 'gated';
      }
    }
    let row: OutboxRow;
    try {
      ({ row } = await ctx.outbox.add({
        recordedAt,
        wav,
        durationMs: CHUNK_DURATION_MS,
        sampleRate: SAMPLE_RATE,
        latitude: o.latitude ?? null,
        longitude: o.longitude ?? null,
      }));
    } catch (err) {
      // A full or broken disk: this chunk is lost, recording tries again with the next one.
      status.state = 'error';
      ctx.log('error', `outbox write failed, chunk lost: ${(err as Error).message}`);
      return 'error';
    }
    status.recordedCount++;
    ctx.emit('recorded', row);
    this.onRecorded();
    return 'recorded';
  }
}
