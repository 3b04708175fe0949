/**
 * Square crops kept in memory, least recently used first out, bounded by bytes. Crops are cheap
 * to make again (from the stored display copy), so they are not written to object storage:
 * browsers and proxies keep them for a week through Cache-Control and ETag.
 */
export function createCropCache(maxBytes: number) {
  const entries = new Map<string, Buffer>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  return {
    get(key: string): Buffer | undefined {
      const b = entries.get(key);
      if (b) {
        entries.delete(key);
        entries.set(key, b);
        hits += 1;
      } else misses += 1;
      return b;
    },
    set(key: string, body: Buffer): void {
      if (body.length > maxBytes) return;
      const old = entries.get(key);
      if (old) bytes -= old.length;
      entries.delete(key);
      entries.set(key, body);
      bytes += body.length;
      while (bytes > maxBytes) {
        const [k, v] = entries.entries().next().value as [string, Buffer];
        entries.delete(k);
        bytes -= v.length;
      }
    },
    clear(): void {
      entries.clear();
      bytes = 0;
    },
    stats: () => ({ entries: entries.size, bytes, hits, misses }),
  };
}
export type CropCache = ReturnType<typeof createCropCache>;
