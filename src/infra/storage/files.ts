import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { checkKey, checkRange } from './checks.ts';
import type { ObjectStorage } from './types.ts';

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);
const isMissing = (e: unknown) => MISSING.has((e as NodeJS.ErrnoException)?.code ?? '');

type WriteError = { message: string; code?: string };

/**
 * The writer thread (files-writer.mjs) with its answers matched to puts. Started on the first put,
 * held only while puts are pending; a crashed thread fails its pending puts and is started again.
 */
function writerThread(base: string) {
  let worker: Worker | null = null;
  let nextId = 0;
  const pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  function failAll(err: Error): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  }

  function start(): Worker {
    const w = new Worker(new URL('./files-writer.mjs', import.meta.url), { workerData: { base } });
    w.on('message', (a: { id: number; error: WriteError | null }) => {
      const p = pending.get(a.id);
      if (!p) return;
      pending.delete(a.id);
      if (a.error) p.reject(Object.assign(new Error(a.error.message), { code: a.error.code }));
      else p.resolve();
      if (pending.size === 0) w.unref();
    });
    w.on('error', (err) => failAll(err));
    w.on('exit', (code) => {
      if (worker === w) worker = null;
      failAll(new Error(`the storage writer thread exited (${code})`));
    });
    return w;
  }

  return {
    put(job: { dir: string; file: string; tmp: string; body: Buffer }): Promise<void> {
      worker ??= start();
      worker.ref();
      const id = nextId++;
      // A copy of just its bytes, moved rather than cloned: the caller keeps its buffer.
      const body = new Uint8Array(job.body);
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker!.postMessage({ id, dir: job.dir, file: job.file, tmp: job.tmp, body }, [body.buffer]);
      });
    },
    async close(): Promise<void> {
      const w = worker;
      worker = null;
      if (w) await w.terminate();
    },
  };
}

/**
 * Objects as files under one root folder. A put writes a temp file beside the target, fsyncs
 * it, renames it over the target and fsyncs the folder: a reader sees the old object or the
 * whole new one, and the object is on disk when put resolves. The writing happens on a thread
 * of its own (files-writer.mjs): one message per put for the main thread's event loop.
 */
export function createFileStorage(root: string): ObjectStorage {
  const base = path.resolve(root);
  const fileOf = (key: string) => {
    const file = path.resolve(base, checkKey(key));
    // checkKey already refuses traversal; this keeps the promise even if it ever changes.
    if (!file.startsWith(base + path.sep)) throw new Error(`storage key escapes the root: ${JSON.stringify(key)}`);
    return file;
  };
  const writer = writerThread(base);

  return {
    kind: 'files',

    async put(key, body, _contentType) {
      const file = fileOf(key);
      const dir = path.dirname(file);
      const tmp = path.join(dir, `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
      await writer.put({ dir, file, tmp, body });
    },

    async putFile(key, source) {
      const file = fileOf(key);
      const dir = path.dirname(file);
      const tmp = path.join(dir, `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
      await fs.mkdir(dir, { recursive: true });
      try {
        await fs.copyFile(source, tmp);
        const fh = await fs.open(tmp, 'r');
        await fh.sync();
        await fh.close();
        await fs.rename(tmp, file);
      } catch (e) {
        await fs.rm(tmp, { force: true });
        throw e;
      }
    },

    async stream(key) {
      try {
        const fh = await fs.open(fileOf(key), 'r');
        return fh.createReadStream();
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
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

    async freeSpace() {
      // The objects folder appears with the first put; before that its nearest existing parent
      // (the data dir) is on the same file system as far as anyone can know.
      for (let dir = base; ; dir = path.dirname(dir)) {
        try {
          const s = await fs.statfs(dir);
          // bavail: what an unprivileged writer (the hub) may still use, not the root reserve.
          return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
        } catch (e) {
          if (!isMissing(e) || path.dirname(dir) === dir) throw e;
        }
      }
    },

    close: () => writer.close(),
  };
}
