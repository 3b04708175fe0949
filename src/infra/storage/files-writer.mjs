// The files adapter's writer thread (files.ts). Plain JavaScript: a worker thread starts without
// the TypeScript loader of the main thread.
//
// Each put: temp file written and fdatasync'ed, renamed over the target, then the folder fsync'ed
// before the put is answered, so none is answered before its bytes and its entry are durable.
// Puts run concurrently (concurrent flushes share the file system's journal commits), puts into
// one folder share its fsync (group commit), and folders are made once. Here, away from the main
// thread's event loop, the many small steps of a put do not wait behind ingest and HTTP work:
// the main thread pays one message per put.
import fs from 'node:fs/promises';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

const base = workerData.base;
const noop = () => {};

/** fsync a directory so a rename or a new entry in it survives a crash (best effort where unsupported). */
async function syncDir(dir) {
  let fh;
  try {
    fh = await fs.open(dir, 'r');
    await fh.sync();
  } catch (e) {
    if (e.code !== 'EISDIR' && e.code !== 'EINVAL' && e.code !== 'EPERM') throw e;
  } finally {
    await fh?.close();
  }
}

/** A caller waits for an fsync of the folder that started after it asked (after its rename). */
const dirSyncs = new Map();
function syncDirCoalesced(dir) {
  const d = dirSyncs.get(dir);
  if (!d) return beginDirSync(dir);
  // The running fsync may have started before this caller's rename: it waits for the next one.
  d.queued ??= d.running.then(noop, noop).then(() => beginDirSync(dir));
  return d.queued;
}
function beginDirSync(dir) {
  const entry = { running: null, queued: null };
  entry.running = syncDir(dir).finally(() => {
    if (dirSyncs.get(dir) === entry) dirSyncs.delete(dir);
  });
  dirSyncs.set(dir, entry);
  return entry.running;
}

/** Folders made (or found) durable; a folder removed behind our back is made again on ENOENT. */
const madeDirs = new Set();
async function ensureDir(dir) {
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

async function writeTemp(tmp, body) {
  let fh;
  try {
    fh = await fs.open(tmp, 'wx', 0o640);
    await fh.writeFile(body);
    await fh.datasync();
    await fh.close();
    fh = undefined;
  } catch (e) {
    await fh?.close().catch(noop);
    if (fh) await fs.rm(tmp, { force: true }).catch(noop);
    throw e;
  }
}

async function put({ dir, file, tmp, body }) {
  await ensureDir(dir);
  try {
    await writeTemp(tmp, body);
  } catch (e) {
    if (e.code !== 'ENOENT' || !madeDirs.delete(dir)) throw e; // removed since we made it
    await ensureDir(dir);
    await writeTemp(tmp, body);
  }
  try {
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true }).catch(noop);
    throw e;
  }
  await syncDirCoalesced(dir);
}

parentPort.on('message', (job) => {
  const body = Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength);
  put({ ...job, body }).then(
    () => parentPort.postMessage({ id: job.id, error: null }),
    (e) => parentPort.postMessage({ id: job.id, error: { message: String(e?.message ?? e), code: e?.code } }),
  );
});
