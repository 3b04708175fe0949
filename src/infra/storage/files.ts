import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { checkKey, checkRange, type ObjectStorage } from './index.ts';

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);
const isMissing = (e: unknown) => MISSING.has((e as NodeJS.ErrnoException)?.code ?? '');

/** fsync a directory so a rename or a new entry in it survives a crash (best effort where unsupported). */
async function syncDir(dir: string): Promise<void> {
  let fh: fs.FileHandle | undefined;
  try {
    fh = await fs.open(dir, 'r');
    await fh.sync();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM') throw e;
  } finally {
    await fh?.close();
  }
}

const noop = () => {};

/**
 * Group commit of folder fsyncs: a caller waits for an fsync of the folder that started after it
 * asked (after its rename), so puts landing in one folder together share one fsync instead of
 * one each, and none resolves before its own entry is durable.
 */
function coalescedDirSync(): (dir: string) => Promise<void> {
  const dirs = new Map<string, { running: Promise<void>; queued: Promise<void> | null }>();
  function begin(dir: string): Promise<void> {
    const entry: { running: Promise<void>; queued: Promise<void> | null } = { running: Promise.resolve(), queued: null };
    entry.running = syncDir(dir).finally(() => {
      if (dirs.get(dir) === entry) dirs.delete(dir);
    });
    dirs.set(dir, entry);
    return entry.running;
  }
  return (dir) => {
    const d = dirs.get(dir);
    if (!d) return begin(dir);
    // The running fsync may have started before this caller's rename: it waits for the next one.
    return (d.queued ??= d.running.then(noop, noop).then(() => begin(dir)));
  }
}

/**
 * Objects as files under one root folder. A put writes a temp file beside the target, fsyncs
 * it, renames it over the target and fsyncs the folder: a reader sees the old object or the
 * whole new one, and the object is on disk when put resolves. Folders made once are remembered
 * (no mkdir per put) and concurrent puts into one folder share its fsync.
 */
export function createFileStorage(root: string): ObjectStorage {
  const base = path.resolve(root);
  const fileOf = (key: string) => {
    const file = path.resolve(base, checkKey(key));
    // checkKey already refuses traversal; this keeps the promise even if it ever changes.
    if (!file.startsWith(base + path.sep)) throw new Error(`storage key escapes the root: ${JSON.stringify(key)}`);
    return file;
  };
  /** Folders this process made (or found) durable; a folder removed behind our back is made again on ENOENT. */
  const madeDirs = new Set<string>();
  const syncDirCoalesced = coalescedDirSync();

  async function ensureDir(dir: string): Promise<void> {
    if (madeDirs.has(dir)) return;
    const first = await fs.mkdir(dir, { recursive: true });
    if (first !== undefined) {
      // New folders: their entries in their parents must be durable too.
      for (let d = dir; ; d = path.dirname(d)) {
        await syncDirCoalesced(path.dirname(d));
        if (d === first || d === base || path.dirname(d) === d) break;
      }
    }
    madeDirs.add(dir);
  }

  async function writeTemp(tmp: string, body: Buffer): Promise<void> {
    let fh: fs.FileHandle | undefined;
    try {
      fh = await fs.open(tmp, 'wx', 0o640);
      await fh.writeFile(body);
      await fh.datasync();
      await fh.close();
      fh = undefined;
    } catch (e) {
      await fh?.close().catch(() => {});
      if (fh) await fs.rm(tmp, { force: true }).catch(() => {});
      throw e;
    }
  }

  return {
    kind: 'files',

    async put(key, body, _contentType) {
      const file = fileOf(key);
      const dir = path.dirname(file);
      await ensureDir(dir);
      const tmp = path.join(dir, `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
      try {
        await writeTemp(tmp, body);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !madeDirs.has(dir)) throw e;
        madeDirs.delete(dir); // removed since we made it
        await ensureDir(dir);
        await writeTemp(tmp, body);
      }
      try {
        await fs.rename(tmp, file);
      } catch (e) {
        await fs.rm(tmp, { force: true }).catch(() => {});
        throw e;
      }
      await syncDirCoalesced(dir);
    },

    async get(key) {
      try {
        return await fs.readFile(fileOf(key));
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },

    async getRange(key, start, end) {
      checkRange(start, end);
      let fh: fs.FileHandle;
      try {
        fh = await fs.open(fileOf(key), 'r');
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
      try {
        const { size } = await fh.stat();
        if (start >= size) return Buffer.alloc(0);
        const length = Math.min(end, size - 1) - start + 1;
        const buf = Buffer.allocUnsafe(length);
        let done = 0;
        while (done < length) {
          const { bytesRead } = await fh.read(buf, done, length - done, start + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return done === length ? buf : buf.subarray(0, done);
      } finally {
        await fh.close();
      }
    },

    async stat(key) {
      try {
        const s = await fs.stat(fileOf(key));
        return s.isFile() ? { size: s.size } : null;
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },

    async delete(key) {
      try {
        await fs.unlink(fileOf(key));
      } catch (e) {
        if (!isMissing(e)) throw e;
      }
    },

    async deleteMany(keys) {
      const files = keys.map(fileOf); // refuse a bad key before deleting anything
      for (let i = 0; i < files.length; i += 32) {
        await Promise.all(
          files.slice(i, i + 32).map((f) =>
            fs.unlink(f).catch((e) => {
              if (!isMissing(e)) throw e;
            }),
          ),
        );
      }
    },

    async close() {},
  };
}
