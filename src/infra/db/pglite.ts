import { Worker } from 'node:worker_threads';
import { type Db, type RawResult, withHelpers } from './types.ts';

export interface PgliteOptions {
  /** Folder for the database files; null keeps it in memory (tests). */
  dataDir: string | null;
  /** A dumped data dir (a tar, gzipped or not) to start from, so tests skip migrating. */
  loadDataDir?: Uint8Array;
}

export interface PgliteHandle {
  db: Db;
  /** The data dir as a tar, gzipped unless asked otherwise (the test helper's migrated snapshot is not: it loads faster). */
  dump(compression?: 'gzip' | 'none'): Promise<Uint8Array>;
}

/** A PostgreSQL error as it crossed the thread: message plus its fields (code 23505 …). */
class PgliteError extends Error {
  constructor(data: Record<string, unknown>) {
    super(String(data.message));
    Object.assign(this, data);
  }
}

/**
 * The embedded database (DESIGN.md §2): PGlite, PostgreSQL compiled to WebAssembly, runs on its
 * own thread (pglite-worker.mjs). Each statement is CPU work wherever PGlite runs; on the main
 * thread it would stall MQTT ingest and HTTP for its whole duration (a third of the main thread's
 * time under ingest load). Statements and transactions cross the thread as messages; results
 * come back as structured clones (Date stays Date).
 */
export async function createPgliteDb(opts: PgliteOptions): Promise<PgliteHandle> {
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
    workerData: { dataDir: opts.dataDir, loadDataDir: opts.loadDataDir ?? null },
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let failure: Error | null = null;

  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (m: { ready?: boolean; error?: Record<string, unknown> }) => {
      if (m.ready === undefined) return;
      worker.off('message', onMessage);
      if (m.ready) resolve();
      else reject(new PgliteError(m.error ?? { message: 'the embedded database did not start' }));
    };
    worker.on('message', onMessage);
  });
  worker.on('message', (m: { id?: number; result?: unknown; error?: Record<string, unknown> }) => {
    if (m.id === undefined) return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new PgliteError(m.error));
    else p.resolve(m.result);
  });
  const fail = (err: Error) => {
    failure = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', (err) => fail(err));
  worker.on('exit', (code) => fail(new Error(`the embedded database thread stopped (exit code ${code})`)));
  await ready;

  const call = <T>(msg: Record<string, unknown>): Promise<T> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...msg, id });
    });
  };

  const run = (tx: number | null) => async (sql: string, params?: readonly unknown[]) =>
    await call<RawResult>({ op: 'query', sql, params: params ?? null, tx });
  const exec = (tx: number | null) => async (sql: string) => {
    await call({ op: 'exec', sql, tx });
  };

  const makeTxDb = (tx: number): Db => {
    // A transaction inside a transaction joins the outer one (types.ts).
    const txDb: Db = withHelpers(
      'pglite',
      run(tx),
      exec(tx),
      (fn) => fn(txDb),
      async () => {},
    );
    return txDb;
  };

  const db = withHelpers(
    'pglite',
    run(null),
    exec(null),
    async (fn) => {
      const tx = await call<number>({ op: 'begin' });
      let result;
      try {
        result = await fn(makeTxDb(tx));
      } catch (err) {
        await call({ op: 'rollback', tx }).catch(() => {});
        throw err;
      }
      await call({ op: 'commit', tx });
      return result;
    },
    async () => {
      if (failure) return;
      await call({ op: 'close' }).catch(() => {});
      await worker.terminate();
    },
  );

  return { db, dump: (compression = 'gzip') => call<Uint8Array>({ op: 'dump', compression }) };
}
