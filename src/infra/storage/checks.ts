import path from 'node:path';

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
