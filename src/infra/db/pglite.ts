import { PGlite, type Transaction } from '@electric-sql/pglite';
import { type Db, type Row, withHelpers } from './types.ts';

export interface PgliteOptions {
  /** Folder for the database files; null keeps it in memory (tests). */
  dataDir: string | null;
  /** A dumped data dir to start from, so tests skip migrating. */
  loadDataDir?: Blob | File;
}

const parsers = { 20: (v: string) => Number(v), 1700: (v: string) => Number(v) };

export async function createPgliteDb(opts: PgliteOptions): Promise<{ db: Db; pglite: PGlite }> {
  const pglite = await PGlite.create({
    dataDir: opts.dataDir ?? undefined,
    loadDataDir: opts.loadDataDir,
    parsers,
  });

  const run = (target: PGlite | Transaction) => async (sql: string, params?: readonly unknown[]) => {
    const res = await target.query(sql, params as unknown[] | undefined);
    return res.rows as Row[];
  };

  const exec = (target: PGlite | Transaction) => async (sql: string) => {
    await target.exec(sql);
  };

  const makeTxDb = (t: Transaction): Db => {
    const txDb: Db = withHelpers('pglite', run(t), exec(t), (fn) => fn(txDb), async () => {});
    return txDb;
  };

  const db = withHelpers(
    'pglite',
    run(pglite),
    exec(pglite),
    (fn) => pglite.transaction((t) => fn(makeTxDb(t))),
    () => pglite.close(),
  );
  return { db, pglite };
}
