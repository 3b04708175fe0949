/**
 * The satellite's durable outbox (satellite protocol §8 "Buffering while disconnected"): a
 * file store under `<dir>` with one WAV file and one JSON row per chunk.
 *
 *   <dir>/audio/<seq>-<chunkId>.wav    the chunk as recorded
 *   <dir>/rows/<seq>-<chunkId>.json    its row: recordedAt, status (unacked | acked | error), …
 *
 * A chunk counts only once both files are written and fsynced (WAV first, then the row, each to
 * a temporary name, fsynced, renamed, and the folder fsynced), so a crash leaves at most an
 * orphan WAV, which the next open removes. `seq` grows with every chunk, so name order is
 * recording order: the drain sends unacked rows oldest-first.
 *
 * Caps, applied after every add and whenever the caps change:
 *   1. max age: unsent rows (unacked or error) recorded longer ago than maxAgeMs are dropped;
 *   2. soft cap: while the rows' total size exceeds softBytes, the oldest *acked* row goes;
 *   3. hard cap: while it still exceeds hardBytes, the oldest row of any status goes (unsent
 *      audio is lost: the oldest first, so the newest recordings survive).
 * An acked row is only kept as a local copy; an error row (the hub refused the chunk) stays
 * visible with its reason until it is retried (see requeueErrors) or a cap removes it.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';

export type RowStatus = 'unacked' | 'acked' | 'error';

export interface OutboxRow {
  chunkId: string;
  seq: number;
  recordedAt: string;
  durationMs: number;
  sampleRate: number;
  latitude: number | null;
  longitude: number | null;
  /** Size of the WAV file. */
  bytes: number;
  status: RowStatus;
  createdAt: string;
  ackedAt: string | null;
  /** The hub's reason, for an error ack. */
  error: string | null;
  /** How many error acks this chunk got. */
  errorCount: number;
}

export interface OutboxCaps {
  softBytes: number;
  hardBytes: number;
  maxAgeMs: number;
}

export type EvictionReason = 'max_age' | 'soft_cap' | 'hard_cap';

export interface Eviction {
  chunkId: string;
  recordedAt: string;
  status: RowStatus;
  reason: EvictionReason;
}

/** The heartbeat's outboxStats (satellite protocol §2). */
export interface OutboxStats {
  totalBytes: number;
  ackedBytes: number;
  unackedBytes: number;
  rowCount: number;
  unackedCount: number;
  diskBytes: number;
  /** Rows the hub refused for good (the chunk itself was bad): kept, shown, retried on reconnect. */
  refusedCount: number;
  /** How long the oldest chunk not yet stored has waited since it was recorded (0: none waits). */
  oldestUnsentAgeSeconds: number;
}

export const MB = 1024 * 1024;

/** The registry defaults: soft 512 MB, hard 1024 MB, max age 168 h. */
export const DEFAULT_CAPS: OutboxCaps = { softBytes: 512 * MB, hardBytes: 1024 * MB, maxAgeMs: 168 * 3600_000 };

export function capsFromConfig(c: { outboxSoftSizeMb: number; outboxHardSizeMb: number; outboxMaxAgeHours: number }): OutboxCaps {
  return { softBytes: c.outboxSoftSizeMb * MB, hardBytes: c.outboxHardSizeMb * MB, maxAgeMs: c.outboxMaxAgeHours * 3600_000 };
}

const SEQ_DIGITS = 12;
const fileStem = (seq: number, chunkId: string) => `${String(seq).padStart(SEQ_DIGITS, '0')}-${chunkId}`;

