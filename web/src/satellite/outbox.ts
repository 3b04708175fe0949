/**
 * The phone's durable outbox (satellite protocol §8 "Buffering while disconnected"), in
 * IndexedDB so it survives a reload: every chunk is written here before it is published, and
 * leaves on its `stored` ack. The rows' metadata is also held in memory (loaded on open), so the
 * uploader picks the oldest unsent row without a read; the audio is read when it is sent.
 *
 * Caps, applied after every add and whenever the pushed config changes them:
 *   1. max age: rows that entered the outbox longer ago than maxAgeMs are dropped;
 *   2. hard cap: while the rows' total size exceeds hardBytes, the oldest row goes (the newest
 *      recordings survive).
 * The soft cap of the reference satellite evicts acked rows it keeps as local copies; a phone
 * keeps none (storage is the browser's to reclaim), so the soft cap has nothing to act on.
 */

export interface OutboxRow {
  /** Grows with every chunk: key order is recording order. */
  seq: number;
  chunkId: string;
  recordedAt: string;
  durationMs: number;
  sampleRate: number;
  latitude: number | null;
  longitude: number | null;
  bytes: number;
  /** When the chunk entered the outbox (the age cap counts from here, as on the reference satellite). */
  createdAt: string;
  /** The hub's reason for a final refusal; such a row waits for the next connection. */
  error: string | null;
  errorCount: number;
}

export interface OutboxCaps {
  hardBytes: number;
  maxAgeMs: number;
}

export const MB = 1024 * 1024;
/** A browser's storage quota is smaller than a board's disk: the pushed caps apply up to these. */
export const LOCAL_CAPS: OutboxCaps = { hardBytes: 200 * MB, maxAgeMs: 168 * 3600_000 };

const DB_NAME = 'chorus-recorder';
const ROWS = 'rows';
const AUDIO = 'audio';

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('transaction aborted'));
  });
}

function openDb(name: string): Promise<IDBDatabase> {
  const r = indexedDB.open(name, 1);
  r.onupgradeneeded = () => {
    r.result.createObjectStore(ROWS, { keyPath: 'seq' });
    r.result.createObjectStore(AUDIO);
  };
  return request(r);
}

export class Outbox {
  private rows: OutboxRow[] = [];
  private nextSeq = 1;
  private caps: OutboxCaps = LOCAL_CAPS;

  private constructor(
    private readonly db: IDBDatabase,
    private readonly now: () => Date,
  ) {}

  /** Opens (or creates) the outbox of this browser profile; rows from earlier runs go first. */
  static async open(now: () => Date = () => new Date(), name = DB_NAME): Promise<Outbox> {
    const o = new Outbox(await openDb(name), now);
    const tx = o.db.transaction(ROWS, 'readonly');
    o.rows = (await request(tx.objectStore(ROWS).getAll())) as OutboxRow[];
    o.rows.sort((a, b) => a.seq - b.seq);
    o.nextSeq = (o.rows.at(-1)?.seq ?? 0) + 1;
    return o;
  }

  close(): void {
    this.db.close();
  }

  /** Unsent rows, oldest first (final refusals wait for the next connection: `requeueErrors`). */
  pending(): OutboxRow[] {
    return this.rows.filter((r) => r.error === null);
  }

  get(chunkId: string): OutboxRow | undefined {
    return this.rows.find((r) => r.chunkId === chunkId);
  }

  get size(): number {
    return this.rows.length;
  }

  get bytes(): number {
    return this.rows.reduce((n, r) => n + r.bytes, 0);
  }

  /** How long the oldest row has waited since it was recorded, in seconds (0: none waits). */
  oldestAgeSeconds(): number {
    const first = this.rows[0];
    return first ? Math.max(0, Math.round((this.now().getTime() - Date.parse(first.recordedAt)) / 1000)) : 0;
  }

  /** Writes the chunk (row and audio in one transaction) before anything publishes it. */
  async add(input: {
    chunkId: string;
    recordedAt: Date;
    wav: Uint8Array;
    durationMs: number;
    sampleRate: number;
    latitude: number | null;
    longitude: number | null;
  }): Promise<OutboxRow> {
    const row: OutboxRow = {
      seq: this.nextSeq++,
      chunkId: input.chunkId,
      recordedAt: input.recordedAt.toISOString(),
      durationMs: input.durationMs,
      sampleRate: input.sampleRate,
      latitude: input.latitude,
      longitude: input.longitude,
      bytes: input.wav.byteLength,
      createdAt: this.now().toISOString(),
      error: null,
      errorCount: 0,
    };
    const tx = this.db.transaction([ROWS, AUDIO], 'readwrite');
    tx.objectStore(AUDIO).put(input.wav, row.seq);
    tx.objectStore(ROWS).put(row);
    await done(tx);
    this.rows.push(row);
    await this.applyCaps();
    return row;
  }

  async readAudio(chunkId: string): Promise<Uint8Array | null> {
    const row = this.get(chunkId);
    if (!row) return null;
    const tx = this.db.transaction(AUDIO, 'readonly');
    const wav = (await request(tx.objectStore(AUDIO).get(row.seq))) as Uint8Array | undefined;
    return wav ?? null;
  }

  /** The hub stored it: the row and its audio go. */
  async remove(chunkIds: string[]): Promise<void> {
    const gone = this.rows.filter((r) => chunkIds.includes(r.chunkId));
    if (!gone.length) return;
    const tx = this.db.transaction([ROWS, AUDIO], 'readwrite');
    for (const r of gone) {
      tx.objectStore(ROWS).delete(r.seq);
      tx.objectStore(AUDIO).delete(r.seq);
    }
    await done(tx);
    this.rows = this.rows.filter((r) => !gone.includes(r));
  }

  /** A final refusal: kept with its reason, offered again on the next connection. */
  async markError(chunkId: string, error: string): Promise<void> {
    const row = this.get(chunkId);
    if (!row) return;
    row.error = error;
    row.errorCount++;
    await this.put(row);
  }

  /** Refused rows that have tries left are offered again (every connect); returns how many. */
  async requeueErrors(maxErrorRetries: number): Promise<number> {
    const again = this.rows.filter((r) => r.error !== null && r.errorCount < maxErrorRetries);
    for (const r of again) {
      r.error = null;
      await this.put(r);
    }
    return again.length;
  }

  async setCaps(caps: OutboxCaps): Promise<void> {
    this.caps = { hardBytes: Math.min(caps.hardBytes, LOCAL_CAPS.hardBytes), maxAgeMs: Math.min(caps.maxAgeMs, LOCAL_CAPS.maxAgeMs) };
    await this.applyCaps();
  }

  /** Applies the caps; returns the chunk ids dropped. */
  async applyCaps(): Promise<string[]> {
    const cutoff = this.now().getTime() - this.caps.maxAgeMs;
    const dropped = this.rows.filter((r) => Date.parse(r.createdAt) < cutoff).map((r) => r.chunkId);
    let total = this.rows.filter((r) => !dropped.includes(r.chunkId)).reduce((n, r) => n + r.bytes, 0);
    for (const r of this.rows) {
      if (total <= this.caps.hardBytes) break;
      if (dropped.includes(r.chunkId)) continue;
      dropped.push(r.chunkId);
      total -= r.bytes;
    }
    await this.remove(dropped);
    return dropped;
  }

  private async put(row: OutboxRow): Promise<void> {
    const tx = this.db.transaction(ROWS, 'readwrite');
    tx.objectStore(ROWS).put(row);
    await done(tx);
  }
}
