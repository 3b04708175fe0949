import type { Readable } from 'node:stream';

/**
 * Object storage (DESIGN.md §2): audio chunks and other blobs, addressed by slash-separated
 * keys such as `audio/{tenant}/{sat}/{yyyy}/{mm}/{dd}/{chunkId}.wav`.
 */
export interface ObjectStorage {
  /** Durable when it resolves (files: temp file + fsync + rename; S3: the PUT succeeded). */
  put(key: string, body: Buffer, contentType?: string): Promise<void>;
  /** Stores a local file's bytes (large blobs such as export files) without holding them in memory. */
  putFile(key: string, file: string, contentType?: string): Promise<void>;
  /** The object as a stream, or null when the key does not exist. */
  stream(key: string): Promise<Readable | null>;
  /** The whole object, or null when the key does not exist. */
  get(key: string): Promise<Buffer | null>;
  /**
   * Inclusive byte range, for HTTP Range support. `end` past the object is clamped to its
   * last byte; a `start` at or past the end gives an empty buffer; a missing key gives null.
   */
  getRange(key: string, start: number, end: number): Promise<Buffer | null>;
  stat(key: string): Promise<{ size: number } | null>;
  /** A missing key is fine. */
  delete(key: string): Promise<void>;
  /** Deletes every key; missing keys are fine. */
  deleteMany(keys: string[]): Promise<void>;
  /**
   * Free and total bytes of the file system the objects are written to, or null where the store
   * cannot tell (S3: a bucket has no free space to ask about).
   */
  freeSpace(): Promise<{ freeBytes: number; totalBytes: number } | null>;
  close(): Promise<void>;
  readonly kind: 'files' | 's3';
}