async function fsyncDir(dir: string): Promise<void> {
  const h = await fsp.open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** Writes to a temporary name, fsyncs, renames into place and fsyncs the folder. */
export async function writeFileDurable(file: string, data: Buffer | string, mode?: number): Promise<void> {
  const tmp = `${file}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  const h = await fsp.open(tmp, 'w', mode);
  try {
    await h.writeFile(data);
    await h.sync();
  } finally {
    await h.close();
  }
  await fsp.rename(tmp, file);
  await fsyncDir(path.dirname(file));
}

export interface AddInput {
  chunkId?: string;
  recordedAt: Date;
  wav: Buffer;
  durationMs: number;
  sampleRate: number;
  latitude?: number | null;
  longitude?: number | null;
}

export class Outbox {
  private readonly rows = new Map<string, OutboxRow>();
  private nextSeq = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(evicted: Eviction[]) => void>();
  /** Evictions since open, by reason. */
  readonly evicted: Record<EvictionReason, number> = { max_age: 0, soft_cap: 0, hard_cap: 0 };

  private constructor(
    readonly dir: string,
    private caps: OutboxCaps,
    private readonly now: () => Date,
  ) {}

  private get audioDir() {
    return path.join(this.dir, 'audio');
  }

  private get rowsDir() {
    return path.join(this.dir, 'rows');
  }

  /** Opens (or creates) the store and loads its rows; removes temporaries and orphans of a crash. */
  static async open(dir: string, opts: { caps?: OutboxCaps; now?: () => Date } = {}): Promise<Outbox> {
    const box = new Outbox(dir, opts.caps ?? DEFAULT_CAPS, opts.now ?? (() => new Date()));
    await fsp.mkdir(box.audioDir, { recursive: true });
    await fsp.mkdir(box.rowsDir, { recursive: true });
    const rowFiles = (await fsp.readdir(box.rowsDir)).sort();
    const audioFiles = new Set(await fsp.readdir(box.audioDir));
    let maxSeq = 0;
    for (const f of rowFiles) {
      const full = path.join(box.rowsDir, f);
      if (!f.endsWith('.json')) {
        await fsp.rm(full, { force: true }); // a temporary of an interrupted write
        continue;
      }
      const stem = f.slice(0, -'.json'.length);
      let row: OutboxRow | null;
      try {
        row = JSON.parse(await fsp.readFile(full, 'utf8')) as OutboxRow;
      } catch {
        row = null;
      }
      maxSeq = Math.max(maxSeq, Number.parseInt(stem, 10) || 0);
      if (!row || !audioFiles.has(`${stem}.wav`)) {
        await fsp.rm(full, { force: true });
        continue;
      }
      audioFiles.delete(`${stem}.wav`);
      box.rows.set(row.chunkId, row);
    }
    for (const f of audioFiles) {
      maxSeq = Math.max(maxSeq, Number.parseInt(f, 10) || 0);
      await fsp.rm(path.join(box.audioDir, f), { force: true }); // orphan: its row was never committed
    }
    box.nextSeq = maxSeq + 1;
    return box;
  }

  /** Runs mutations one at a time. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  private audioPath(row: Pick<OutboxRow, 'seq' | 'chunkId'>) {
    return path.join(this.audioDir, `${fileStem(row.seq, row.chunkId)}.wav`);
  }

  private rowPath(row: Pick<OutboxRow, 'seq' | 'chunkId'>) {
    return path.join(this.rowsDir, `${fileStem(row.seq, row.chunkId)}.json`);
  }

  private sorted(): OutboxRow[] {
    return [...this.rows.values()].sort((a, b) => a.seq - b.seq);
  }

  /** Stores a chunk durably; resolves once it counts. Applies the caps afterwards. */
  add(input: AddInput): Promise<{ row: OutboxRow; evicted: Eviction[] }> {
    return this.serial(async () => {
      const row: OutboxRow = {
        chunkId: input.chunkId ?? crypto.randomUUID(),
        seq: this.nextSeq++,
        recordedAt: input.recordedAt.toISOString(),
        durationMs: input.durationMs,
        sampleRate: input.sampleRate,
        latitude: input.latitude ?? null,
        longitude: input.longitude ?? null,
        bytes: input.wav.length,
        status: 'unacked',
        createdAt: this.now().toISOString(),
        ackedAt: null,
        error: null,
        errorCount: 0,
      };
      await writeFileDurable(this.audioPath(row), input.wav);
      await writeFileDurable(this.rowPath(row), JSON.stringify(row));
      this.rows.set(row.chunkId, row);
      return { row: { ...row }, evicted: await this.enforceNow() };
    });
  }

  get(chunkId: string): OutboxRow | undefined {
    const r = this.rows.get(chunkId);
    return r ? { ...r } : undefined;
  }

  /** Every row, oldest first. */
  list(): OutboxRow[] {
    return this.sorted().map((r) => ({ ...r }));
  }

  /** Rows waiting to be sent (unacked), oldest first: the drain order. */
  pending(): OutboxRow[] {
    return this.sorted()
      .filter((r) => r.status === 'unacked')
      .map((r) => ({ ...r }));
  }

  /** The WAV of a row; null when the row is gone (evicted meanwhile). */
  async readAudio(chunkId: string): Promise<Buffer | null> {
    const row = this.rows.get(chunkId);
    if (!row) return null;
    try {
      return await fsp.readFile(this.audioPath(row));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  /** A row change counts once it is on disk: the file first, then the row in memory. */
  private async commit(row: OutboxRow, change: Partial<OutboxRow>): Promise<void> {
    const next = { ...row, ...change };
    await writeFileDurable(this.rowPath(row), JSON.stringify(next));
    Object.assign(row, change);
  }

  /** Marks a row acked (a `stored` ack). False when the row is unknown or was already acked. */
  markAcked(chunkId: string): Promise<boolean> {
    return this.serial(async () => {
      const row = this.rows.get(chunkId);
      if (!row || row.status === 'acked') return false;
      await this.commit(row, { status: 'acked', ackedAt: this.now().toISOString(), error: null });
      await this.enforceNow(); // acked rows become soft-cap targets
      return true;
    });
  }

  /** Records an `error` ack: the row stays, unsent, with the hub's reason. */
  markError(chunkId: string, error: string): Promise<boolean> {
    return this.serial(async () => {
      const row = this.rows.get(chunkId);
      if (!row || row.status === 'acked') return false;
      await this.commit(row, { status: 'error', error, errorCount: row.errorCount + 1 });
      return true;
    });
  }

  /** Puts error rows with fewer than `maxErrors` error acks back in the queue (on reconnect). */
  requeueErrors(maxErrors: number): Promise<number> {
    return this.serial(async () => {
      let n = 0;
      for (const row of this.sorted()) {
        if (row.status !== 'error' || row.errorCount >= maxErrors) continue;
        await this.commit(row, { status: 'unacked' });
        n++;
      }
      return n;
    });
  }

  getCaps(): OutboxCaps {
    return { ...this.caps };
  }

  /** New caps (from a config push); applies them at once. */
  setCaps(caps: OutboxCaps): Promise<Eviction[]> {
    return this.serial(() => {
      this.caps = { ...caps };
      return this.enforceNow();
    });
  }

  /** Hears every eviction, whatever caused it (an add, an ack, new caps). Returns the unsubscribe. */
  onEvicted(listener: (evicted: Eviction[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Applies the caps (max age, soft, hard). */
  enforce(): Promise<Eviction[]> {
    return this.serial(() => this.enforceNow());
  }

  private async remove(row: OutboxRow, reason: EvictionReason, out: Eviction[]): Promise<void> {
    this.rows.delete(row.chunkId);
    // Row first: once it is gone the chunk no longer counts, even if the WAV removal is cut short.
    await fsp.rm(this.rowPath(row), { force: true });
    await fsp.rm(this.audioPath(row), { force: true });
    this.evicted[reason]++;
    out.push({ chunkId: row.chunkId, recordedAt: row.recordedAt, status: row.status, reason });
  }

  private async enforceNow(): Promise<Eviction[]> {
    const out: Eviction[] = [];
    const now = this.now().getTime();
    // Age counts from when the chunk entered the outbox: an imported old recording is not stale on arrival.
    for (const row of this.sorted()) {
      if (row.status !== 'acked' && now - Date.parse(row.createdAt) > this.caps.maxAgeMs) await this.remove(row, 'max_age', out);
    }
    let total = this.totalBytes();
    for (const row of this.sorted()) {
      if (total <= this.caps.softBytes) break;
      if (row.status !== 'acked') continue;
      await this.remove(row, 'soft_cap', out);
      total -= row.bytes;
    }
    for (const row of this.sorted()) {
      if (total <= this.caps.hardBytes) break;
      await this.remove(row, 'hard_cap', out);
      total -= row.bytes;
    }
    if (out.length) {
      await fsyncDir(this.rowsDir);
      for (const l of this.listeners) l(out);
    }
    return out;
  }

  private totalBytes(): number {
    let t = 0;
    for (const r of this.rows.values()) t += r.bytes;
    return t;
  }

  /** The heartbeat's outboxStats; diskBytes is the real size of the audio folder, orphans included. */
  async stats(): Promise<OutboxStats> {
    let acked = 0;
    let unacked = 0;
    let unackedCount = 0;
    let refusedCount = 0;
    let oldest = Infinity;
    for (const r of this.rows.values()) {
      if (r.status === 'acked') acked += r.bytes;
      else {
        unacked += r.bytes;
        unackedCount++;
        if (r.status === 'error') refusedCount++;
        oldest = Math.min(oldest, Date.parse(r.recordedAt));
      }
    }
    const oldestUnsentAgeSeconds = Number.isFinite(oldest) ? Math.max(0, Math.floor((this.now().getTime() - oldest) / 1000)) : 0;
    let diskBytes = 0;
    for (const f of await fsp.readdir(this.audioDir).catch(() => [] as string[])) {
      diskBytes += await fsp
        .stat(path.join(this.audioDir, f))
        .then((s) => s.size)
        .catch(() => 0);
    }
    return {
      totalBytes: acked + unacked,
      ackedBytes: acked,
      unackedBytes: unacked,
      rowCount: this.rows.size,
      unackedCount,
      diskBytes,
      refusedCount,
      oldestUnsentAgeSeconds,
    };
  }

  /** Waits for queued writes (used before exit). */
  async flush(): Promise<void> {
    await this.serial(async () => {});
  }
}

/** Free bytes of the file system holding `dir` (telemetry storageFreeBytes). */
export function freeBytes(dir: string): number {
  try {
    const s = fs.statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return 0;
  }
}
