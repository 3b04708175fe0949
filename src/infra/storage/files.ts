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

/**
 * Objects as files under one root folder. A put writes a temp file beside the target, fsyncs
 * it, renames it over the target and fsyncs the folder: a reader sees the old object or the
 * whole new one, and the object is on disk when put resolves.
 */
export function createFileStorage(root: string): ObjectStorage {
  const base = path.resolve(root);
  const fileOf = (key: string) => {
    const file = path.resolve(base, checkKey(key));
    // checkKey already refuses traversal; this keeps the promise even if it ever changes.
    if (!file.startsWith(base + path.sep)) throw new Error(`storage key escapes the root: ${JSON.stringify(key)}`);
    return file;
  };

  async function ensureDir(dir: string): Promise<void> {
    const first = await fs.mkdir(dir, { recursive: true });
    if (first === undefined) return;
    // New folders: their entries in their parents must be durable too.
    for (let d = dir; ; d = path.dirname(d)) {
      await syncDir(path.dirname(d));
      if (d === first || d === base || path.dirname(d) === d) break;
    }
  }

  return {
    kind: 'files',

    async put(key, body, _contentType) {
      const file = fileOf(key);
      const dir = path.dirname(file);
      await ensureDir(dir);
      const tmp = path.join(dir, `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
      let fh: fs.FileHandle | undefined;
      try {
        fh = await fs.open(tmp, 'wx', 0o640);
        await fh.writeFile(body);
        await fh.sync();
        await fh.close();
        fh = undefined;
        await fs.rename(tmp, file);
      } catch (e) {
        await fh?.close().catch(() => {});
        await fs.rm(tmp, { force: true }).catch(() => {});
        throw e;
      }
      await syncDir(dir);
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
