/**
 * `chorus backup` while the hub runs (issue 21), for a hub on embedded parts. PGlite is one
 * process's: only the running hub can read its database. So the command asks the hub through the
 * data dir both of them already own: it drops `backup-requests/<id>.request`; the hub (which
 * looks every half second, and says in its lock note that it does) checkpoints, dumps its data dir
 * between two statements (a snapshot PostgreSQL recovers like a stopped database) into
 * `<id>.dump`, or writes `<id>.error`. The command copies the objects after the dump: objects are
 * written before their rows and never changed, so every row in the dump finds its object (a newer
 * object without a row is harmless). No signal, no port: a command on another host or another
 * user cannot reach the hub this way, as it cannot reach its files.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Log } from '../core/log.ts';

export const REQUESTS_DIR = 'backup-requests';
const POLL_MS = 500;

/** The hub's side: answers requests until the returned stop is called (awaits a dump in progress). */
export function answerBackupRequests(opts: {
  dataDir: string;
  checkpoint: () => Promise<void>;
  dump: () => Promise<Uint8Array>;
  log: Log;
}): () => Promise<void> {
  const dir = path.join(opts.dataDir, REQUESTS_DIR);
  fs.mkdirSync(dir, { recursive: true });
  let busy: Promise<void> = Promise.resolve();
  let stopped = false;

  async function answer(id: string): Promise<void> {
    const start = performance.now();
    const out = path.join(dir, id);
    try {
      fs.rmSync(`${out}.request`);
    } catch {
      return; // taken back by the command (it timed out)
    }
    try {
      await opts.checkpoint().catch(() => {}); // shortens the recovery; the dump is consistent without it
      const bytes = await opts.dump();
      fs.writeFileSync(`${out}.dump.partial`, bytes, { mode: 0o600 });
      fs.renameSync(`${out}.dump.partial`, `${out}.dump`);
      opts.log.info(
        { component: 'backup', requestId: id, bytes: bytes.length, ms: Math.round(performance.now() - start) },
        `online backup: database dumped for chorus backup (${bytes.length} bytes)`,
      );
    } catch (err) {
      fs.writeFileSync(`${out}.error`, String((err as Error)?.message ?? err));
      opts.log.error({ component: 'backup', requestId: id, err }, 'online backup: dumping the database failed');
    }
  }

  const tick = () => {
    if (stopped) return;
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const m = /^([0-9a-f-]{36})\.request$/.exec(n);
      if (m) busy = busy.then(() => answer(m[1]));
    }
  };
  const timer = setInterval(tick, POLL_MS);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await busy;
  };
}

/** The command's side: the running hub's database dump (gzipped tar of its data dir). */
export async function dumpFromRunningHub(dataDir: string, timeoutMs = 300_000): Promise<Uint8Array> {
  const dir = path.join(dataDir, REQUESTS_DIR);
  const id = crypto.randomUUID();
  const base = path.join(dir, id);
  fs.writeFileSync(`${base}.request`, '', { mode: 0o600 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (fs.existsSync(`${base}.dump`)) return fs.readFileSync(`${base}.dump`);
      if (fs.existsSync(`${base}.error`))
        throw new Error(`the running hub could not dump its database: ${fs.readFileSync(`${base}.error`, 'utf8')}`);
      if (Date.now() > deadline) throw new Error(`the running hub did not answer the backup request within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    for (const ext of ['request', 'dump', 'error']) fs.rmSync(`${base}.${ext}`, { force: true });
  }
}
