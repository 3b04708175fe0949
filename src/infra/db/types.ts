export type Row = Record<string, unknown>;

/**
 * The database port. PGlite and PostgreSQL both speak it; domain code only sees this.
 * SQL is written once and must run on PostgreSQL 15 (the server) and 18 (PGlite).
 */
export interface Db {
  readonly kind: 'pglite' | 'postgres';
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  maybeOne<T = Row>(sql: string, params?: readonly unknown[]): Promise<T | null>;
  one<T = Row>(sql: string, params?: readonly unknown[]): Promise<T>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs fn in one transaction; inside a transaction it joins the outer one. */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** PostgreSQL: the connection pool's clients (GET /metrics); PGlite has no pool. */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** PGlite on files: its data dir as a gzipped tar, taken between statements (the online backup, src/ops/online-backup.ts). */
  dumpDataDir?(): Promise<Uint8Array>;
}

type QueryFn = (sql: string, params?: readonly unknown[]) => Promise<Row[]>;

/** Builds the row helpers shared by both adapters from a single query primitive. */
export function withHelpers(kind: Db['kind'], query: QueryFn, exec: Db['exec'], tx: Db['tx'], close: Db['close']): Db {
  const db: Db = {
    kind,
    query: query as Db['query'],
    async maybeOne<T>(sql: string, params?: readonly unknown[]) {
      const rows = await query(sql, params);
      return (rows[0] as T | undefined) ?? null;
    },
    async one<T>(sql: string, params?: readonly unknown[]) {
      const rows = await query(sql, params);
      if (rows.length === 0) throw new Error('Expected one row, got none');
      return rows[0] as T;
    },
    exec,
    tx,
    close,
  };
  return db;
}

/** An ILIKE/LIKE pattern matching `text` anywhere, its wildcards (`%`, `_`) and backslashes taken literally. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
