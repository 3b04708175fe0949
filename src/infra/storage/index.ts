import path from 'node:path';
import type { Config } from '../../config.ts';
import { createFileStorage } from './files.ts';
import { createS3Storage } from './s3.ts';

/**
 * Object storage (DESIGN.md §2): audio chunks and other blobs, addressed by slash-separated
 * keys such as `audio/{tenant}/{sat}/{yyyy}/{mm}/{dd}/{chunkId}.wav`.
 */
export interface ObjectStorage {
  /** Durable when it resolves (files: temp file + fsync + rename; S3: the PUT succeeded). */
  put(key: string, body: Buffer, contentType?: string): Promise<void>;
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
  close(): Promise<void>;
  readonly kind: 'files' | 's3';
}

export class StorageKeyError extends Error {}

/**
 * Keys are relative, slash-separated paths: no absolute paths, no `.` / `..` / empty segments,
 * no backslashes or control characters. Both adapters refuse the same keys.
 */
export function checkKey(key: string): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 1024) throw new StorageKeyError('storage key must be 1-1024 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(key)) throw new StorageKeyError(`storage key has a forbidden character: ${JSON.stringify(key)}`);
  if (key.startsWith('/') || path.isAbsolute(key)) throw new StorageKeyError(`storage key must be relative: ${JSON.stringify(key)}`);
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..')
      throw new StorageKeyError(`storage key has an empty, "." or ".." segment: ${JSON.stringify(key)}`);
  }
  return key;
}

export function checkRange(start: number, end: number): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`invalid byte range ${start}-${end}`);
  }
}

export type StorageConfig = Pick<Config, 'dataDir' | 's3Url' | 's3Bucket' | 's3Region' | 's3AccessKeyId' | 's3SecretAccessKey'>;

/** Files under `${dataDir}/objects` by default; S3 when `S3_URL` is set. */
export function createStorage(config: StorageConfig, opts: { dir?: string } = {}): ObjectStorage {
  if (config.s3Url) {
    return createS3Storage({
      url: config.s3Url,
      bucket: config.s3Bucket,
      region: config.s3Region,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
    });
  }
  return createFileStorage(opts.dir ?? path.join(config.dataDir, 'objects'));
}
